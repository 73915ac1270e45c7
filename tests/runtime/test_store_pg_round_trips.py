"""Round trips to a shared PostgreSQL store, on a real server: a claim this worker wrote, with over
half its lifetime left, is held without asking the server (no other worker takes a claim before it
expires); past half, the server is asked again; and a connection the server dropped costs the next
statement nothing but a reconnect (no ping before every statement)."""

from __future__ import annotations

import time

import psycopg
import pytest
from sqlalchemy import event

from langrag_eval.runtime.pgstore import PostgresRunStore
from store_backends import postgres_schema

pytestmark = pytest.mark.timeout(120)


def _counted(store: PostgresRunStore) -> list[str]:
    statements: list[str] = []
    event.listen(store._engine, "before_cursor_execute",
                 lambda conn, cursor, sql, params, context, many: statements.append(sql.split()[0]))
    return statements


def test_a_fresh_claim_is_held_without_a_round_trip_and_a_half_spent_one_asks_the_server() -> None:
    with postgres_schema() as url:
        store = PostgresRunStore(url, claim_ttl=2.0)
        try:
            run = store.open_run("grade", {"n": 3})
            assert store.claim(run, "vrag", ["a", "b"]) == ["a", "b"]
            statements = _counted(store)
            assert store.hold_claim(run, "vrag", "a") and store.hold_claim(run, "vrag", "b")
            assert statements == []
            time.sleep(1.1)  # past half of the claim's two seconds
            assert store.hold_claim(run, "vrag", "a")
            assert statements == ["UPDATE"]
            assert store.hold_claim(run, "vrag", "a")  # renewed just now: held again without asking
            assert statements == ["UPDATE"]
            # an item this worker never claimed is the server's to answer, and is not held
            assert not store.hold_claim(run, "vrag", "c")
            assert statements == ["UPDATE", "UPDATE"]
        finally:
            store.close()


def test_a_claim_another_worker_took_over_is_not_held(tmp_path) -> None:
    with postgres_schema() as url:
        store = PostgresRunStore(url, claim_ttl=1.0)
        try:
            run = store.open_run("grade", {"n": 1})
            assert store.claim(run, "vrag", ["a"]) == ["a"]
            # the claim expires, and a worker elsewhere takes the item over
            time.sleep(1.05)
            with psycopg.connect(url.split("?")[0], autocommit=True,
                                 options=url.split("options=")[1].replace("%3D", "=")) as other:
                taken = other.execute("UPDATE claims SET owner='elsewhere:1:x', expires=%s WHERE item='a' "
                                      "AND expires<%s RETURNING item", (time.time() + 60, time.time())).fetchall()
            assert taken == [("a",)]
            assert not store.hold_claim(run, "vrag", "a")
        finally:
            store.close()


def test_a_connection_the_server_dropped_is_replaced_for_the_next_statement() -> None:
    with postgres_schema() as url:
        store = PostgresRunStore(url)
        try:
            run = store.open_run("grade", {})
            assert store.cache_get("nothing") is None
            pids = {store._rows("SELECT pg_backend_pid()")[0][0] for _ in range(3)}  # the pooled connection(s)
            base, options = url.split("?")[0], url.split("options=")[1].replace("%3D", "=")
            with psycopg.connect(base, autocommit=True, options=options) as admin:
                for pid in pids:
                    assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
            assert store.cache_get("nothing") is None
            assert store.judged_since(run, "vrag", 0.0) == 0
            assert store._rows("SELECT pg_backend_pid()")[0][0] not in pids
        finally:
            store.close()
