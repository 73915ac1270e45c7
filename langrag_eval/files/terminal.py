"""Text from users' files and judges' replies made safe to print on a terminal.

A sample id, an agent, metric or file name, a judge's reason or a provider's error can hold
characters a terminal obeys instead of showing: ANSI/VT escape sequences (``\\x1b[2J`` clears the
screen, ``\\x1b]`` sets the title, colours can hide text), the other C0 and C1 controls (``\\r``
returns to the start of the line and overwrites it), and Unicode bidi overrides, isolates and marks
(U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), which make a terminal draw a name's letters
in another order than they are stored. Line and paragraph separators (U+2028, U+2029) break a line
on some terminals, and a lone surrogate cannot be written to a UTF-8 console at all.

Each such character is shown escaped, as Python writes it (``\\x1b``, ``\\u202e``, ``\\ud800``), so
the name stays recognisable and no byte of it acts on the terminal.
"""

from __future__ import annotations

import re

__all__ = ["shown", "shown_lines"]

_CONTROLS = "\x00-\x09\x0b-\x1f\x7f-\x9f"          # C0 but the newline, DEL, C1
_UNICODE = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[\n{_CONTROLS}{_UNICODE}]")
_UNSAFE_BUT_NEWLINE = re.compile(f"[{_CONTROLS}{_UNICODE}]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    code = ord(m[0])
    return _NAMED.get(m[0]) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shown(text: object) -> str:
    """``text`` as one line a terminal shows as written: every control character (the newline
    included), bidi control and lone surrogate escaped.

    >>> shown("q1\\x1b[2J\\rALL PASSED")
    'q1\\\\x1b[2J\\\\rALL PASSED'
    >>> shown("agent-\\u202eevil\\u202c"), shown("two\\nlines"), shown("café ✓")
    ('agent-\\\\u202eevil\\\\u202c', 'two\\\\nlines', 'café ✓')
    """
    text = str(text)
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def shown_lines(text: object) -> str:
    """``text`` as the lines it holds (a table drawn for the terminal): as :func:`shown`, but its
    newlines kept.

    >>> shown_lines("rank  id\\n   1  q\\x9b1")
    'rank  id\\n   1  q\\\\x9b1'
    """
    text = str(text)
    return _UNSAFE_BUT_NEWLINE.sub(_escape, text) if _UNSAFE_BUT_NEWLINE.search(text) else text
