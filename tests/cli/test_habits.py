"""The command line's habits of the ecosystem: ``--version``, and "did you mean" for a mistyped
command, subcommand or option (argparse's own refusal, exit status 2, with the nearest name)."""

from __future__ import annotations

import pytest

import langrag_eval
from langrag_eval.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"langrag-eval {langrag_eval.__version__}"


@pytest.mark.parametrize("argv, suggestion", [
    (["grdae", "qa.csv"], "(did you mean 'grade'?)"),
    (["tournamnet"], "(did you mean 'tournament'?)"),
    (["judge", "adit"], "(did you mean 'audit'?)"),
    (["grade", "qa.csv", "--judeg", "local"], "(did you mean --judge?)"),
    (["thelma", "x.jsonl", "--concurency", "3"], "(did you mean --concurrency?)"),
])
def test_a_mistyped_name_is_refused_with_the_nearest_one(argv: list[str], suggestion: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(suggestion), last


def test_a_name_far_from_any_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["grade", "qa.csv", "--zzzzzz"])
    assert "did you mean" not in capsys.readouterr().err
