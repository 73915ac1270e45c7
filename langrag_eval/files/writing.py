"""Writing files safely: a result file is whole or absent, never half-written or written over the
input it was made from.

:func:`atomic_write` writes beside the target and renames, so a run killed while writing leaves the
old file (or none) in place, and a reader never sees half a file. :func:`check_output` refuses an
output that is one of the command's inputs, a folder, or not writable, before any work is done.

>>> import pathlib, tempfile
>>> target = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
>>> with atomic_write(target) as fh:
...     _ = fh.write("{}\\n")
>>> target.read_text()
'{}\\n'
>>> check_output(target, "--out", inputs=[target])  # doctest: +ELLIPSIS
Traceback (most recent call last):
langrag_eval.errors.ConfigError: --out ...out.jsonl: is also an input of this command; ...
"""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator

from ..errors import ConfigError

__all__ = ["atomic_write", "write_text_atomic", "check_output"]


TEMPORARY_MARK = ".langrag-tmp-"  # in the name of every temporary file this package writes


def temporary_name(target: Path, kind: str = "tmp") -> Path:
    """A name beside ``target`` for a file this package makes and removes itself: hidden, marked
    as the package's, and unique to this process and call, so it is never a user's file.

    >>> temporary_name(Path("out/res.jsonl")).name.startswith(".res.jsonl.langrag-tmp-")
    True
    """
    return target.parent / f".{target.name}{TEMPORARY_MARK}{kind}-{os.getpid()}-{os.urandom(16).hex()}"


def _unwritten(target: Path, exc: OSError) -> ConfigError:
    why = "the disk is full" if exc.errno == errno.ENOSPC else "over the disk quota" \
        if exc.errno == errno.EDQUOT else exc.strerror or str(exc)
    kept = "the previous file is left as it was" if target.exists() else "nothing was written"
    return ConfigError(f"{target}: could not be written ({why}); {kept}")


# Checks an existing file must pass before an output replaces it (the command line adds one: a run
# whose judge answered nothing replaces no earlier results); each raises to keep the file.
REPLACE_CHECKS: list[Callable[[Path], None]] = []
# Called before any output is put in place, new or replaced (the command line's --dry-run stops there).
WRITE_CHECKS: list[Callable[[Path], None]] = []


@contextmanager
def atomic_write(path: str | Path, *, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` in one rename. A
    failure to write (a full disk, say) removes the temporary file, leaves ``path`` as it was and is
    a one-line :class:`ConfigError` naming it."""
    target = Path(path)
    if target.exists() and not target.is_file():  # a FIFO or /dev/full is never replaced by a file
        raise ConfigError(f"{target}: not a regular file; an output must be a regular file or absent")
    # A plain exclusive create gets the permissions the user's umask gives any new file (mkstemp
    # would make it private); the random part keeps two writers apart.
    tmp = temporary_name(target)
    try:
        fh = open(tmp, "x", encoding=encoding, newline="")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ConfigError(f"{target}: cannot write here ({exc.strerror})") from None
    try:
        try:
            with fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            for check in list(WRITE_CHECKS):
                check(target)
            if target.exists():  # keep the mode the user gave the file
                for check in list(REPLACE_CHECKS):
                    check(target)
                os.chmod(tmp, target.stat().st_mode & 0o7777)
            os.replace(tmp, target)
        except OSError as exc:
            raise _unwritten(target, exc) from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: str | Path, text: str) -> Path:
    with atomic_write(path) as fh:
        fh.write(text)
    return Path(path)


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def check_output(path: str | Path, option: str, *, inputs: Iterable[str | Path | None] = ()) -> Path:
    """``path`` ready to be written, checked before any work: not one of ``inputs``, not a folder,
    its folder made and writable, the file itself writable when it exists."""
    p = Path(path)
    for given in inputs:
        if given is not None and _same(p, Path(given)):
            raise ConfigError(f"{option} {p}: is also an input of this command; writing it would "
                              "destroy the input; give another file name")
    if p.is_dir():
        raise ConfigError(f"{option} {p}: is a directory; give a file name")
    if p.exists() and not p.is_file():  # a device node or a FIFO: renaming over it would replace it
        raise ConfigError(f"{option} {p}: not a regular file; an output must be a regular file or absent")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{option} {p}: cannot create its folder {p.parent} ({exc.strerror})") from None
    if not os.access(p.parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {p}: its folder {p.parent} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise ConfigError(f"{option} {p}: the file is read-only")
    return p
