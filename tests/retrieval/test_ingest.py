"""Chunking, loaders and ingestion."""

from __future__ import annotations

import json

import numpy as np
import pytest

from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.errors import ConfigError
from langrag_eval.retrieval import EmbeddedBackend
from langrag_eval.retrieval.chunking import Source, chunk_sources, chunk_text
from langrag_eval.retrieval.ingest import aingest, ingest, load_jsonl, load_path

TEXT = ("Retrieval-augmented generation grounds answers in passages. " * 12 + "\n\n"
        + "A second paragraph talks about ranking and fusion of lists. " * 14)


def test_default_windows_are_1000_chars_with_about_25_percent_overlap():
    text = TEXT * 6
    spans = chunk_text(text)
    assert len(spans) > 3
    assert all(e - s <= 1000 for s, e, _ in spans)
    assert all(e - s >= 500 for s, e, _ in spans[:-1])
    overlaps = [spans[i][1] - spans[i + 1][0] for i in range(len(spans) - 1)]
    assert all(150 <= o <= 250 for o in overlaps), overlaps
    assert spans[-1][1] == len(text)
    for s, e, piece in spans:
        assert piece == text[s:e]
        assert s == 0 or text[s - 1].isspace()  # chunks start on a word


def test_size_and_overlap_are_configurable_and_checked():
    spans = chunk_text("abcdefghij" * 10, size=30, overlap=10)  # no spaces: hard cuts
    assert [(s, e) for s, e, _ in spans][:3] == [(0, 30), (20, 50), (40, 70)]
    for bad in ({"size": 0}, {"size": 10, "overlap": 10}, {"overlap": -1}):
        with pytest.raises(ConfigError):
            chunk_text("text", **bad)


def test_chunk_ids_are_stable_and_metadata_kept():
    src = [Source(id="guide.md", text=TEXT, metadata={"lang": "en"})]
    a, b = chunk_sources(src, size=300, overlap=75), chunk_sources(src, size=300, overlap=75)
    assert [c.id for c in a] == [c.id for c in b]
    assert len({c.id for c in a}) == len(a)
    assert all(c.id.startswith("guide.md#") for c in a)
    assert a[1].metadata == {"lang": "en", "source": "guide.md", "chunk_index": 1,
                             "start": a[1].metadata["start"], "end": a[1].metadata["end"]}
    edited = chunk_sources([Source(id="guide.md", text=TEXT.replace("grounds", "anchors", 1))], size=300, overlap=75)
    assert edited[0].id != a[0].id and edited[-1].id == a[-1].id


def test_loaders(tmp_path):
    (tmp_path / "notes.txt").write_text("Plain notes about zebras.", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "guide.md").write_text("---\ntags: x\n---\n# Setup Guide\n\nInstall it.\n",
                                              encoding="utf-8")
    (tmp_path / "empty.txt").write_text("   ", encoding="utf-8")
    (tmp_path / "ignored.csv").write_text("a,b", encoding="utf-8")
    rows = [json.dumps({"id": "r1", "text": "first row", "lang": "en"}), "{broken",
            json.dumps({"id": "r2", "body": "no text field"}), json.dumps({"id": "r3", "text": ""}),
            json.dumps(["not", "an", "object"]), json.dumps({"text": "no id here"}),
            json.dumps({"id": "r1", "text": "duplicate"})]
    (tmp_path / "rows.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    loaded = load_path(tmp_path)
    by_id = {s.id: s for s in loaded.sources}
    assert set(by_id) == {"notes.txt", "sub/guide.md", "r1", "rows:6"}
    assert by_id["sub/guide.md"].metadata["title"] == "Setup Guide"
    assert "tags" not in by_id["sub/guide.md"].text
    assert by_id["r1"].metadata == {"lang": "en"}
    messages = sorted(str(e) for e in loaded.errors)
    assert any("empty.txt" in m and "no text" in m for m in messages)
    jsonl = sorted((e.line, e.field) for e in loaded.errors if e.path and e.path.endswith("rows.jsonl"))
    assert jsonl == [(2, None), (3, "text"), (4, "text"), (5, None), (7, "id")]
    assert any(m.endswith('rows.jsonl:3: field "text": text is missing') for m in messages)


def test_jsonl_custom_fields(tmp_path):
    (tmp_path / "q.jsonl").write_text(json.dumps({"doc": 7, "body": "seven"}) + "\n", encoding="utf-8")
    loaded = load_jsonl(tmp_path / "q.jsonl", text_field="body", id_field="doc")
    assert [(s.id, s.text) for s in loaded.sources] == [("7", "seven")] and not loaded.errors
    assert load_path(tmp_path / "missing").errors[0].path.endswith("missing")


async def test_ingest_chunks_embeds_and_indexes():
    seen = []
    embedder = FunctionEmbedder(lambda t: (seen.append(len(t)), np.ones((len(t), 3)))[1], model_id="ones")
    backend = EmbeddedBackend()
    report = await aingest(backend, [Source(id="a", text=TEXT), Source(id="b", text="short text")],
                           embedder=embedder, size=200, overlap=50, embed_batch=4, index_batch=5)
    assert report.indexed == backend.count() and report.failed == []
    assert sum(seen) == report.indexed and max(seen) <= 4
    assert backend.search(vector=[1, 1, 1], mode="knn", k=1)
    assert ingest(EmbeddedBackend(), [Source(id="c", text="only text")], vectors=False).indexed == 1
