"""The analyzer against real Lucene 8 (StandardAnalyzer without stop words, Debian's liblucene8-java).

Three oracles: the shipped character tables equal what Lucene's own scanner holds; hypothesis
generates random Unicode text from every class of the scanner plus arbitrary code points, emoji
sequences and over-long runs, and our tokens must equal Lucene's token stream for at least 20,000
strings (one JVM answers all batches); multilingual real text must match too. Skipped only where
javac or the jars are missing (the skip names the apt-get command).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.retrieval import _uax29_tables
from langrag_eval.retrieval.analysis import analyze
from langrag_eval.retrieval.standard_tokenizer import character_classes, tokenize

LUCENE_DIR = Path(__file__).parent / "lucene"
HALUEVAL = Path(__file__).resolve().parents[1] / "data" / "halueval-qa" / "qa_one-turn_first200.jsonl"
CLASSES = character_classes()


def test_uax29_tables_are_lucenes(lucene):
    sys.path.insert(0, str(LUCENE_DIR))
    from generate_tables import build

    generated: dict = {}
    exec(build(lucene), generated)  # noqa: S102 - our own generator's output
    assert generated["LUCENE_VERSION"] == _uax29_tables.LUCENE_VERSION
    assert generated["CLASSES"] == _uax29_tables.CLASSES
    assert generated["LOWER"] == _uax29_tables.LOWER


# ---- random Unicode -----------------------------------------------------------------------------

# Characters whose handling is easy to get wrong: separators, joiners, selectors, tags, quotes,
# superscripts and other No, fullwidth forms, line ends, and code points Unicode 9 left unassigned.
TRICKY = list(" \t\n\r\x0b\x0c\x85\u2028\u2029\u00a0\u3000.,:;'\"_-@/#*+=&?!()[]{}<>|\\~^`$%"
              "²³¹⁰⁴₂½¾①⑳ⓐℹⓂ™©®〰〽\u00ad\u200b\u200c\u200d\u2060\ufeff\ufe0e\ufe0f\u20e3"
              "\U000e0020\U000e0067\U000e007f\U000e0001\U0001f3fb\U0001f3ff\u261d\U0001f44d\U0001f1e6"
              "\U0001f1ff\u0e31\u0e47\u3005\u3006\u303b\u30fc\uff70\u309b\u309d\u05f3\u05f4\u0387"
              "\u00b7\u2018\u2019\u2024\ufe52\uff0e\uff07\u202f\u203f\uff3f\uff10\uff19\u066b\u066c"
              "\ufffc\ufffd\U0001f970\U0001fa70\U0001f9ff\U0002a6d6\U0002b740\U00030000\U000e0100"
              "\U0010fffd\u0378\u08b5\u1c88\u1c90")
ROLES = sorted(CLASSES)
WORD_ROLES = ["letter", "hebrew_letter", "digit", "numeric", "katakana", "hangul", "mid_letter",
              "mid_num", "mid_num_letter", "single_quote", "double_quote", "extend_num_letter",
              "extend", "zwj", "complex", "complex_extend", "han", "hiragana", "letter_emoji"]
EMOJI_ROLES = ["emoji", "emoji_modifier_base", "emoji_modifier", "letter_emoji", "regional_indicator",
               "digit", "keycap_base", "letter", "zwj"]
GLUE = ["", "\u200d", "\u200d\u200d", "\ufe0f", "\ufe0f\u200d", "\ufe0e", "\u20e3", "\ufe0f\u20e3",
        "\u0301", "\u0301\u200d", "\U000e0067\U000e007f", "\ufe0f\U000e0067\U000e0062\U000e007f",
        "\U000e007f", "\u200d\ufe0f"]


class _Bytes:
    """Reads numbers off hypothesis-drawn bytes; past the end every number is 0."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def more(self) -> bool:
        return self.pos < len(self.data)

    def take(self, size: int, modulo: int) -> int:
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return int.from_bytes(chunk, "big") % modulo


def _class_char(src: _Bytes, role: str) -> str:
    ranges = CLASSES[role]
    first, last = ranges[src.take(2, len(ranges))]
    return chr(first + src.take(3, last - first + 1))


def _decode(data: bytes) -> str:
    """A text from random bytes: characters of every scanner class, tricky and arbitrary code
    points, emoji sequences with joiners and selectors, word-like runs, and runs past the buffer.
    Shrinking the bytes shrinks the text, so a failure is reported on a small example."""
    src, out = _Bytes(data), []
    while src.more():
        kind = src.take(1, 16)
        if kind < 6:
            out.append(_class_char(src, ROLES[src.take(1, len(ROLES))]))
        elif kind < 8:
            out.append(TRICKY[src.take(1, len(TRICKY))])
        elif kind == 8:
            cp = src.take(3, 0x110000)
            out.append(chr(cp if not 0xD800 <= cp <= 0xDFFF else cp + 0x800))
        elif kind < 11:
            for _ in range(1 + src.take(1, 4)):
                out.append(_class_char(src, EMOJI_ROLES[src.take(1, len(EMOJI_ROLES))]))
                out.append(GLUE[src.take(1, len(GLUE))])
        elif kind < 15:  # a word-like run over two to four classes, so each pairing is dense
            roles = [WORD_ROLES[src.take(1, len(WORD_ROLES))] for _ in range(2 + src.take(1, 3))]
            out.extend(_class_char(src, roles[src.take(1, len(roles))])
                       for _ in range(1 + src.take(1, 10)))
        else:  # a short pattern repeated past 255 UTF-16 units, where Lucene's buffer cuts tokens
            pattern = "".join(_class_char(src, ROLES[src.take(1, len(ROLES))])
                              for _ in range(1 + src.take(1, 3)))
            out.append(pattern * (60 + src.take(1, 240)))
    return "".join(out)


STRINGS_PER_BATCH = 50
BATCHES = 440


def test_random_unicode_matches_lucene(lucene):
    server = lucene.serve()
    checked: list[int] = []

    @settings(max_examples=BATCHES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(st.binary(max_size=48).map(_decode), min_size=STRINGS_PER_BATCH,
                    max_size=STRINGS_PER_BATCH))
    def batch(texts: list[str]) -> None:
        expected = server.analyze(texts)
        diffs = [(t, tokenize(t), want) for t, want in zip(texts, expected) if tokenize(t) != want]
        assert not diffs, f"{len(diffs)} differ; first: {diffs[0]!r}"
        checked.append(len(texts))

    try:
        batch()
    finally:
        server.close()
    assert sum(checked) >= 20_000


# ---- real text ----------------------------------------------------------------------------------

def _real_texts() -> list[str]:
    lines = (LUCENE_DIR / "multilingual.txt").read_text(encoding="utf-8").splitlines()
    texts = [*lines, "\n".join(lines), "\r\n".join(lines), " ".join(reversed(lines))]
    rng = random.Random(5)
    texts += [" ".join(rng.sample(lines, 6)) for _ in range(50)]
    # 200 English passages with the dashes, quotes and dates of real prose
    for line in HALUEVAL.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts += [row["knowledge"], row["question"], row["right_answer"], row["hallucinated_answer"]]
    return texts


def test_multilingual_text_matches_lucene(lucene):
    texts = _real_texts()
    expected = lucene.analyze(texts)
    diffs = [(t[:80], analyze(t), want) for t, want in zip(texts, expected) if analyze(t) != want]
    assert not diffs, f"{len(diffs)} of {len(texts)} differ; first: {diffs[0]!r}"
    assert sum(map(len, expected)) > 10_000


@pytest.mark.parametrize("text,tokens", [
    # Lucene drops superscripts and other No characters: E=mc² indexes e and mc, not 2.
    ("E=mc² footnote¹ H₂O ½", ["e", "mc", "footnote", "h", "o"]),
    # URLs and e-mail addresses are split (the UAX29URLEmailTokenizer would keep them).
    ("mail bob.smith@example.com or https://www.example.com/a-b?x=1",
     ["mail", "bob.smith", "example.com", "or", "https", "www.example.com", "a", "b", "x", "1"]),
    ("東京タワー", ["東", "京", "タワー"]),
    ("👨\u200d👩\u200d👧 👍🏽 🇫🇷🇩🇪", ["👨\u200d👩\u200d👧", "👍🏽", "🇫🇷", "🇩🇪"]),
    ("ℹ\u200d🙂 ℹa", ["ℹ\u200d🙂", "ℹa"]),  # a letter that is also an emoji: the longer reading
    ("İSTANBUL ΟΔΟΣ", ["istanbul", "οδοσ"]),  # Java's per-code-point lower case
    ('צה"ל ג\'ירפה', ['צה"ל', "ג'ירפה"]),
])
def test_known_lucene_behaviour(text, tokens):
    assert analyze(text) == tokens


def test_buffer_cuts_long_tokens_at_255_utf16_units():
    assert [len(t) for t in analyze("x" * 600)] == [255, 255, 90]
    # Astral characters take two units: 127 of them fill 254 units, the 128th does not fit.
    assert [len(t) for t in analyze("\U00010400" * 200)] == [127, 73]


def test_python_310_engine_agrees():
    """Python 3.10 runs the same patterns on the regex package: it must find the same tokens."""
    import regex

    from langrag_eval.retrieval import standard_tokenizer as tok

    fallback, ascii_fallback = regex.compile(tok._TOKEN.pattern), regex.compile(tok._ASCII_TOKEN.pattern)
    rng = random.Random(3)
    texts = _real_texts()[:600] + [_decode(rng.randbytes(rng.randrange(120))) for _ in range(3000)]
    texts += ["".join(ch for ch in t if ch.isascii()) for t in texts]
    for text in texts:
        roles = tok._roles_of(text)
        assert [m.span() for m in fallback.finditer(roles)] == [m.span() for m in tok._TOKEN.finditer(roles)]
        if text.isascii():
            assert ascii_fallback.findall(text) == tok._ASCII_TOKEN.findall(text)
    assert sum(t.isascii() for t in texts) > 3000
