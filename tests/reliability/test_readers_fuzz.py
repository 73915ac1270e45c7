"""Every file reader a command uses, fed generated files: well-formed JSON of the wrong shapes,
lines with NaN, huge integers, lone surrogates, deep nesting, truncation, bytes that are not UTF-8,
CSV with stray quotes and separators. A reader may return rows or refuse with a LangragError (one
line naming the file); any other exception is a traceback a user would see, and fails the test.
Then the same kind of files through the command line itself."""

from __future__ import annotations

import json
import string
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.cli import main
from langrag_eval.errors import LangragError

FIELDS = ["id", "qid", "question", "query", "answer", "label", "response", "sources", "documents", "text",
          "agent", "did", "document", "evaluator", "verdict", "score", "h1", "subject", "templates", "sql",
          "texts", "logic_id", "answers", "metadata", "title"]
SPECIAL = ["NaN", "-Infinity", "Infinity", "9" * 4400, "1e999", "-0", '"\\ud800"', '"\\udfff x"', "[" * 3000,
           '"\\u0000"', "true", "null", '""', '"   "', "[]", "{}"]

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False),
                      st.text(max_size=20))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=5)), max_leaves=12)


@st.composite
def jsonl_text(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["full", "full", "object", "object", "special", "value", "cut", "bytes"]))
        if kind == "full":  # every field a reader may look for, so rows get past the column checks
            obj = {f: draw(st.one_of(st.text(max_size=15), json_value)) for f in FIELDS}
            lines.append(json.dumps(obj).encode())
        elif kind == "object":
            obj = draw(st.dictionaries(st.sampled_from(FIELDS), json_value, max_size=8))
            lines.append(json.dumps(obj).encode())
        elif kind == "special":  # a raw token where a value belongs: not producible by json.dumps
            field, token = draw(st.sampled_from(FIELDS)), draw(st.sampled_from(SPECIAL))
            lines.append(f'{{"{field}": {token}, "id": "x"}}'.encode())
        elif kind == "value":
            lines.append(json.dumps(draw(json_value)).encode())
        elif kind == "cut":
            full = json.dumps(draw(st.dictionaries(st.sampled_from(FIELDS), json_value, min_size=1)))
            lines.append(full[: draw(st.integers(0, len(full)))].encode())
        else:
            lines.append(draw(st.binary(max_size=30)))
    return b"\n".join(lines) + draw(st.sampled_from([b"", b"\n", b"\r\n"]))


@st.composite
def csv_text(draw: st.DrawFn) -> bytes:
    header = draw(st.one_of(st.lists(st.sampled_from(FIELDS), max_size=6), st.just(FIELDS), st.just(FIELDS)))
    cell = st.one_of(st.text(alphabet=string.printable + "éü中\u2028\ufeff", max_size=12),
                     st.sampled_from(['"', '""', "a,b", "\n", "NaN", "9" * 4400, "-1", "3", "5"]))
    rows = draw(st.lists(st.lists(cell, max_size=len(header) + 1), max_size=5))
    text = "\n".join([",".join(header)] + [",".join(r) for r in rows])
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data += draw(st.binary(max_size=10))
    return data


def _readers() -> dict[str, tuple[str, Callable[[Path], Any]]]:
    from langrag_eval.grading import read_grading_file
    from langrag_eval.grading.io import read_examples, read_scores
    from langrag_eval.grammar import read_dataset
    from langrag_eval.grammar.io import read_verdicts
    from langrag_eval.grammar.templates import load_templates
    from langrag_eval.files.tables import read_table
    from langrag_eval.pipelines import read_answers, read_queries
    from langrag_eval.retrieval.ingest import load_path
    from langrag_eval.synth.passages import load_corpus
    from langrag_eval.testing import resolve
    from langrag_eval.thelma.io import read_samples
    from langrag_eval.tournament import load_answers_jsonl, load_ragelo_csv

    return {
        "table.jsonl": (".jsonl", read_table),
        "table.csv": (".csv", read_table),
        "grading.jsonl": (".jsonl", read_grading_file),
        "grading.csv": (".csv", read_grading_file),
        "thelma.jsonl": (".jsonl", read_samples),
        "thelma.csv": (".csv", read_samples),
        "answers": (".jsonl", lambda p: read_answers(p, errors=[])),
        "answers-strict": (".jsonl", read_answers),
        "queries": (".jsonl", read_queries),
        "tournament.jsonl": (".jsonl", load_answers_jsonl),
        "ragelo.csv": (".csv", lambda p: load_ragelo_csv(p, p, p)),
        "grammar-dataset": (".jsonl", read_dataset),
        "grammar-templates": (".json", load_templates),
        "grammar-verdicts": (".jsonl", read_verdicts),
        "scores.jsonl": (".jsonl", read_scores),
        "scores.csv": (".csv", read_scores),
        "examples.json": (".json", read_examples),
        "examples.jsonl": (".jsonl", read_examples),
        "ingest": (".jsonl", load_path),
        "synth-corpus.jsonl": (".jsonl", load_corpus),
        "synth-corpus.json": (".json", load_corpus),
        "scripted-judge": (".json", lambda p: resolve(str(p))),
    }


READERS = _readers()
TRIED: Counter[str] = Counter()
REFUSED: Counter[str] = Counter()


def _content(suffix: str) -> st.SearchStrategy[bytes]:
    if suffix == ".csv":
        return csv_text()
    if suffix == ".json":
        return st.one_of(json_value.map(lambda v: json.dumps(v).encode()),
                         st.sampled_from(SPECIAL).map(str.encode), jsonl_text())
    return jsonl_text()


@pytest.mark.parametrize("name", sorted(READERS))
def test_reader_never_raises_anything_but_a_clear_error(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    suffix, reader = READERS[name]
    folder = tmp_path_factory.mktemp(name.replace(".", "-"))

    @settings(max_examples=200, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=_content(suffix))
    def check(data: bytes) -> None:
        path = folder / f"input{suffix}"
        path.write_bytes(data)
        TRIED[name] += 1
        try:
            reader(path)
        except LangragError as exc:
            REFUSED[name] += 1
            message = str(exc)
            assert message.strip(), "an error must say what is wrong"

    for token in SPECIAL:  # the reported cases, always tried, in both shapes
        for data in (f'{{"id": "x", "question": {token}, "text": {token}}}\n'.encode(), token.encode()):
            check.hypothesis.inner_test(data)  # type: ignore[attr-defined]
    check()
    assert TRIED[name] >= 200
    print(f"\n{name}: {TRIED[name]} files, {REFUSED[name]} refused with a one-line error, 0 tracebacks")


# ---- through the command line -------------------------------------------------------------------

def _commands(tmp: Path) -> dict[str, Callable[[Path], list[str]]]:
    judge = tmp / "judge.json"
    judge.write_text(json.dumps({"": "Score: [[4]], Reason: [[ok]]"}), encoding="utf-8")
    common = ["--judge", f"scripted:{judge}", "--store", str(tmp / "runs.sqlite")]
    return {
        "grade": lambda p: ["grade", str(p), *common, "--out", str(tmp / "g.out.jsonl")],
        "thelma": lambda p: ["thelma", str(p), *common, "--metrics", "gr", "--out", str(tmp / "t.out.jsonl")],
        "tournament": lambda p: ["tournament", "--answers", str(p), *common, "--tournaments", "2",
                                 "--bootstrap", "0"],
        "agreement": lambda p: ["agreement", str(p), str(p), "--score-col", "score"],
        "prices": lambda p: ["grade", str(tmp / "ok.jsonl"), *common, "--prices", str(p),
                             "--out", str(tmp / "p.out.jsonl")],
    }


@pytest.mark.parametrize("command", ["grade", "thelma", "tournament", "agreement", "prices"])
def test_commands_end_with_status_0_or_2_and_one_line(command: str, tmp_path_factory: pytest.TempPathFactory,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    tmp = tmp_path_factory.mktemp(command)
    (tmp / "ok.jsonl").write_text(json.dumps({"id": "1", "question": "q", "answer": "a", "label": "l"}) + "\n")
    argv = _commands(tmp)[command]
    suffix = ".json" if command == "prices" else ".jsonl"

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(data=_content(suffix))
    def check(data: bytes) -> None:
        path = tmp / f"input{suffix}"
        path.write_bytes(data)
        code = main(argv(path))  # anything but a LangragError propagates and fails the test
        err = capsys.readouterr().err
        assert code in (0, 2)
        if code == 2:
            errors = [line for line in err.splitlines() if "error:" in line]
            assert len(errors) == 1, err

    check()
