"""A valid export of twelve lines over two tasks, built with the chain's own functions: line 3's sentence and
line 4's content erased, receipted by the ERASED line 8; line 6 a model call whose sentence has an accent."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import orjson

from models.record.chain import GENESIS, Line, compact_json, seal
from models.record.note import Checkpoint, Signer, new_signer, origin_of, sign
from resolvers.read.export import EVERYTHING, FORMAT, line_json

TENANT = "shop"
ERASED_AT = datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc)


def _lines(root: str, child: str) -> list[Line]:
    start = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
    out = []
    for n in range(1, 13):
        task = root if n < 5 or n > 10 else child
        at = start + timedelta(seconds=n, microseconds=n * 7)
        base = dict(seq=n, task=task, at=at, summary_salt=None, payload_salt=None, summary_hash="", payload_hash="",
                    prev_hash="", hash="")
        if n == 8:
            out.append(Line(kind="ERASED", summary="Content erased by Priya: asked by the customer.", payload=None,
                            **base))
        elif n == 6:
            out.append(Line(kind="MODEL_CALL", summary="Estimé: Everyday answered; it cost $0.0002.",
                            payload=compact_json({"systemPrompt": "You estimate.", "messages": [], "response": "ok"}),
                            model="Everyday", route_rule="llm:default", attempts=1, cost_micros=200, input_tokens=120,
                            output_tokens=30, duration_ms=40, **base))
        elif n == 1:
            out.append(Line(kind="STARTED", summary="Estimator started EstimateRepair.", payload="Ticket T-7", **base))
        else:
            out.append(Line(kind="TOOL_CALL", summary=f"It asked for PartsFor ({n}).",
                            payload=compact_json({"fault": "rear brake", "n": n}), tool="PartsFor",
                            tool_call_id=f"c{n}", **base))
    head = GENESIS
    for line in out:
        seal(line, head)
        head = line.hash
    return out


def values(line: Line, erased_at: datetime | None = None, content_erased_at: datetime | None = None) -> tuple:
    """A line's values in the order the export reads them from the database."""
    return (line.seq, line.kind, line.task, line.at, line.summary, line.payload, line.summary_salt, line.payload_salt,
            line.summary_hash, line.payload_hash, line.prev_hash, line.hash, line.model, line.route_rule,
            line.attempts, line.cost_micros, line.input_tokens, line.output_tokens, line.tool, line.tool_call_id,
            line.is_error, line.duration_ms, erased_at, content_erased_at)


def as_json(line: Line, erased: bool = False, content_erased: bool = False) -> bytes:
    if erased:
        line.summary, line.summary_salt = "Erased.", None
    if content_erased:
        line.payload, line.payload_salt = None, None
    return line_json(values(line, ERASED_AT if erased else None, ERASED_AT if content_erased else None), EVERYTHING)


def header(root: str, length: int, head: str, note: str | None, tenant: str = TENANT) -> bytes:
    return orjson.dumps({"format": FORMAT, "root": root, "tenant": tenant, "chainLength": length, "chainHead": head,
                         "checkpoint": note, "exportedAt": "2025-03-01T10:00:00.000000Z"})


def checkpoint_note(signer: Signer, root: str, size: int, head: str, tenant: str = TENANT) -> str:
    return sign(Checkpoint(origin_of(tenant, root), size, head).body, signer)


class ExportFile:
    """One tree's export as a list of byte lines (header first), with the key that signed its checkpoint."""

    def __init__(self, signer: Signer | None = None) -> None:
        self.signer = signer or new_signer("agentlog-test")
        self.root, self.child = str(uuid.uuid4()), str(uuid.uuid4())
        self.chain = _lines(self.root, self.child)
        head = self.chain[-1].hash
        self.note = checkpoint_note(self.signer, self.root, 12, head)
        self.lines = [header(self.root, 12, head, self.note)]
        self.lines += [as_json(line, erased=line.seq == 3, content_erased=line.seq == 4) for line in self.chain]

    def line(self, seq: int) -> dict:
        return orjson.loads(self.lines[seq])

    def put(self, seq: int, value: dict) -> None:
        self.lines[seq] = orjson.dumps(value)

    def change(self, seq: int, **fields) -> None:
        self.put(seq, {**self.line(seq), **fields})
