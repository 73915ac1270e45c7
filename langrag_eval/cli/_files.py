"""The one rule for the files a command touches, checked before it does any work.

Each command declares once, beside its options, every file it reads and every file it writes
(:func:`declare_files`); :func:`check_files` runs before the command's handler and refuses, in one
line naming both, an output that is the same file as anything else the command reads or writes:
its inputs, its auxiliary files (a scripted judge file, a price table, prompt templates, examples),
the model file, or the run store. "The same" is decided by identity, not spelling: ``./x``,
``../dir/x``, a symbolic link and a hard link to a file are that file. Inputs that are not regular
files (a named pipe, a device, a symbolic link loop, a folder where a file is expected) are refused
the same way, before anything opens them.

>>> import argparse, tempfile, os
>>> folder = tempfile.mkdtemp()
>>> data = os.path.join(folder, "qa.csv"); _ = open(data, "w").write("q\\n")
>>> p = argparse.ArgumentParser()
>>> _ = p.add_argument("file"); _ = p.add_argument("--out")
>>> declare_files(p, reads={"FILE": "file"}, writes={"--out": "out"})
>>> check_files(p.parse_args([data, "--out", os.path.join(folder, ".", "qa.csv")]))  # doctest: +ELLIPSIS
Traceback (most recent call last):
langrag_eval.errors.ConfigError: --out ...qa.csv: is also an input of this command (FILE ...qa.csv is the same file); ...
"""

from __future__ import annotations

import argparse
import errno
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from ..errors import ConfigError, DataError
from ..files.writing import check_output
from ..files.reading import check_regular

__all__ = ["output_file", "declare_files", "check_files", "same_file", "store_path", "judge_file",
           "JUDGE_READS", "Getter", "input_paths"]

# How a declaration finds a role's path(s) in the parsed options: the option's ``dest``, or a function
# of the options giving a path, a list of paths, or None.
Getter = Union[str, Callable[[argparse.Namespace], Any]]
_ROLES = "_file_roles"


@dataclass(frozen=True)
class _Roles:
    reads: Mapping[str, Getter]
    writes: Mapping[str, Getter]
    folders: frozenset[str] = field(default_factory=frozenset)  # roles that name folders
    stores: frozenset[str] = field(default_factory=frozenset)   # roles that name a run store


def declare_files(p: argparse.ArgumentParser, *, reads: Mapping[str, Getter] = {},
                  writes: Mapping[str, Getter] = {}, folders: Iterable[str] = (),
                  stores: Iterable[str] = ()) -> None:
    """Declare the files the command of ``p`` reads and writes, each under the option (the role)
    that names it. A role may be both read and written (a template file reloaded and saved)."""
    p.set_defaults(**{_ROLES: _Roles(dict(reads), dict(writes), frozenset(folders), frozenset(stores))})


def store_path(args: argparse.Namespace) -> str | None:
    """The run store's file (``--store``, else ``$LANGRAG_STORE``, else the default), None for a
    PostgreSQL store or an in-memory one."""
    from ..runtime import DEFAULT_STORE
    spec = str(getattr(args, "store", None) or os.environ.get("LANGRAG_STORE") or DEFAULT_STORE)
    return None if "://" in spec or spec == ":memory:" else spec


def judge_file(spec: str | None) -> str | None:
    """The file a judge specification names (``scripted:FILE``, ``local:/path/model.gguf``)."""
    spec = (spec or os.environ.get("LANGRAG_JUDGE") or "").strip()
    provider, _, rest = spec.partition(":")
    return rest if provider in ("scripted", "local") and rest else None


# The files every judging command reads besides its own (add_judge_options).
JUDGE_READS: dict[str, Getter] = {"--judge": lambda a: judge_file(getattr(a, "judge", None)),
                                  "--prices": "prices"}


# The roles that name a command's data (as opposed to a template, a judge or a price table).
_DATA_ROLES = {"--answers", "--dataset", "--data", "--corpus", "--queries", "--traces", "--personas", "--db"}


def input_paths(args: argparse.Namespace) -> list[str]:
    """The data files a command reads (its arguments and data options), as the user named them."""
    roles: _Roles | None = getattr(args, _ROLES, None)
    if roles is None:
        return []
    return [p for role, get in roles.reads.items() if (not role.startswith("-") or role in _DATA_ROLES)
            and role not in roles.stores for p in _paths(get, args)]


def _paths(get: Getter, args: argparse.Namespace) -> list[str]:
    value = getattr(args, get, None) if isinstance(get, str) else get(args)
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v not in (None, "")]
    return [str(value)]


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` are one file: by device and inode when both exist (hard and symbolic
    links), else by their fully resolved paths (``./``, ``../`` and links in the folders)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        pass
    try:
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))
    except (OSError, ValueError):
        return os.path.abspath(a) == os.path.abspath(b)


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` (existing or not) lies under ``folder``, links and ``..`` resolved."""
    try:
        inner, outer = os.path.realpath(path), os.path.realpath(folder)
    except (OSError, ValueError):
        return False
    return inner != outer and os.path.commonpath([inner, outer]) == outer


def _special(role: str, path: str) -> None:
    """Refuse an existing path that a read could hang on or loop in: a named pipe, a device, a
    socket, a symbolic link loop. A missing file or a folder is left to the command's reader, which
    says so in its own words."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{role} {path}: a symbolic link that leads back to itself (a loop); "
                              "name the file itself") from None
        return
    except ValueError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        try:
            check_regular(path, what=role)
        except DataError as exc:
            raise ConfigError(str(exc)) from None


def check_files(args: argparse.Namespace, *, writes: Mapping[str, str | Path | None] = {}) -> None:
    """Check the command's declared files before it starts (``writes``: outputs whose final name is
    known only now, replacing the declared ones of the same role). See the module docstring."""
    roles: _Roles | None = getattr(args, _ROLES, None)
    if roles is None:
        return
    reads = [(role, p) for role, get in roles.reads.items() for p in _paths(get, args)]
    outputs = {role: _paths(get, args) for role, get in roles.writes.items()}
    outputs.update({role: [str(p)] if p else [] for role, p in writes.items()})
    written = [(role, p) for role, ps in outputs.items() for p in ps]
    for role, path in reads:
        _special(role, path)
    for index, (role, path) in enumerate(written):
        for other_role, other in reads + written[:index] + written[index + 1:]:
            if other_role == role and other == path:
                continue  # the role itself (a file both read and written)
            if same_file(path, other):
                what = "the run store" if other_role in roles.stores else "an input" \
                    if (other_role, other) in reads else "another output"
                raise ConfigError(f"{role} {path}: is also {what} of this command ({other_role} {other} "
                                  "is the same file); writing it would destroy that file; give another name")
    corpora = [(role, p) for role, p in reads if role in roles.folders and os.path.isdir(p)]
    for role, path in written:
        for folder_role, folder in corpora:
            if role not in roles.stores and _inside(path, folder):
                raise ConfigError(f"{role} {path}: is inside {folder_role} {folder}, the folder this command "
                                  "reads its documents from; a later run would read it as a document; "
                                  "write it outside that folder")
    for role, path in written:
        if role in roles.stores:
            _special(role, path)
        elif role not in roles.folders:
            check_output(path, role)


def output_file(path: str | Path, option: str, *, inputs: Iterable[str | Path | None] = ()) -> Path:
    """``path`` ready to be written: not a folder, not one of ``inputs``, its parent folder made.

    >>> import tempfile
    >>> output_file(tempfile.mkdtemp(), "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.errors.ConfigError: --out ...: is a directory; give a file name
    """
    return check_output(path, option, inputs=inputs)
