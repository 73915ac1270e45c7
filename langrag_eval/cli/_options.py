"""Options several commands share, and options derived from a settings class of the core.

A settings class (a pydantic model or a dataclass) states once each setting's name, type, default,
allowed values and meaning. :func:`add_settings_options` makes one option of each of its fields, so a
field added to the class is an option of every command built from it, and
:meth:`SettingsOptions.build` makes the settings from the parsed options; a value the class refuses
is one line naming the option.

>>> import argparse
>>> from langrag_eval.retrieval import HybridSettings
>>> parser = argparse.ArgumentParser(prog="search")
>>> hybrid = add_settings_options(parser, HybridSettings)
>>> hybrid.build(parser.parse_args(["--depth", "20", "--weights", "0.3,0.7"]))
HybridSettings(fusion='rrf', rank_constant=60, weights=(0.3, 0.7), normalization='min_max', depth=20)
>>> hybrid.build(parser.parse_args(["--depth", "0"]))
Traceback (most recent call last):
langrag_eval.errors.ConfigError: --depth 0: depth must be at least 1, got 0
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
import sys
from typing import Any, Literal, Union

from ..errors import ConfigError
from ..files.writing import write_text_atomic
from ._files import Getter, output_file

__all__ = ["group", "INPUT", "JUDGE", "RUN_AND_STORE", "BATCH_AND_RAY", "OUTPUT", "DEFAULT_STORE",
           "SettingsOptions", "add_settings_options", "TABLE_FORMATS", "add_table_options", "column_names",
           "add_json_option", "json_output", "write_json", "add_results_option", "results_file", "results_path",
           "add_comparison_options", "check_comparison_options"]

TABLE_FORMATS = ("csv", "tsv", "jsonl")

# The run store's default file, as :data:`langrag_eval.runtime.DEFAULT_STORE` says (a test keeps the
# two equal): the help names it without importing the runtime.
DEFAULT_STORE = ".langrag/runs.sqlite"

# Defaults the help shows, as the core defines them (a test keeps the copies equal): --help imports
# none of the core's capabilities.
CHUNK_SIZE, CHUNK_OVERLAP = 1000, 250
AGENT_NAMES = ("rag-bm25", "rag-knn", "rag-hybrid", "fusion-bm25", "fusion-knn", "fusion-hybrid")
AUDIT_BATTERIES = ("pairwise", "correctness", "groundedness")
THELMA_METRICS = ("sp1", "sp2", "sqc", "rp", "rqc", "sd", "gr")
THELMA_SD_THRESHOLD = 0.75

# The groups every command's help is arranged in, in this order; a command's own settings stay
# under "options".
INPUT, JUDGE, RUN_AND_STORE, BATCH_AND_RAY, OUTPUT = "input", "judge", "run and store", "batch and Ray", "output"


def group(p: Any, title: str) -> Any:
    """The argument group ``title`` of parser ``p`` (made on first use); ``p`` itself when it is a
    group already, so the helpers below take either."""
    if not isinstance(p, argparse.ArgumentParser):
        return p
    for existing in p._action_groups:
        if existing.title == title:
            return existing
    return p.add_argument_group(title)
_NUMBERS = {2: "two", 3: "three", 4: "four"}


# ---- options of the commands that read a table (CSV, TSV or JSONL) ----------------------------

def add_table_options(p: argparse.ArgumentParser, columns: Mapping[str, str], *, of: str | None = None,
                      format: bool = True) -> None:
    """``--format``, ``--id-col`` and one ``--NAME-col`` per column (its default: NAME).

    ``columns`` maps each column's name to a note on what it holds ("" for none), for the help;
    ``of`` names the file they describe when the command reads more than one.
    """
    where = f" of {of}" if of else ""
    p = group(p, INPUT)
    if format:
        p.add_argument("--format", choices=TABLE_FORMATS, default=None,
                       help=f"file format{where} (default: from the file name)")
    p.add_argument("--id-col", default=None,
                   help=f"id column{where} (default: id when present, else line numbers)")
    for name, note in columns.items():
        p.add_argument(f"--{name.replace('_', '-')}-col", default=name,
                       help=f"{name} column{where}{', ' + note if note else ''} (default {name})")


def column_names(args: argparse.Namespace, names: Iterable[str]) -> dict[str, str]:
    """``{name: the column the user named for it}`` for the columns of :func:`add_table_options`."""
    return {name: getattr(args, f"{name}_col") for name in names}


# ---- options of the files a command writes ----------------------------------------------------

def add_json_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--json FILE``: also write ``what`` to a JSON file."""
    p = group(p, OUTPUT)
    p.add_argument("--json", dest="json_out", default=None, metavar="FILE",
                   help=f"also write {what} to this JSON file")


def json_output(args: argparse.Namespace) -> Path | None:
    """The ``--json`` file checked before any work (see :func:`~langrag_eval.cli._files.output_file`)."""
    return output_file(args.json_out, "--json") if args.json_out else None


def write_json(path: str | Path, data: Any) -> Path:
    """``data`` as indented JSON, written whole or not at all."""
    import json
    return write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str))


def add_results_option(p: argparse.ArgumentParser, suffix: str, what: str = "per-item results JSONL") -> None:
    """``--out``: the per-item results file, by default beside FILE (see :func:`results_file`)."""
    p = group(p, OUTPUT)
    p.add_argument("--out", default=None, help=f"{what} (default: FILE's name + {suffix})")


def results_path(suffix: str) -> Getter:
    """The per-item results file of the parsed options: ``--out``, else FILE's name + ``suffix``
    (a getter for :func:`~langrag_eval.cli._files.declare_files`)."""
    return lambda args: args.out or Path(args.file).with_name(Path(args.file).name + suffix)


def results_file(args: argparse.Namespace, suffix: str) -> Path:
    """The per-item results file, checked: ``--out``, else the input FILE's name with ``suffix`` added."""
    return output_file(results_path(suffix)(args), "--out")


# ---- options of the commands that compare two runs (compare, gate) -----------------------------

def add_comparison_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed of the paired bootstrap (default 0)")
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--agent", default=None, help="the GRAMMAR agent to compare, when a run graded several")
    p.add_argument("--agent-b", default=None,
                   help="the GRAMMAR agent of the compared run, when it is named otherwise than --agent")


def check_comparison_options(args: argparse.Namespace) -> None:
    """Checked before any run is read."""
    if args.resamples < 100:
        raise ConfigError("--resamples must be at least 100")


# ---- options derived from a settings class ----------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Option:
    name: str
    flag: str
    default: Any
    convert: Callable[[str], Any] | None  # text to value, for what argparse cannot parse itself
    arguments: dict[str, Any]             # for ``add_argument``


class SettingsOptions:
    """One option per field of ``settings`` (a pydantic model or a dataclass), in field order.

    The option is ``--field-name`` (``-k`` for a one-letter field) unless ``flags`` names another;
    its type, default and choices are the field's; its help is ``help[field]``, else the field's
    description (pydantic ``Field(description=...)``, dataclass ``field(metadata={"description": ...})``),
    with the default added. A bool field is a switch. ``exclude``: fields the command sets itself;
    a field of a type without a command-line form must be among them.
    """

    def __init__(self, settings: type, *, flags: Mapping[str, str] | None = None, exclude: Iterable[str] = (),
                 help: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        flags, help, skip = dict(flags or {}), dict(help or {}), set(exclude)
        self.options = {name: _option(settings, name, annotation, default,
                                      flags.get(name), help.get(name) or description)
                        for name, annotation, default, description in _fields(settings) if name not in skip}

    def add_to(self, p: argparse.ArgumentParser) -> SettingsOptions:
        for option in self.options.values():
            p.add_argument(option.flag, **option.arguments)
        return self

    def flag(self, name: str) -> str:
        """The option that sets field ``name``."""
        return self.options[name].flag

    def values(self, args: argparse.Namespace) -> dict[str, Any]:
        """``{field: value}`` as the options give them."""
        out = {}
        for o in self.options.values():
            value = getattr(args, o.name)
            out[o.name] = o.convert(value) if o.convert is not None and isinstance(value, str) else value
        return out

    def build(self, args: argparse.Namespace, **overrides: Any) -> Any:
        """The settings from the options (``overrides`` set fields no option sets, or replace one)."""
        values = {**self.values(args), **overrides}
        try:
            return self.settings(**values)
        except (ConfigError, ValueError) as exc:
            pydantic = sys.modules.get("pydantic")  # loaded when the settings are a pydantic model
            if pydantic is not None and isinstance(exc, pydantic.ValidationError):
                # pydantic's message spans several lines; the command prints one naming the option
                first = exc.errors()[0]
                name = str(first["loc"][0]) if first["loc"] else ""
                where = self.options[name].flag if name in self.options else name or "settings"
                raise ConfigError(f"{where} {first.get('input')!r}: {first['msg']}") from None
            raise ConfigError(f"{self._culprits(values, overrides)}{exc}") from None

    def _culprits(self, values: dict[str, Any], overrides: Mapping[str, Any]) -> str:
        """The option whose value alone the settings refuse (else every changed one), as a prefix."""
        changed = [o for o in self.options.values()
                   if o.name not in overrides and values[o.name] != o.default]
        alone = []
        for o in changed:
            try:
                self.settings(**{o.name: values[o.name]})
            except (ConfigError, ValueError):
                alone.append(o)
        named = alone if len(alone) == 1 else changed
        return ", ".join(f"{o.flag} {_shown(values[o.name])}" for o in named) + (": " if named else "")


def add_settings_options(p: argparse.ArgumentParser, settings: type, **how: Any) -> SettingsOptions:
    """Add :class:`SettingsOptions` of ``settings`` to ``p`` (``how``: its keyword arguments)."""
    return SettingsOptions(settings, **how).add_to(p)


def _option(settings: type, name: str, annotation: Any, default: Any, flag: str | None,
            text: str | None) -> _Option:
    flag = flag or (f"-{name}" if len(name) == 1 else f"--{name.replace('_', '-')}")
    text = text or name.replace("_", " ")
    kind, choices, items = _form(settings, name, annotation)
    arguments: dict[str, Any] = {"dest": name}
    convert = None
    if kind is bool:
        if default is True:
            flag = "--no-" + flag.lstrip("-")
        arguments.update(action="store_false" if default is True else "store_true", default=bool(default))
    else:
        metavar = flag.lstrip("-").upper().replace("-", "_")
        if items is not None:
            convert = _items_of(flag, kind, items, default)
            arguments.update(default=_shown(default), metavar=metavar)
        else:
            arguments.update(type=kind, default=default)
            if choices:
                arguments["choices"] = choices
            else:
                arguments["metavar"] = metavar
        if default is not None and "default" not in text:
            text += f" (default {_shown(default)})"
    arguments["help"] = text.replace("%", "%%")
    return _Option(name, flag, default, convert, arguments)


def _fields(settings: type) -> list[tuple[str, Any, Any, str | None]]:
    """``(name, type, default, description)`` of each field."""
    pydantic = sys.modules.get("pydantic")  # a pydantic model's module has loaded it
    if pydantic is not None and isinstance(settings, type) and issubclass(settings, pydantic.BaseModel):
        out = []
        for name, info in settings.model_fields.items():
            default = info.get_default(call_default_factory=True)
            out.append((name, info.annotation, None if info.is_required() else default, info.description))
        return out
    if dataclasses.is_dataclass(settings):
        hints = typing.get_type_hints(settings)
        out = []
        for f in dataclasses.fields(settings):
            if not f.init:
                continue
            default = (f.default if f.default is not dataclasses.MISSING else
                       f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            out.append((f.name, hints[f.name], default, f.metadata.get("description")))
        return out
    raise TypeError(f"{settings!r} is neither a pydantic model nor a dataclass")


def _form(settings: type, name: str, annotation: Any) -> tuple[type, tuple | None, int | None]:
    """``(type, choices, items)`` of a field; ``items``: the length of a tuple (-1 for any)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _form(settings, name, rest[0])
    elif origin is Literal and len({type(a) for a in args}) == 1:
        return type(args[0]), args, None
    elif origin is tuple and args and len({a for a in args if a is not Ellipsis}) == 1 \
            and args[0] in (int, float, str):
        return args[0], None, -1 if Ellipsis in args else len(args)
    elif annotation in (bool, int, float, str):
        return annotation, None, None
    raise TypeError(f"{settings.__name__}.{name}: no command-line form for {annotation!r}; "
                    f"exclude it from the options and set it in the command")


def _items_of(flag: str, kind: type, count: int, default: Any) -> Callable[[str], tuple]:
    """Comma-separated text to a tuple, or a one-line error naming the option."""
    word = {float: "number", int: "whole number"}.get(kind, "value")
    how_many = _NUMBERS.get(count, str(count)) if count > 0 else "one or more"
    example = f" such as {_shown(default)}" if default else ""

    def convert(text: str) -> tuple:
        parts = [part.strip() for part in text.split(",")]
        try:
            if (count > 0 and len(parts) != count) or not all(parts):
                raise ValueError
            return tuple(kind(part) for part in parts)
        except ValueError:
            raise ConfigError(f"{flag} takes {how_many} {word}s separated by commas{example}; "
                              f"got {text!r}") from None
    return convert


def _shown(value: Any) -> str:
    """A value as the user would type it."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(_shown(v) for v in value)
    return str(value)
