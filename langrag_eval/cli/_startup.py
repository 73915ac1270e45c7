"""A command's start-up with the cyclic garbage collector paused.

Loading a judge's SDK and the grading stack makes a couple of hundred thousand objects that live as
long as the process. While they load, the collector runs hundreds of times and walks them again on
each pass: about a fourteenth of a 300-answer ``grade``'s CPU with the ``openai`` judge (0.10 s of 1.4 s,
counted with ``gc.callbacks``). :func:`loading` pauses it while a block loads; in the program
itself (``langrag-eval ...``, not ``main([...])`` called from another program) it then freezes
what was made (``gc.freeze``), so no later pass walks it again. Refcounting frees what is not in a
cycle meanwhile, and each pause is bounded by the loading it wraps.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["loading", "as_program"]

# True while the command line runs as the program: its objects are the process's, safe to freeze.
# A caller's own objects (a test run, a notebook calling main([...])) are not frozen.
_PROGRAM = [False]


@contextmanager
def as_program(program: bool) -> Iterator[None]:
    before, _PROGRAM[0] = _PROGRAM[0], program
    try:
        yield
    finally:
        _PROGRAM[0] = before


@contextmanager
def loading() -> Iterator[None]:
    """The block with the collector paused, then what it made frozen when this is the program. A
    collector already off (nested, or turned off by the program embedding this) is left off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if _PROGRAM[0]:
            gc.freeze()
        gc.enable()
