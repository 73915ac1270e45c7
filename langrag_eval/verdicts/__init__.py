"""Reading a judge's reply into a verdict: rubric scores (:mod:`.scores`), pairwise, binary, JSON,
tagged and free-text formats (:mod:`.formats`). Each reader sets aside what copies graded text and
refuses an ambiguous reply; names are imported on first use."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .formats import AmbiguousVerdictError, BinaryFormat, JsonFormat, PairwiseFormat, ScoreFormat, ScoreVerdict, TagFormat, TextFormat, VerdictFormat, find_json_objects, mask_quoted, single_verdict

_LAZY = {
    "AmbiguousVerdictError": ".formats",
    "BinaryFormat": ".formats",
    "JsonFormat": ".formats",
    "PairwiseFormat": ".formats",
    "ScoreFormat": ".formats",
    "ScoreVerdict": ".formats",
    "TagFormat": ".formats",
    "TextFormat": ".formats",
    "VerdictFormat": ".formats",
    "find_json_objects": ".formats",
    "mask_quoted": ".formats",
    "single_verdict": ".formats",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
