"""Plugin ids are namespaced by the distribution that declares them: two packages that both name an
evaluator ``citations`` get two ids, neither shadows a built-in (``vrag``), and two distributions
claiming one explicit ``namespace/name`` are refused naming both. The packages are ``.dist-info``
folders written into ``tmp_path`` as pip would write them; ``importlib.metadata`` finds them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from langrag_eval.errors import ConfigError
from langrag_eval.run.plugins import EVALUATORS, evaluator_ids, load_evaluator, plugin_entries
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel


def _dist(site: Path, name: str, entries: str) -> None:
    info = site / f"{re.sub(r'[-_.]+', '_', name)}-1.0.dist-info"   # the folder name as pip writes it
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{EVALUATORS}]\n{entries}\n", encoding="utf-8")


def test_the_same_name_in_two_packages_is_two_ids_and_no_built_in_is_shadowed(tmp_path: Path,
                                                                                monkeypatch) -> None:
    _dist(tmp_path, "pkg-a", "citations = langrag_eval.grading:VragGrader\nvrag = langrag_eval.grading:VragGrader")
    _dist(tmp_path, "Pkg.B", "citations = langrag_eval.grammar.grading:ReferenceGrader")
    monkeypatch.syspath_prepend(str(tmp_path))
    ids = evaluator_ids()
    assert {"pkg_a/citations", "pkg_a/vrag", "pkg_b/citations"} <= set(ids)
    assert ids[:3] == ["vrag", "thelma", "grammar"]      # the built-ins keep their bare ids
    judge = Judge(ScriptedModel(["Score: [[5]], Reason: [[Right.]]"]))
    assert type(load_evaluator("pkg_b/citations", judge)).__name__ == "ReferenceGrader"
    assert type(load_evaluator("pkg_a/citations", judge)).__name__ == "VragGrader"


def test_two_packages_claiming_one_id_are_refused_naming_both(tmp_path: Path, monkeypatch) -> None:
    _dist(tmp_path, "pkg-a", "shared/citations = langrag_eval.grading:VragGrader")
    _dist(tmp_path, "pkg-b", "shared/citations = langrag_eval.grammar.grading:ReferenceGrader")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=r"claim .*'shared/citations'.*VragGrader and .*ReferenceGrader"
                                          r"|claim .*'shared/citations'.*ReferenceGrader and .*VragGrader"):
        plugin_entries(EVALUATORS)
