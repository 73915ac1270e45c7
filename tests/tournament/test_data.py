"""Bad input: clear messages naming file, line and field; the tournament runs on what is valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tournament_helpers import marker_judge

from langrag_eval.errors import DataError
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.tournament import (
    TournamentConfig, TournamentData, load_answers_jsonl, load_ragelo_csv, arun_tournament,
)


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def csv_files(tmp_path: Path) -> tuple[str, str, str]:
    q = write(tmp_path / "queries.csv", "qid,query\nq1,first?\nq2,second?\nq1,again?\n")
    d = write(tmp_path / "documents.csv", "qid,did,document\nq1,d1,text rel=2\nq1,d1,text rel=2\n"
              "q7,d9,ghost\nq2,d2,other rel=1\n")
    a = write(tmp_path / "answers.csv", "qid,agent,answer\nq1,x,ans quality=2\nq1,y,ans quality=1\n"
              "q2,x,ans quality=1\nq2,y,\nq5,x,who\nq1,x,second copy quality=0\n")
    return q, d, a


def test_ragelo_csv_problems_name_file_line_field(csv_files) -> None:
    q, d, a = csv_files
    data = load_ragelo_csv(q, d, a)
    messages = [p.message for p in data.problems]
    assert f'{q}:4: field "qid": query \'q1\' appears again' in messages[0]
    assert any(m.startswith(f'{d}:3: field "did"') for m in messages)             # duplicate document row
    assert any(m.startswith(f'{d}:4: field "qid": query \'q7\' is not in') for m in messages)
    assert any(m.startswith(f'{a}:5: field "answer": agent \'y\' gave an empty answer') for m in messages)
    assert any(m.startswith(f'{a}:6: field "qid": query \'q5\'') for m in messages)
    assert any(m.startswith(f'{a}:7: field "agent": a second answer') for m in messages)
    assert data.answers["q1"]["x"].answer == "ans quality=2"                       # the first row is kept
    assert not data.attributed and [x.id for x in data.documents("q1", "y")] == ["d1"]


def test_missing_column_raises_with_file_and_line(tmp_path: Path) -> None:
    q = write(tmp_path / "q.csv", "id,text\n1,x\n")
    with pytest.raises(DataError, match=r'q\.csv:1: missing column\(s\) qid, query'):
        load_ragelo_csv(q, None, q)


async def test_tournament_runs_on_valid_rows_and_summary_lists_what_was_left_out(csv_files) -> None:
    data = load_ragelo_csv(*csv_files)
    result = await arun_tournament(data, Judge(ScriptedModel(marker_judge)),
                                  TournamentConfig(tournaments=10, n_boot=10))
    s = result.summary
    assert s["games"]["played"] == 1 and s["games"]["skipped_missing_answer"] == 1
    assert s["left_out"]["counts"] == {"duplicate": 3, "unknown_qid": 2, "empty_answer": 1, "missing_answer": 1}
    assert s["ranking"][0]["agent"] == "x"
    assert s["retrieval"]["per_agent"] == {}            # no agent column: no per-agent MRR


def test_answers_jsonl_bad_lines(tmp_path: Path) -> None:
    good = {"qid": "q1", "query": "?", "agent": "x", "answer": "a", "documents": [{"id": "d", "text": "t"}]}
    lines = [json.dumps(good), "{not json", json.dumps({**good, "agent": "y", "answer": ""}),
             json.dumps(good), json.dumps({**good, "agent": "z", "documents": 5})]
    path = write(tmp_path / "run.jsonl", "\n".join(lines) + "\n")
    data = load_answers_jsonl(path)
    kinds = sorted(p.kind for p in data.problems)
    assert kinds == ["bad_row", "bad_row", "duplicate", "empty_answer", "single_agent"]
    assert any(p.message.startswith(f"{path}:2:") for p in data.problems)
    assert any(p.message.startswith(f'{path}:3: field "answer"') for p in data.problems)
    assert data.agents == ["x"]


async def test_single_agent_still_judges_documents_and_pointwise() -> None:
    data = TournamentData.from_records([{"qid": "q1", "query": "?", "agent": "solo", "answer": "quality=2",
                                         "documents": [{"id": "d1", "text": "rel=2"}]}])
    result = await arun_tournament(data, Judge(ScriptedModel(marker_judge)), TournamentConfig(pointwise=True))
    s = result.summary
    assert s["ranking"] == [] and s["games"]["played"] == 0
    assert s["left_out"]["counts"] == {"single_agent": 1}
    assert s["retrieval"]["per_agent"]["solo"]["mrr"]["very"] == 1.0
    assert s["pointwise"]["means"]["solo"]["relevance"] == 2


def test_documents_with_agent_and_rank_columns_are_ranked_per_agent(tmp_path: Path) -> None:
    q = write(tmp_path / "q.csv", "qid,query\nq1,?\n")
    d = write(tmp_path / "d.csv", "qid,did,document,agent,rank\nq1,b,B,x,2\nq1,a,A,x,1\nq1,b,B,y,1\n"
              "q1,c,C,y,zz\n")
    a = write(tmp_path / "a.csv", "qid,agent,answer\nq1,x,1\nq1,y,2\n")
    data = load_ragelo_csv(q, d, a)
    assert data.attributed
    assert [x.id for x in data.documents("q1", "x")] == ["a", "b"]
    assert [p.message for p in data.problems] == [f'{d}:5: field "rank": \'zz\' is not a number; file order used']
