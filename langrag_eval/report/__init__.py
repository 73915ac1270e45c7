"""The self-contained HTML report of a run (``langrag-eval report RUN``)."""

from .build import SECTIONS, build_report, write_report

__all__ = ["build_report", "write_report", "SECTIONS"]
