"""A ``--store`` naming a scheme the package does not know is refused in one line; nothing is made
at a path spelled like the URL."""

from __future__ import annotations

import pytest

from langrag_eval.cli import main


@pytest.mark.parametrize("spec", ["mongodb://x/y", "redis://:pw-Secret9@h/0", "mysql://root@db/test"])
def test_an_unknown_store_scheme_is_refused_in_one_line(tmp_path, monkeypatch, capsys, spec: str) -> None:
    monkeypatch.chdir(tmp_path)
    qa = tmp_path / "qa.csv"
    qa.write_text("id,question,answer,label\nq1,Q?,A,L\n", encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text('["Score: [[4]], Reason: [[fine]]"]', encoding="utf-8")
    code = main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", spec])
    err = capsys.readouterr().err
    assert code == 2 and "unknown store scheme" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "pw-Secret9" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judge.json", "qa.csv"]
