"""A tiny local HTTP server that answers from a script, for the retry and timeout cases (a real
coordinator cannot be told to fail on cue). It records every request it receives."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] | list[Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    #: Hold the answer until this is set (a slow server), or drop the connection unanswered.
    hold: threading.Event | None = None
    drop: bool = False


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class ScriptedServer:
    def __init__(self, port: int = 0) -> None:
        self.replies: list[Reply] = []
        self.seen: list[Seen] = []
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                server.seen.append(
                    Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                reply = (
                    server.replies.pop(0)
                    if server.replies
                    else Reply(500, {"code": "INTERNAL_ERROR", "message": "script ran out"})
                )
                if reply.hold is not None:
                    reply.hold.wait(30)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    if not isinstance(reply.body, bytes):
                        self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except ConnectionError:  # the client gave up first (a timeout case)
                    self.close_connection = True

            do_GET = do_POST = do_PUT = _serve

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that timed out or a dropped connection: expected here

        self._httpd = Server(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    try:
        yield server
    finally:
        server.close()


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
