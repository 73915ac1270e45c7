"""Tests never reach the network: every socket connection outside loopback fails the test. The data
the tests read lives in the repository, under tests/data (see its README for sources and licences)."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import sqlite3
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("LANGRAG_JUDGE", None)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in ("localhost", "") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(sock: socket.socket, address: object) -> None:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    if not _is_loopback(host):
        raise ConnectionRefusedError(f"network access blocked in tests: {address!r}")


def _guarded_connect(self: socket.socket, address: object) -> None:
    _check(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
    if host is not None and not _is_loopback(host if isinstance(host, str) else host.decode()):
        raise socket.gaierror(f"name resolution blocked in tests: {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo  # type: ignore[assignment]


@pytest.fixture
def spider_company_db(tmp_path: Path) -> Path:
    """Spider's company_employee database (people 7 rows, company 19, employment 5), built from its
    SQL source in a fresh file the test may change."""
    db = tmp_path / "company_employee.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript((DATA / "spider-company" / "schema.sql").read_text(encoding="utf-8"))
    conn.close()
    return db


@pytest.fixture
def company_documents(spider_company_db: Path, tmp_path: Path) -> Path:
    """A corpus about the same companies, ``{id: text}`` keyed by Company_ID ("1" .. "19"), written
    here from the database's rows: one document of two paragraphs (60 words or more) a company."""
    conn = sqlite3.connect(spider_company_db)
    people = {row[0]: row[1:] for row in conn.execute("SELECT People_ID, Name, Age, Nationality, "
                                                          "Graduation_College FROM people")}
    docs = {}
    for cid, name, hq, industry, sales, profits, assets, value in conn.execute(
            "SELECT * FROM company ORDER BY Company_ID"):
        staff = [f"{people[pid][0]}, aged {people[pid][1]}, from {people[pid][2]} and a graduate of "
                 f"{people[pid][3]}, has worked at {name} for {years} years."
                 for pid, years in conn.execute("SELECT People_ID, Year_working FROM employment "
                                                "WHERE Company_ID = ? ORDER BY People_ID", (cid,))]
        docs[str(int(cid))] = (
            f"{name} is a company in the {industry.lower()} industry, with its headquarters in {hq}. "
            f"In the year on record its sales came to {sales} billion dollars and its profits to "
            f"{profits} billion. It held assets worth {assets} billion dollars, and the market valued "
            f"the whole company at {value} billion.\n\n"
            + (" ".join(staff) if staff else
               f"None of the people in the employment records has worked at {name}, so the records "
               f"say nothing about its staff, its managers or how long anyone stayed there."))
    conn.close()
    path = tmp_path / "company_documents.json"
    path.write_text(json.dumps(docs, indent=1), encoding="utf-8")
    return path
