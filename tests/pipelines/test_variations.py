"""Reading the query variations out of a model's reply."""

from __future__ import annotations

import pytest

from langrag_eval.pipelines import parse_variations

Q = "What is the IP rating of the IM72D128?"


@pytest.mark.parametrize("reply, expected", [
    ("alpha\nbeta\ngamma\ndelta", ["alpha", "beta", "gamma", "delta"]),
    ("1. alpha\n2) beta\n(3) gamma\n4: delta", ["alpha", "beta", "gamma", "delta"]),
    ("- alpha\n* beta\n\u2022 gamma\n+ delta", ["alpha", "beta", "gamma", "delta"]),
    ("**1.** alpha\n**2. beta**\n### gamma\n> delta", ["alpha", "beta", "gamma", "delta"]),
    ('1. "alpha"\n2. \u201cbeta\u201d\n3. `gamma`\n4. \'delta\'', ["alpha", "beta", "gamma", "delta"]),
    ("Query 1: alpha\nVariation 2 - beta\nSearch query 3: gamma\nquestion 4) delta",
     ["alpha", "beta", "gamma", "delta"]),
    ("Here are four search queries:\n\n1. alpha\n\n\n2. beta\n", ["alpha", "beta"]),
    ("```\nalpha\nbeta\n```", ["alpha", "beta"]),
    ("\r\n  alpha  \r\n\tbeta\t\r\n", ["alpha", "beta"]),
])
def test_markers_blank_lines_and_fences_are_stripped(reply, expected):
    assert parse_variations(reply, original=Q, n=4) == expected


def test_duplicates_are_dropped_ignoring_case_spacing_and_closing_punctuation():
    reply = "IM72D128 waterproofing\nim72d128   WATERPROOFING?\n- IM72D128 waterproofing.\nsleep mode"
    assert parse_variations(reply, original=Q, n=4) == ["IM72D128 waterproofing", "sleep mode"]


def test_the_original_query_never_counts_as_a_variation():
    reply = f"1. {Q}\n2. {Q.lower().rstrip('?')}\n3. IP57 microphone"
    assert parse_variations(reply, original=Q, n=4) == ["IP57 microphone"]


def test_truncated_to_n_after_dropping():
    reply = "a1\na1\nb2\nc3\nd4\ne5"
    assert parse_variations(reply, original=Q, n=3) == ["a1", "b2", "c3"]
    assert parse_variations(reply, original=Q, n=1) == ["a1"]


def test_numbers_inside_queries_are_kept():
    reply = "3.3V supply sensors\n2024 microphone releases\n60 GHz radar\n10. TLE4971 120 A"
    assert parse_variations(reply, original=Q, n=4) == [
        "3.3V supply sensors", "2024 microphone releases", "60 GHz radar", "TLE4971 120 A"]


def test_a_numbered_line_ending_with_a_colon_is_a_query_not_a_preamble():
    assert parse_variations("1. IM72D128 features:\n2. price", original=Q, n=4) == [
        "IM72D128 features:", "price"]


def test_an_empty_or_marker_only_reply_gives_no_variations():
    assert parse_variations("", original=Q, n=4) == []
    assert parse_variations("1.\n-\n**\n\"\"", original=Q, n=4) == []
