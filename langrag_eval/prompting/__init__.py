"""The untrusted-text boundary: prompt files and templates (:mod:`.templates`), delimiters around
graded text (:mod:`.delimiters`), quoting and echo detection (:mod:`.quoting`, :mod:`.echoes`), and
fitting a prompt into a model's window (:mod:`.fit`). Names are imported on first use."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .decoding import canonical_digits, decoded_variants
    from .templates import PromptTemplate, as_template, from_format_string, load_prompt, override_template, prompt_names, prompts_root
    from .delimiters import QUOTE_TAGS, fold, neutralise_tags
    from .quoting import find_json_objects, keys_in_spans, line_start, loads_strict, mask_quoted, own_json_objects, read_verdict, repeated_keys, single_verdict, tag_blocks
    from .echoes import ECHO_MIN, Untrusted, current_reading, echo_spans, echoed_tokens, mask_echoes, reading, untrusted_strings
    from .fit import MARKER, fit_prompt, leaf_blocks

_LAZY = {
    "canonical_digits": ".decoding",
    "decoded_variants": ".decoding",
    "PromptTemplate": ".templates",
    "as_template": ".templates",
    "from_format_string": ".templates",
    "load_prompt": ".templates",
    "override_template": ".templates",
    "prompt_names": ".templates",
    "prompts_root": ".templates",
    "QUOTE_TAGS": ".delimiters",
    "fold": ".delimiters",
    "neutralise_tags": ".delimiters",
    "find_json_objects": ".quoting",
    "keys_in_spans": ".quoting",
    "line_start": ".quoting",
    "loads_strict": ".quoting",
    "mask_quoted": ".quoting",
    "own_json_objects": ".quoting",
    "read_verdict": ".quoting",
    "repeated_keys": ".quoting",
    "single_verdict": ".quoting",
    "tag_blocks": ".quoting",
    "ECHO_MIN": ".echoes",
    "Untrusted": ".echoes",
    "current_reading": ".echoes",
    "echo_spans": ".echoes",
    "echoed_tokens": ".echoes",
    "mask_echoes": ".echoes",
    "reading": ".echoes",
    "untrusted_strings": ".echoes",
    "MARKER": ".fit",
    "fit_prompt": ".fit",
    "leaf_blocks": ".fit",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
