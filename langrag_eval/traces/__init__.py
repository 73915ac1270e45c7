"""Production traces read into samples: OpenTelemetry exports with the OpenInference or GenAI
conventions (:mod:`.otlp`, :mod:`.openinference`), LangSmith run exports (:mod:`.langsmith`) and
Langfuse trace exports (:mod:`.langfuse`), by live capture's rule (:mod:`.formats` tells them apart); grouped into time windows for monitoring (:mod:`.windows`)."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .otlp import Span, Trace, read_traces, trace_files
    from .langsmith import is_langsmith_export, read_run_samples, read_runs, sample_of_runs
    from .openinference import sample_of_trace, span_kind
    from .langfuse import read_langfuse_samples, read_langfuse_traces, sample_of_observations
    from .formats import export_format, read_export_samples

_LAZY = {
    "Span": ".otlp",
    "Trace": ".otlp",
    "read_traces": ".otlp",
    "trace_files": ".otlp",
    "sample_of_trace": ".openinference",
    "span_kind": ".openinference",
    "is_langsmith_export": ".langsmith",
    "read_run_samples": ".langsmith",
    "read_runs": ".langsmith",
    "sample_of_runs": ".langsmith",
    "read_langfuse_samples": ".langfuse",
    "read_langfuse_traces": ".langfuse",
    "sample_of_observations": ".langfuse",
    "export_format": ".formats",
    "read_export_samples": ".formats",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
