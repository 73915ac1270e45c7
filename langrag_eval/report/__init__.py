"""The self-contained HTML report of a run (``langrag-eval report RUN``).

The builder is imported on first use: a command that only stores its items for the report
(:mod:`langrag_eval.report.items`) does not load the report's statistics."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .build import SECTIONS, build_report, write_report
    from .sections import SectionView, register_section

__all__ = ["build_report", "write_report", "SECTIONS", "SectionView", "register_section"]

__getattr__ = lazy_getattr(__name__, {**{name: ".build" for name in ("build_report", "write_report", "SECTIONS")},
                                      "SectionView": ".sections", "register_section": ".sections"}, globals())
