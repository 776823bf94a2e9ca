"""Loopback HTTP servers for tests that feed a real program (Prometheus, Flux's source-controller)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def serving(handler: Any) -> Iterator[str]:
    """A threaded server of ``handler`` on a free loopback port while inside; its ``host:port``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Quiet(BaseHTTPRequestHandler):
    """A handler that logs no line per request on stderr."""

    def log_message(self, *args: object) -> None:
        pass
