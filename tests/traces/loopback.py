"""A fake API server on a loopback port for as long as a ``with`` block runs: the trace stores'
stand-ins (LangSmith, Langfuse) are handlers over a store of what they were sent."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """The server's base URL, ``http://127.0.0.1:PORT``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
