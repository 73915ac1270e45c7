"""GRAMMAR answers are the SQL engine's full distinct answer sets.

The oracle runs every filled query again through the bare driver, with no limit, and compares sets:
over Chinook (tests/data/chinook: the music store's catalogue, customers, staff and invoices), the
shipped demo database, and PostgreSQL and MariaDB copies of the demo database.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from sql_servers import Oracle, copy_sqlite, mariadb_scratch, postgres_scratch, sqlite_oracle

from langrag_eval.errors import ConfigError
from langrag_eval.grammar import (
    ReferenceGrader, build_dataset, demo_database, aevaluate_answers, load_templates,
)
from langrag_eval.grammar.dataset import GrammarDataset, _json_value
from langrag_eval.grammar.demo import demo_templates_path
from langrag_eval.pipelines import AgentAnswer
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel

CHINOOK = Path(__file__).resolve().parents[1] / "data" / "chinook" / "Chinook_Sqlite_subset.sqlite"
CHINOOK_TEMPLATES = Path(__file__).parent / "data" / "chinook_templates.json"


def keep_everything(db, templates_path: Path) -> GrammarDataset:
    return build_dataset(db, load_templates(templates_path), on_no_answer="flag", on_multiple="flag",
                         on_null="unknown", max_answer_rows=None, max_combinations=100_000)


def assert_answer_sets_match(data: GrammarDataset, oracle: Oracle) -> Counter:
    """Every logic's stored answer set equals the engine's full distinct result; its flag follows
    from that set alone. Returns how many logics fell under each flag."""
    flags: Counter = Counter()
    logics = {q.logic_id: q for q in data.queries}
    assert logics, "no query was generated"
    for q in logics.values():
        rows = oracle(q.sql, q.params)
        truth = {tuple(_json_value(v) for v in row) for row in rows}
        stored = [tuple(r) for r in q.answer_rows or []]
        assert len(stored) == len(set(stored)), f"{q.id}: repeated answer rows {stored}"
        assert set(stored) == truth, f"{q.id}: stored {stored}, engine {sorted(truth, key=repr)}"
        expected = (None if len(truth) == 1 and any(v is not None for v in next(iter(truth)))
                    else "no_answer" if not truth
                    else "multiple_answers" if len(truth) > 1 else "null_answer")
        assert q.flag == expected, q.id
        flags[q.flag] += 1
    reports = {r.template_id: r for r in data.reports}
    for r in reports.values():
        assert not r.errors, r.errors
        assert r.logics == r.combinations and r.too_many_answers == 0   # nothing dropped, nothing capped
    assert sum(r.no_answer for r in reports.values()) == flags["no_answer"]
    assert sum(r.multiple_answers for r in reports.values()) == flags["multiple_answers"]
    assert sum(r.null_answer for r in reports.values()) == flags["null_answer"]
    return flags


@pytest.fixture(scope="module")
def chinook() -> Path:
    return CHINOOK


@pytest.mark.slow
def test_every_chinook_question_has_the_engines_answer_set(chinook: Path) -> None:
    data = keep_everything(chinook, CHINOOK_TEMPLATES)
    flags = assert_answer_sets_match(data, sqlite_oracle(chinook))
    assert len({q.logic_id for q in data.queries}) > 5000
    assert all(flags[f] > 10 for f in (None, "no_answer", "multiple_answers", "null_answer")), flags
    ipanema = next(q for q in data.queries if q.template_id == "track-composer"
                   and q.params["p0"] == "Garota De Ipanema")
    assert sorted(map(repr, ipanema.answer_rows)) == ["['Vários']", "[None]"]
    assert ipanema.flag == "multiple_answers"            # NULL is an answer value: {NULL, 'Vários'}
    maiden = next(q for q in data.queries if q.template_id == "artist-albums" and q.params["p0"] == "Iron Maiden")
    assert len(maiden.answer_rows) == 21


def test_chinook_policies_count_what_they_drop(chinook: Path) -> None:
    data = build_dataset(chinook, load_templates(CHINOOK_TEMPLATES))        # the defaults: drop, cap 20
    reports = {r.template_id: r for r in data.reports}
    kept = {q.logic_id: q for q in data.queries}
    assert all(q.flag is None and len(q.answer_rows) == 1 and q.answer_rows[0] != [None] for q in kept.values())
    albums = reports["artist-albums"]
    assert albums.too_many_answers == 1                  # Iron Maiden: 21 albums, never stored as 20
    assert not any(q.params["p0"] == "Iron Maiden" for q in kept.values() if q.template_id == "artist-albums")
    for r in reports.values():
        assert r.logics + r.no_answer + r.multiple_answers + r.null_answer + r.too_many_answers == r.combinations
    assert reports["customer-company"].null_answer > 30
    assert reports["track-composer"].multiple_answers > 0
    assert not any(q.params["p0"] == "Garota De Ipanema" for q in kept.values() if q.template_id == "track-composer")

    unknown = build_dataset(chinook, load_templates(CHINOOK_TEMPLATES), on_null="unknown", null_text="n/a")
    nulls = [q for q in unknown.queries if q.flag == "null_answer"]
    assert len({q.logic_id for q in nulls}) == sum(r.null_answer for r in unknown.reports) > 30
    assert all(q.answer == "n/a" and q.answer_rows == [[None]] for q in nulls)


def test_the_demo_databases_questions_have_the_engines_answer_sets() -> None:
    path = demo_database()
    flags = assert_answer_sets_match(keep_everything(path, demo_templates_path()), sqlite_oracle(path))
    assert flags[None] > 0


@pytest.mark.parametrize("scratch", [postgres_scratch, mariadb_scratch], ids=["postgresql", "mariadb"])
def test_server_copies_of_the_demo_database_have_the_engines_answer_sets(scratch) -> None:
    with scratch() as s:
        copy_sqlite(demo_database(), s.admin)
        on_server = keep_everything(s.url, demo_templates_path())
        flags = assert_answer_sets_match(on_server, s.oracle)
        assert flags[None] > 0
    on_sqlite = keep_everything(demo_database(), demo_templates_path())
    # The same questions with the same answers as the SQLite original (the copy is faithful).
    assert ({(q.id, q.answer, q.flag) for q in on_server.queries}
            == {(q.id, q.answer, q.flag) for q in on_sqlite.queries})


def test_bad_policies_and_caps_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="on_null"):
        build_dataset(demo_database(), [], on_null="keep")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_answer_rows"):
        build_dataset(demo_database(), [], max_answer_rows=0)


async def test_null_answers_kept_as_unknown_are_graded_other_flags_are_not() -> None:
    templates = [t for t in load_templates(CHINOOK_TEMPLATES).templates if t.id in ("customer-company", "artist-albums")]
    data = build_dataset(CHINOOK, templates, on_null="unknown", on_multiple="flag", max_answer_rows=None)
    nulls = [q for q in data.queries if q.flag == "null_answer"]
    multiple = [q for q in data.queries if q.flag == "multiple_answers"]
    assert nulls and multiple
    answers = [AgentAnswer(id=q.id, question=q.question, agent="rag", answer="That is unknown.") for q in data.queries]
    grader = ReferenceGrader(Judge(ScriptedModel(lambda p: "Judgement: [[Correct]]")))
    summary = await aevaluate_answers(data.queries, answers, grader)
    assert summary["agents"]["rag"]["items"] == len(data.queries) - len(multiple)
    assert any(f"{len(multiple)} flagged quer" in p for p in summary["problems"])
