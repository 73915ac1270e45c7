"""Checks on the files a command will write, made before it spends any model call: a path that
names a folder, or whose folder cannot be made, is a one-line error at the start instead of a
traceback after the work is done."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError

__all__ = ["output_file"]


def output_file(path: str | Path, option: str) -> Path:
    """``path`` ready to be written: not a folder, its parent folder made.

    >>> import tempfile
    >>> output_file(tempfile.mkdtemp(), "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.errors.ConfigError: --out ...: is a directory; give a file name
    """
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{option} {p}: is a directory; give a file name")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{option} {p}: cannot create its folder {p.parent} ({exc.strerror})") from None
    return p
