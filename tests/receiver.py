"""A real HTTP receiver on loopback for webhook deliveries: it keeps every request it is sent and answers each
with the next status of its script (then 200)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from models import WebhookDelivery


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    answers: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)

    def verified(self, secret: str) -> list[dict]:
        """Every body received, each checked with the `standardwebhooks` package's own verifier."""
        return [Webhook(secret).verify(r.body, r.headers) for r in self.received]


@contextmanager
def receiving(*answers: int, held: threading.Event | None = None) -> Iterator[Receiver]:
    """With `held`, each request is kept (up to 30 s) until it is set before it is answered."""
    receiver = Receiver(url="", answers=list(answers))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            with lock:
                receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                status = receiver.answers.pop(0) if receiver.answers else 200
            if held is not None:
                held.wait(30)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_port}/hooks"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


async def settle_owed(tenant: str) -> None:
    """Deliveries a test left owed are due no more: a server other tests start on the same database would try
    them, and on SQLite its writes would race the tests' own."""
    await WebhookDelivery.filter(tenant=tenant, due_at__isnull=False).update(due_at=None)
