"""Tests never reach the network: every socket connection outside loopback fails the test."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
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
def shared_data() -> Path:
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"shared data not found at {path}")
    return path
