"""``langrag-eval index`` / ``search`` end to end, in-process: the embedded backend (BM25, and KNN /
hybrid with the packaged MiniLM), the OpenSearch path against osmem-server (BM25 only: osmem
refuses knn), and bad input answered with one line and a non-zero exit."""

from __future__ import annotations

import json

import pytest

from langrag_eval.cli import main

DOCS = {
    "refunds.md": "# Refunds\n\nRefunds take five business days after the parcel is back.\n",
    "shipping.txt": "Shipping is free above fifty euros. Parcels leave the warehouse daily.\n",
    "sub/returns.md": "# Returns\n\nReturn any item within thirty days for a full refund.\n",
}


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in DOCS.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    (tmp_path / "faq.jsonl").write_text(
        json.dumps({"id": "gift", "text": "Gift cards never expire.", "lang": "en"}) + "\n", encoding="utf-8")
    return tmp_path


def _search_json(capsys, *argv):
    capsys.readouterr()
    assert main(["search", *argv, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_index_then_bm25_search_on_the_embedded_backend(corpus, capsys):
    assert main(["index", "docs", "faq.jsonl", "--no-embeddings", "--store-dir", "st"]) == 0
    out = capsys.readouterr().out
    assert "indexed 4 chunks from 4 documents" in out and "text only" in out
    hits = _search_json(capsys, "gift cards", "--store-dir", "st", "-k", "2")
    assert hits[0]["id"].startswith("gift#0:") and hits[0]["metadata"]["lang"] == "en" and len(hits) <= 2
    assert main(["search", "refund parcel", "--store-dir", "st"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["rank", "score", "id", "text"]
    assert table[1].split()[2].startswith("refunds.md#0:")


def test_chunk_size_and_overlap_are_applied(corpus, capsys):
    long_text = " ".join(f"Sentence number {i} talks about parcels." for i in range(60))
    (corpus / "long.txt").write_text(long_text, encoding="utf-8")
    assert main(["index", "long.txt", "--no-embeddings", "--store-dir", "st",
                 "--chunk-size", "200", "--chunk-overlap", "50"]) == 0
    hits = _search_json(capsys, "parcels", "--store-dir", "st", "-k", "100")
    assert len(hits) > 10 and all(len(h["text"]) <= 200 for h in hits)
    starts = sorted(h["metadata"]["start"] for h in hits)
    assert starts[0] == 0 and all(b - a < 200 for a, b in zip(starts, starts[1:]))


def test_reindexing_keeps_stable_ids(corpus, capsys):
    for _ in range(2):
        assert main(["index", "docs", "--no-embeddings", "--store-dir", "st"]) == 0
    assert "(3 in total" in capsys.readouterr().out


def test_bad_jsonl_line_is_skipped_and_reported(corpus, capsys):
    (corpus / "bad.jsonl").write_text('{"id": "ok", "text": "fine"}\n{oops\n{"id": "x"}\n', encoding="utf-8")
    assert main(["index", "bad.jsonl", "--no-embeddings", "--store-dir", "st"]) == 1
    captured = capsys.readouterr()
    assert "indexed 1 chunks" in captured.out
    assert "bad.jsonl:2: not valid JSON" in captured.err
    assert 'bad.jsonl:3: field "text": text is missing' in captured.err


@pytest.mark.parametrize("argv,message", [
    (["index", "nowhere.txt", "--store-dir", "st"], "nowhere.txt: no such file or folder"),
    (["search", "   ", "--store-dir", "st"], "empty query"),
    (["search", "refund", "--store-dir", "empty-dir"], "no embedded index in empty-dir"),
    (["search", "refund", "--store-dir", "st", "--weights", "1"], "--weights takes two numbers"),
    (["search", "refund", "--backend", "opensearch", "--url", "http://127.0.0.1:9"],
     "cannot reach OpenSearch at http://127.0.0.1:9"),
    (["index", "docs", "--backend", "opensearch", "--url", "not a url", "--no-embeddings"],
     "OpenSearch URL must look like"),
    (["search", "refund", "--store-dir", "st", "--mode", "knn"], "no vectors"),
])
def test_bad_input_is_one_line_and_exit_2(corpus, capsys, argv, message):
    assert main(["index", "docs", "--no-embeddings", "--store-dir", "st"]) == 0
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_opensearch_backend_over_osmem(corpus, capsys, osmem_url):
    base = ["--backend", "opensearch", "--url", osmem_url, "--index", "shop"]
    assert main(["index", "docs", "faq.jsonl", "--no-embeddings", *base]) == 0
    assert "into index 'shop' (4 in total, text only)" in capsys.readouterr().out
    hits = _search_json(capsys, "gift cards", *base, "-k", "3")
    assert hits[0]["id"].startswith("gift#0:")
    assert [h["id"].split("#")[0] for h in _search_json(capsys, "warehouse", *base)] == ["shipping.txt"]
    assert main(["search", "refund", "--backend", "opensearch", "--url", osmem_url,
                 "--index", "nothing-here"]) == 2
    assert "index 'nothing-here' does not exist" in capsys.readouterr().err
    # osmem refuses knn: the CLI reports it in one line (this says nothing about knn results)
    assert main(["search", "refund", *base, "--mode", "knn"]) == 2
    err = capsys.readouterr().err
    assert "no knn_vector field" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_knn_and_hybrid_search_with_minilm(corpus, capsys):
    pytest.importorskip("sentence_transformers")
    assert main(["index", "docs", "faq.jsonl", "--store-dir", "st"]) == 0
    assert "text only" not in capsys.readouterr().out
    top = {}
    for mode, fusion in [("knn", "rrf"), ("hybrid", "rrf"), ("hybrid", "server_rrf"), ("hybrid", "normalization")]:
        hits = _search_json(capsys, "when do I get my money back", "--store-dir", "st",
                            "--mode", mode, "--fusion", fusion, "-k", "2")
        assert len(hits) == 2
        top[(mode, fusion)] = hits[0]["id"].split("#")[0]
    assert top[("knn", "rrf")] in ("refunds.md", "sub/returns.md")
    assert top[("hybrid", "rrf")] == top[("hybrid", "server_rrf")]  # embedded: same formula
