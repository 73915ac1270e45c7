"""Checks on the files a command will write, made before it spends any model call: a path that
names a folder, an input of the command, or a place that cannot be written is a one-line error at
the start instead of a traceback (or a lost input) after the work is done."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..files import check_output

__all__ = ["output_file"]


def output_file(path: str | Path, option: str, *, inputs: Iterable[str | Path | None] = ()) -> Path:
    """``path`` ready to be written: not a folder, not one of ``inputs``, its parent folder made.

    >>> import tempfile
    >>> output_file(tempfile.mkdtemp(), "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.errors.ConfigError: --out ...: is a directory; give a file name
    """
    return check_output(path, option, inputs=inputs)
