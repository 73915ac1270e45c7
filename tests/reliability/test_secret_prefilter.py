"""``redact`` looks for a secret word or a key's start in the casefolded text before it runs the
full patterns (most texts have neither). That look-ahead must never change what is masked: over
generated texts, made of the pieces secrets and the words near them are made of (in any case,
with invisible characters and escapes between), ``redact`` gives what it gives with the
look-ahead switched off, the full patterns run on every text.

And a text with hiding places is also read with them removed or decoded: every character of that
reading maps back to where it came from, itself or the escape that wrote it."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval import errors
from langrag_eval.errors import redact

PIECES = ["sk-", "sk-proj-", "sk-ant-", "AKIA", "ASIA", "Asia", "akia", "ghp_", "github_pat_", "hf_", "glpat-",
          "global-", "gldt-", "sk_live_", "rk_test_", "whsec_", "xoxb-", "AIza", "eyJ", ".", "-", "_",
          "password", "passwd", "pwd", "secret", "token", "api_key", "apikey", "access_key", "sort_key", "key",
          "credentials", "auth", "db_pass", "bypass", "Authorization", "Proxy-Authorization", "x-api-key",
          "Bearer ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "://u:", "@h/",
          "=", ": ", '": "', '"', "'", " ", "\n", "&", "\u200b", "\u202e", "\\u0073", "\\x6b", "&#115;",
          "&#x6B;", "\u212a", "\u017f", "\u0130", "\u0131", "ABCDEFGHIJKLMNOP", "0123456789abcdefghij",
          "QWERTYUIOPASDFGHJKLZ1234", "Abcdefghijklmnop1234"]
TEXTS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=16).map("".join)


@settings(max_examples=1500, deadline=None)
@given(TEXTS)
def test_the_look_ahead_never_changes_what_is_masked(text: str) -> None:
    fast = redact(text, {})
    with pytest.MonkeyPatch.context() as mp:
        everything = re.compile("")  # matches every text: the full patterns always run
        mp.setattr(errors, "_SECRET_HINT", everything)
        mp.setattr(errors, "_KEY_START", everything)
        full = redact(text, {})
    assert fast == full


HIDDEN = st.sampled_from(["\u200b", "\u00ad", "\u202e", "\ufeff", "\\u0073", "\\u006B", "\\x41", "&#115;",
                          "&#x4b;", "&#1114112;", "&#99999999;"])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(HIDDEN, st.text("ab-_=é ", min_size=1, max_size=4)), max_size=20).map("".join))
def test_each_revealed_character_maps_back_to_its_source(text: str) -> None:
    shown, source = errors._revealed(text)
    for i, char in enumerate(shown):
        a, b = source(i, i + 1)
        piece = text[a:b]
        if b - a == 1:
            assert piece == char
        else:  # the escape that wrote it
            decoded = html.unescape(piece) if piece.startswith("&#") else chr(int(piece[2:], 16))
            assert decoded == char, (piece, char)
    if shown:
        assert source(0, len(shown)) == (source(0, 1)[0], source(len(shown) - 1, len(shown))[1])
