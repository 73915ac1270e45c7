"""Regenerate langrag_eval/retrieval/_uax29_tables.py from Lucene itself.

    python tests/retrieval/lucene/generate_tables.py [OUTPUT]

Lucene's StandardTokenizer is a JFlex scanner whose grammar (StandardTokenizerImpl.jflex) is written
over Unicode 9.0 word-break properties plus Emoji 11 data. JFlex reduces all the character sets the
grammar uses to a few dozen classes and stores the map from code point to class in the scanner
(``ZZ_CMAP``). This script reads that map through BM25Oracle.java, names each class by a code point
whose role is not in doubt (``a`` is a letter, ``,`` is MidNum ...), and writes the classes as code
point ranges. It also records how the JDK's ``Character.toLowerCase`` (Lucene's LowerCaseFilter)
lower-cases the characters a token can hold.

The runtime package reads only the generated file; Java is needed only to regenerate or test it.
test_uax29_tables_are_lucenes (tests/retrieval/test_analysis_lucene.py) regenerates and compares.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lucene_oracle import Lucene

OUTPUT = Path(__file__).resolve().parents[3] / "langrag_eval" / "retrieval" / "_uax29_tables.py"

# One code point per class whose role in the grammar is certain (its Unicode 9.0 word-break
# property and emoji properties are textbook). Every class of the scanner must be named exactly once.
REPRESENTATIVES = {
    "other": 0x0020,  # space: no rule emits it
    "letter": 0x0061,  # a: WB=ALetter
    "letter_emoji": 0x2139,  # INFORMATION SOURCE: ALetter and Extended_Pictographic
    "hangul": 0xAC00,  # Hangul syllable: ALetter, script Hangul
    "hebrew_letter": 0x05D0,  # alef: WB=Hebrew_Letter
    "numeric": 0x0660,  # Arabic-Indic zero: WB=Numeric
    "digit": 0x0030,  # 0: Numeric and an emoji keycap base
    "katakana": 0x30A2,  # WB=Katakana
    "mid_letter": 0x003A,  # colon: WB=MidLetter
    "mid_num": 0x002C,  # comma: WB=MidNum
    "mid_num_letter": 0x002E,  # full stop: WB=MidNumLet
    "single_quote": 0x0027,  # apostrophe: WB=Single_Quote
    "double_quote": 0x0022,  # quotation mark: WB=Double_Quote
    "extend_num_letter": 0x005F,  # low line: WB=ExtendNumLet
    "extend": 0x0300,  # combining grave: WB=Extend
    "zwj": 0x200D,  # WB=ZWJ
    "text_selector": 0xFE0E,  # VS15, excluded from the emoji sequences' Extend
    "emoji_selector": 0xFE0F,  # VS16
    "keycap": 0x20E3,  # combining enclosing keycap
    "keycap_base": 0x0023,  # number sign: keycap base, not Numeric
    "tag_spec": 0xE0020,  # tag space
    "tag_term": 0xE007F,  # cancel tag
    "regional_indicator": 0x1F1E6,
    "emoji_modifier": 0x1F3FB,  # Unicode 9.0 WB=E_Modifier (Extend only from Unicode 11)
    "emoji_modifier_base": 0x261D,
    "emoji": 0x00A9,  # copyright sign: Extended_Pictographic
    "han": 0x4E00,
    "hiragana": 0x3042,
    "complex": 0x0E01,  # Thai ko kai: Line_Break=Complex_Context
    "complex_extend": 0x0E31,  # Thai mai han-akat: Complex_Context and Extend
}


def _escape(cp: int) -> str:
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _wrap(parts: list[str], width: int = 96, sep: str = "") -> list[str]:
    chunks, line = [], ""
    for part in parts:
        if line and len(line) + len(sep) + len(part) > width:
            chunks.append(line)
            line = ""
        line = f"{line}{sep}{part}" if line else part
    return [*chunks, line] if line else chunks


def _range_parts(ranges: list[tuple[int, int]]) -> list[str]:
    parts = []
    for first, last in ranges:
        if first == last:
            parts.append(_escape(first))
        elif last == first + 1:
            parts.append(_escape(first) + _escape(last))
        else:
            parts.append(f"{_escape(first)}-{_escape(last)}")
    return parts


def build(lucene: Lucene) -> str:
    class_of_run = [tuple(int(x) for x in row.split("\t")) for row in lucene.run("classes")]
    runs: dict[int, list[tuple[int, int]]] = defaultdict(list)
    class_of: dict[int, int] = {}
    for first, last, cls in class_of_run:
        runs[cls].append((first, last))
    for role, cp in REPRESENTATIVES.items():
        cls = next(c for first, last, c in class_of_run if first <= cp <= last)
        if cls in class_of.values():
            raise SystemExit(f"{role} shares class {cls} with another role: the grammar changed")
        class_of[role] = cls
    unnamed = set(runs) - set(class_of.values())
    if unnamed:
        raise SystemExit(f"scanner classes without a role: {sorted(unnamed)}: the grammar changed")

    java_lower = {int(a): int(b) for a, b in (row.split("\t") for row in lucene.run("lower"))}
    # Only characters a token can hold matter; the JDK's table for them, identity entries left out.
    lower = {}
    for role, cls in class_of.items():
        if role != "other":
            for first, last in runs[cls]:
                lower.update((cp, java_lower[cp]) for cp in range(first, last + 1) if cp in java_lower)

    version = subprocess.run(["java", "-version"], check=True, capture_output=True, text=True)
    java = version.stderr.splitlines()[0]
    lines = [
        '"""Character classes of Lucene\'s StandardTokenizer and the JDK\'s lower case for them.',
        "",
        "GENERATED by tests/retrieval/lucene/generate_tables.py; do not edit. Source: the scanner map",
        f"(ZZ_CMAP) of lucene-core {lucene.version} (StandardTokenizerImpl: Unicode 9.0 word-break",
        f"properties and Emoji 11 data) and Character.toLowerCase of {java}.",
        "",
        "``CLASSES`` maps a role to a regular-expression class body (code point ranges, as escapes); every",
        "code point outside them is ``other``. ``LOWER`` maps each code point of those classes that",
        "``Character.toLowerCase`` changes to its lower case.",
        '"""',
        "",
        f'LUCENE_VERSION = "{lucene.version}"',
        "",
        "CLASSES = {",
    ]
    for role in REPRESENTATIVES:
        if role != "other":
            lines.append(f'    "{role}": (')
            lines.extend(f'        r"{chunk}"' for chunk in _wrap(_range_parts(runs[class_of[role]])))
            lines.append("    ),")
    lines.append("}")
    lines.append("")
    lines.append("LOWER = {")
    items = [f"0x{cp:04X}: 0x{low:04X}," for cp, low in sorted(lower.items())]
    lines.extend(f"    {chunk}" for chunk in _wrap(items, sep=" "))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT
    with tempfile.TemporaryDirectory() as tmp:
        text = build(Lucene.compile(Path(tmp)))
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output} ({len(text)} characters)")


if __name__ == "__main__":
    main()
