"""Reading one user file safely: special files (a named pipe, a device, a socket, a symbolic link
loop, a folder) are refused in one line before any read, every file is read once, and the digest
of what was read is kept so that a file is never opened a second time to be hashed.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO, Iterator

from ..errors import DataError

__all__ = ["check_regular", "digest_of_read", "read_bytes", "read_lines", "read_text"]


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def _refusal(exc: OSError, what: str, p: str) -> DataError:
    if exc.errno == errno.ENOENT:
        return DataError(f"{what} not found", path=p)
    if exc.errno == errno.ELOOP:
        return DataError(f"{what} is a symbolic link that leads back to itself (a loop); "
                         "name the file itself", path=p)
    if exc.errno == errno.EISDIR:
        return DataError(f"{what} is a directory, not a file", path=p)
    return DataError(f"cannot read the {what}: {exc.strerror}", path=p)


def check_regular(path: str | Path, *, what: str = "file") -> None:
    """Refuse, in one line and before anything opens it, a ``path`` that is missing, a directory,
    a named pipe, a device or a symbolic link loop: reading a pipe or a device could wait forever.

    >>> import tempfile
    >>> check_regular(tempfile.mkdtemp(), what="answers file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.errors.DataError: ...: answers file is a directory, not a file
    """
    p = str(path)
    try:
        mode = os.stat(p).st_mode
    except (OSError, ValueError) as exc:
        raise _refusal(exc if isinstance(exc, OSError) else OSError(errno.EINVAL, str(exc)), what, p) from None
    if stat.S_ISDIR(mode):
        raise DataError(f"{what} is a directory, not a file", path=p)
    if not stat.S_ISREG(mode):
        raise DataError(f"{what} is {_kind(mode)}, not a regular file; give a file", path=p)


# The digest of each file read, keyed by what identifies its content on disk, so that a command
# that reads a file and then keys its run by the file's digest reads it once, not twice. Bounded:
# a long-lived process (a notebook, a server) reading many files keeps the most recent ones only.
_DIGESTS: "OrderedDict[tuple[int, int, int, int, int], str]" = OrderedDict()
_DIGESTS_KEPT = 256
_DIGESTS_LOCK = threading.Lock()


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def digest_of_read(path: str | Path) -> str | None:
    """The sha256 of ``path``'s bytes when this process has read them and the file is unchanged
    since (same inode, size and times), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    with _DIGESTS_LOCK:
        key = _identity(st)
        if key in _DIGESTS:
            _DIGESTS.move_to_end(key)
        return _DIGESTS.get(key)


def _open_regular(p: str, what: str) -> tuple[int, os.stat_result]:
    """An open descriptor on the regular file ``p`` (blocking), and its status; a pipe is refused
    without waiting for a writer."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _refusal(exc, what, p) from None
    except ValueError as exc:  # a NUL in the name
        raise DataError(f"cannot read the {what}: {exc}", path=p) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise DataError(f"{what} is a directory, not a file", path=p)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{what} is {_kind(st.st_mode)}, not a regular file; give a file", path=p)
        os.set_blocking(fd, True)
    except OSError as exc:
        os.close(fd)
        raise _refusal(exc, what, p) from None
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _remember(st: os.stat_result, digest: str) -> None:
    with _DIGESTS_LOCK:
        _DIGESTS[_identity(st)] = digest
        _DIGESTS.move_to_end(_identity(st))
        while len(_DIGESTS) > _DIGESTS_KEPT:
            _DIGESTS.popitem(last=False)


def read_bytes(path: str | Path, *, what: str = "file") -> bytes:
    """The bytes of a regular file, or a :class:`DataError` naming it: missing, a directory, a pipe,
    a device, a symbolic link loop, unreadable. A pipe is refused without waiting for a writer."""
    p = str(path)
    fd, st = _open_regular(p, what)
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    except OSError as exc:
        raise _refusal(exc, what, p) from None
    finally:
        os.close(fd)
    if len(data) == st.st_size:  # what was read is what the file held when it was opened
        # imported here, not at the top: loading OpenSSL would cost every start of the command
        import hashlib
        _remember(st, hashlib.sha256(data).hexdigest())
    return data


def read_lines(path: str | Path, *, what: str = "file") -> Iterator[bytes]:
    """The lines of a regular file as bytes, split at line feeds only (each with its ending), read
    a block at a time: a file of any size is never held whole. The same checks as :func:`read_bytes`
    are made before the first line; the digest of a file read to its end is kept, as there.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = p.write_bytes(b"a\\r\\nb\\rc\\nd")
    >>> list(read_lines(p))
    [b'a\\r\\n', b'b\\rc\\n', b'd']
    """
    p = str(path)
    fd, st = _open_regular(p, what)  # checked now, not at the first next()
    # the file object owns the descriptor: a reader dropped before its first line still closes it
    return _lines(os.fdopen(fd, "rb"), st, p, what)


def _lines(fh: BinaryIO, st: os.stat_result, p: str, what: str) -> Iterator[bytes]:
    import hashlib
    digest, size = hashlib.sha256(), 0
    try:
        with fh:
            for line in fh:
                digest.update(line)
                size += len(line)
                yield line
    except OSError as exc:
        raise _refusal(exc, what, p) from None
    if size == st.st_size:
        _remember(st, digest.hexdigest())


def read_text(path: str | Path, *, what: str = "file") -> str:
    """The whole of a UTF-8 text file, or a :class:`DataError` naming the file and what is wrong
    with it (missing, a directory, unreadable, not UTF-8) instead of an ``OSError`` traceback.

    >>> import tempfile
    >>> read_text(tempfile.mkdtemp(), what="examples file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.errors.DataError: ...: examples file is a directory, not a file
    """
    p = Path(path)
    data = read_bytes(p, what=what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8",
                        path=str(p), line=line) from None
