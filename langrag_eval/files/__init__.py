"""Users' files read and written safely: tables with the file, line and field of every problem
(:mod:`.tables`), bounded reading (:mod:`.reading`), strict JSON (:mod:`.jsontext`), outputs
that are whole or absent (:mod:`.writing`), and their text printed with terminal controls escaped
(:mod:`.terminal`). Names are imported on first use."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .writing import atomic_write, check_output, write_text_atomic
    from .tables import Row, Table, TableFormat, TableStream, csv_cells_unbounded, jsonl_objects, parse_json, read_bytes, read_table, read_text, require_columns, stream_table
    from .reading import check_regular, digest_of_read, read_lines
    from .jsontext import LoneSurrogateError, find_lone_surrogate, finite_number, lines_of
    from .terminal import shown, shown_lines

_LAZY = {
    "atomic_write": ".writing",
    "check_output": ".writing",
    "write_text_atomic": ".writing",
    "Row": ".tables",
    "Table": ".tables",
    "TableFormat": ".tables",
    "TableStream": ".tables",
    "csv_cells_unbounded": ".tables",
    "jsonl_objects": ".tables",
    "parse_json": ".tables",
    "read_bytes": ".tables",
    "read_table": ".tables",
    "read_text": ".tables",
    "require_columns": ".tables",
    "stream_table": ".tables",
    "check_regular": ".reading",
    "digest_of_read": ".reading",
    "read_lines": ".reading",
    "LoneSurrogateError": ".jsontext",
    "find_lone_surrogate": ".jsontext",
    "finite_number": ".jsontext",
    "lines_of": ".jsontext",
    "shown": ".terminal",
    "shown_lines": ".terminal",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
