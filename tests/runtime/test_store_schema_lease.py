"""The run store's schema version, migration and refusals, and the one-writer lease per run.

Stores "from another version" are built with SQLite itself (the version-1 tables as released, a
column added or dropped, a future ``user_version``, a non-JSON row, overwritten pages), not through
the store's own code.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from langrag_eval.errors import ConfigError
from langrag_eval.runtime import RunStore
from langrag_eval.runtime.schema import SCHEMA_VERSION
from langrag_eval.runtime.store import RunBusyError, StaleRunError

# The tables exactly as stores written before schema versioning hold them.
V1 = """
CREATE TABLE runs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, config TEXT NOT NULL, judge TEXT,
    created REAL NOT NULL, finished REAL, summary TEXT);
CREATE TABLE judgments (run_id TEXT NOT NULL, item TEXT NOT NULL, task TEXT NOT NULL,
    scored INTEGER NOT NULL, result TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (run_id, item, task));
CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, model TEXT NOT NULL,
    key TEXT NOT NULL, cached INTEGER NOT NULL, ok INTEGER NOT NULL, attempts INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost REAL, error TEXT,
    created REAL NOT NULL);
CREATE TABLE cache (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE artifacts (run_id TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
    created REAL NOT NULL, PRIMARY KEY (run_id, name));
INSERT INTO runs VALUES ('grade-abc', 'grade', '{"file": "qa.csv"}', 'scripted', 1.0, 2.0, '{"items": 1}');
INSERT INTO judgments VALUES ('grade-abc', 'q1', 'vrag', 1, '{"score": 4}', 1.5);
INSERT INTO cache VALUES ('k1', 'scripted', 'Score: [[4]]', 3, 2, 1.2);
"""


def _v1_store(path: Path, extra: str = "") -> Path:
    db = sqlite3.connect(path)
    db.executescript(V1 + extra)
    db.commit()
    db.close()
    return path


def test_version_one_store_is_migrated_and_keeps_its_data(tmp_path: Path) -> None:
    path = _v1_store(tmp_path / "old.sqlite")
    store = RunStore(path)
    assert store.get_judgment("grade-abc", "q1", "vrag") == {"score": 4}
    assert store.cache_get("k1").text == "Score: [[4]]"
    assert store.run("grade-abc")["summary"] == {"items": 1}
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert "fingerprint" in {r[1] for r in db.execute("PRAGMA table_info(judgments)")}


def test_newer_store_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    RunStore(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(ConfigError, match=r"new\.sqlite: run store schema version 3 is newer"):
        RunStore(path)


@pytest.mark.parametrize("change, expected", [
    ("ALTER TABLE judgments ADD COLUMN reviewer TEXT;", "unexpected column.*reviewer"),
    ("ALTER TABLE cache DROP COLUMN completion_tokens;", "missing column.*completion_tokens"),
])
def test_store_with_other_columns_is_refused(tmp_path: Path, change: str, expected: str) -> None:
    path = _v1_store(tmp_path / "odd.sqlite", change)
    with pytest.raises(ConfigError, match=expected) as err:
        RunStore(path)
    assert "\n" not in str(err.value) and "odd.sqlite" in str(err.value)
    # refused without being changed: still a version-1 store
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 0


def test_non_json_row_is_a_clear_error(tmp_path: Path) -> None:
    path = _v1_store(tmp_path / "s.sqlite", "UPDATE judgments SET result='{oops';")
    store = RunStore(path)
    with pytest.raises(ConfigError, match=r"s\.sqlite: run grade-abc's judgment 'q1' \(vrag\) is not valid JSON"):
        store.get_judgment("grade-abc", "q1", "vrag")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "pages"])
def test_damaged_file_is_refused_in_one_line(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "d.sqlite"
    if damage == "garbage":
        path.write_bytes(b"this is not a database\n" * 100)
    else:
        store = RunStore(path)
        for i in range(300):
            store.put_judgment("r", f"item-{i}", "t", {"text": "x" * 200}, scored=True)
        store.close()
        data = bytearray(path.read_bytes())
        if damage == "truncated":
            data = data[:100]
        else:
            for offset in range(4096, len(data), 4096):  # every page but the header
                data[offset:offset + 64] = b"\xff" * 64
        path.write_bytes(bytes(data))
    with pytest.raises(ConfigError) as err:
        store = RunStore(path)
        store.judgments("r")  # a page overwritten inside a table fails only when read
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_store_path_that_is_a_folder_or_under_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder"):
        RunStore(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="cannot create the store's folder"):
        RunStore(tmp_path / "file" / "runs.sqlite")


def test_read_only_store_reads_and_refuses_to_write(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store = RunStore(path)
    run = store.open_run("grade", {"a": 1})
    store.put_artifact(run, "x", {"n": 1})
    store.finish_run(run, {"n": 1})
    store.close()
    ro = RunStore(path, read_only=True)
    assert ro.get_artifact(run, "x") == {"n": 1}
    with pytest.raises(ConfigError, match="read-only"):
        ro.open_run("grade", {"a": 2})
    with pytest.raises(ConfigError, match="no run store here"):
        RunStore(tmp_path / "absent.sqlite", read_only=True)


# ---- the lease --------------------------------------------------------------------------------

def test_second_process_is_refused_or_waits_and_a_dead_holder_expires(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    holder = RunStore(path, lease_ttl=1.0)
    run = holder.open_run("grade", {"a": 1})
    # Another process: simulated by a lease row with another owner, as that process writes it. It
    # holds the lease until the second process starts waiting, then stops renewing it: the lease
    # expires half a second later, however long the steps before took on a loaded machine.
    other = sqlite3.connect(path)
    other.execute("UPDATE leases SET owner='elsewhere:1:x', pid=1, host='elsewhere', expires=? "
                  "WHERE run_id=?", (time.time() + 3600, run))
    other.commit()
    holder.close()  # gives back only its own leases: the other owner's row stays
    second = RunStore(path, lease_ttl=1.0)
    with pytest.raises(RunBusyError, match="process 1 on elsewhere"):
        second.open_run("grade", {"a": 1}, wait=False)
    told: list[str] = []
    expires: list[float] = []

    def waiting(message: str) -> None:
        told.append(message)
        expires.append(time.time() + 0.5)
        other.execute("UPDATE leases SET expires=? WHERE run_id=?", (expires[0], run))
        other.commit()

    assert second.open_run("grade", {"a": 1}, on_wait=waiting) == run  # taken over on expiry
    assert time.time() >= expires[0] and len(told) == 1 and "waiting" in told[0]
    assert second.lease_holder(run)["pid"] != 1


def test_lease_is_renewed_while_held_and_released_when_finished(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s.sqlite", lease_ttl=0.6)
    run = store.open_run("grade", {"a": 1})
    first = store.lease_holder(run)["expires"]
    time.sleep(0.5)
    assert store.lease_holder(run)["expires"] > first  # renewed by the keeper thread
    store.finish_run(run, {})
    assert store.lease_holder(run) is None


def test_named_run_with_changed_inputs_or_settings(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s.sqlite")
    run = store.open_run("grade", {"threshold": 4}, "mine", inputs={"file": "aaa"})
    store.put_judgment(run, "q1", "vrag", {"score": 4}, scored=True, fingerprint="f1")
    store.finish_run(run, {})
    with pytest.raises(StaleRunError, match="other contents of file"):
        store.open_run("grade", {"threshold": 4}, "mine", inputs={"file": "bbb"})
    with pytest.raises(StaleRunError, match=r"other settings \(threshold\)"):
        store.open_run("grade", {"threshold": 3}, "mine", inputs={"file": "aaa"})
    # continuing with other contents keeps the judgments (fingerprints decide), and the refusal
    # above gave the lease back
    store.open_run("grade", {"threshold": 4}, "mine", inputs={"file": "bbb"}, allow_changed=True)
    assert store.get_judgment_record("mine", "q1", "vrag") == ({"score": 4}, "f1")
    assert json.loads(json.dumps(store.run("mine")["inputs"])) == {"file": "bbb"}
    # continuing with other settings drops them: each may depend on the settings
    store.open_run("grade", {"threshold": 3}, "mine", inputs={"file": "bbb"}, allow_changed=True)
    assert store.get_judgment("mine", "q1", "vrag") is None


def test_derived_run_ids_follow_input_contents(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s.sqlite")
    a = store.open_run("tournament", {"files": "same/path"}, inputs={"answers": "aaa"})
    b = store.open_run("tournament", {"files": "same/path"}, inputs={"answers": "bbb"})
    assert a != b
    assert store.open_run("tournament", {"files": "same/path"}, inputs={"answers": "aaa"}) == a
