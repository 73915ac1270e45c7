"""Test doubles and contract tests, shipped for users' own tests too.

- :class:`ScriptedModel`: the one scripted model, a deterministic :class:`~langrag_eval.model.ChatModel`
  that replies from a list, a mapping or a function, adds latency, injects failures at given rates
  and records what it was sent. ``--judge scripted:FILE`` builds one from a JSON file (:func:`resolve`).
- Reply scripts to drive it: :func:`overlap_reply` answers every prompt the package ships, by word
  overlap (the cookbooks' and the quickstart's offline judge); :class:`ThelmaScript` answers THELMA's
  prompts from truth tables, and :func:`synthetic_dataset` builds samples with such a script.
- :class:`ChatModelContract`: the checks every ``ChatModel`` adapter must pass, to subclass in a test.
- :func:`assert_no_regression`: the regression gate as a test assertion.

>>> import asyncio
>>> from langrag_eval.model import GenerationParams
>>> from langrag_eval.testing import overlap_model
>>> m = overlap_model()
>>> asyncio.run(m.generate("<question>\\nPrice?\\n</question>\\n<label>\\n9 euros\\n</label>\\n"
...                        "<answer>\\n9 euros\\n</answer>", GenerationParams())).text[:12]
'Score: [[5]]'
>>> len(m.prompts)
1
"""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .contract import ChatModelContract, ProviderError
    from .overlap import overlap, overlap_model, overlap_reply, words
    from .regression import assert_no_regression
    from .scripted import MALFORMED, ScriptedModel, resolve
    from .thelma import ThelmaScript, blocks, synthetic_dataset

# Imported on first use: ``--judge scripted:FILE`` loads the scripted model alone, not the THELMA
# scripts and their statistics.
_LAZY = {".contract": ("ChatModelContract", "ProviderError"),
         ".overlap": ("overlap", "overlap_model", "overlap_reply", "words"),
         ".regression": ("assert_no_regression",),
         ".scripted": ("MALFORMED", "ScriptedModel", "resolve"),
         ".thelma": ("ThelmaScript", "blocks", "synthetic_dataset")}

__all__ = [
    "MALFORMED",
    "ChatModelContract",
    "ProviderError",
    "ScriptedModel",
    "ThelmaScript",
    "assert_no_regression",
    "blocks",
    "overlap",
    "overlap_model",
    "overlap_reply",
    "resolve",
    "synthetic_dataset",
    "words",
]

__getattr__ = lazy_getattr(__name__, {n: m for m, names in _LAZY.items() for n in names}, globals())
