"""Offline verification of an incident bundle (agentlog-bundle/v1, SPEC 9.3): plain functions, no server, no database.

A bundle is JSON Lines, read and written as a stream:

    {"format":"agentlog-bundle/v1","tenant":T,"trees":[root, ...],"ledger":root or null,"exportedAt":...}
    {"part":"tree","root":root}        then that tree's export (7.3): its header, with the latest signed
    ...                                 checkpoint, and its lines
    {"part":"ledger","root":root}      then the tenant's ledger's export, the same way

A part begins at a line that begins `{"part":`, which no export line does. Each part is checked by the one export
checker (`export_check.py`, feeding `check.py`), a line at a time, so memory stays flat in the bundle's size. The
bundle's own faults (a part its header names that is missing, one it does not name, a part whose export is of
another tree or tenant) are named with the tree and the reason MALFORMED.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import orjson

from models.record.export_check import Verdict, check_export
from models.record.note import Verifier
from models.record.vocabulary import VerifyReason

FORMAT = "agentlog-bundle/v1"
PART = b'{"part":'
TREE, LEDGER = "tree", "ledger"
_uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").fullmatch


@dataclass(frozen=True)
class PartVerdict:
    """One part's verdict: which tree, whether it is the ledger, and the export checker's answer."""

    part: str
    root: str
    verdict: Verdict
    start: int = 0

    @property
    def file_line(self) -> int | None:
        """The bundle's line of the part's first fault (its export's line `verdict.line`)."""
        return None if self.verdict.line is None else self.start + self.verdict.line

    @property
    def whole_to_checkpoint(self) -> bool:
        """Intact and ending at the head its checkpoint signed, the signature checked with the key."""
        return self.verdict.intact and self.verdict.signature_checked


@dataclass(frozen=True)
class BundleFault:
    root: str | None
    line: int
    problem: str
    reason: VerifyReason = VerifyReason.MALFORMED


@dataclass
class BundleVerdict:
    parts: list[PartVerdict] = field(default_factory=list)
    faults: list[BundleFault] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.faults and all(part.verdict.intact for part in self.parts)

    def as_json(self) -> dict:
        return {
            "intact": self.intact,
            "parts": [{"part": p.part, "root": p.root, "wholeToCheckpoint": p.whole_to_checkpoint,
                       **p.verdict.as_json(), "fileLine": p.file_line} for p in self.parts],
            "faults": [{"root": f.root, "line": f.line, "reason": f.reason, "problem": f.problem}
                       for f in self.faults],
        }


@dataclass(frozen=True)
class Header:
    tenant: str
    trees: tuple[str, ...]
    ledger: str | None


class Malformed(Exception):
    pass


def parse_header(raw: bytes) -> Header:
    try:
        header = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise Malformed(f"The first line is not JSON: it is no {FORMAT} header.") from exc
    if type(header) is not dict or header.get("format") != FORMAT:
        raise Malformed(f"The first line is no {FORMAT} header.")
    trees, ledger, tenant = header.get("trees"), header.get("ledger"), header.get("tenant")
    if (type(trees) is not list or not all(type(t) is str and _uuid(t) for t in trees) or type(tenant) is not str
            or not (ledger is None or type(ledger) is str and _uuid(ledger))):
        raise Malformed("The header's tenant, trees or ledger is not what a bundle names.")
    return Header(tenant, tuple(trees), ledger)


def parse_part(raw: bytes) -> tuple[str, str]:
    try:
        part = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise Malformed("A part's first line is not JSON.") from exc
    if (type(part) is not dict or part.get("part") not in (TREE, LEDGER) or type(part.get("root")) is not str
            or not _uuid(part["root"])):
        raise Malformed("A part's first line does not say which tree it holds.")
    return part["part"], part["root"]


class Parts:
    """The bundle's lines, handed out a part at a time: `body()` yields one part's export up to the next part."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self.lines = iter(lines)
        self.at = 0
        self.next: bytes | None = self.read()

    def read(self) -> bytes | None:
        for raw in self.lines:
            self.at += 1
            if raw.strip():
                return raw
        return None

    def body(self) -> Iterator[bytes]:
        while True:
            raw = self.read()
            if raw is None or raw.startswith(PART):
                self.next = raw
                return
            yield raw


def _export_header(raw: bytes | None) -> dict:
    try:
        found = orjson.loads(raw) if raw is not None else None
    except orjson.JSONDecodeError:
        return {}
    return found if type(found) is dict else {}


def check_bundle(lines: Iterable[bytes], verifier: Verifier | None = None) -> BundleVerdict:
    """Every part of the bundle checked in order; the verdict names each fault with its tree, line and reason."""
    parts = Parts(lines)
    out = BundleVerdict()
    first = parts.next
    if first is None:
        out.faults.append(BundleFault(None, 1, f"The file is empty: it has no {FORMAT} header."))
        return out
    try:
        header = parse_header(first)
    except Malformed as bad:
        out.faults.append(BundleFault(None, 1, str(bad)))
        return out
    parts.next = parts.read()
    seen: list[tuple[str, str]] = []
    while parts.next is not None:
        at = parts.at
        try:
            kind, root = parse_part(parts.next)
        except Malformed as bad:
            out.faults.append(BundleFault(None, at, str(bad)))
            for _ in parts.body():
                pass
            continue
        body = parts.body()
        head = next(body, None)
        exported = _export_header(head)
        if exported.get("root") != root or exported.get("tenant") != header.tenant:
            out.faults.append(BundleFault(root, at + 1, f"The {kind} part of {root} holds the export of another "
                                                        "tree or tenant."))
        verdict = check_export(_with(head, body), verifier)
        for _ in body:
            pass
        out.parts.append(PartVerdict(kind, root, verdict, at))
        seen.append((kind, root))
    named = [(TREE, root) for root in header.trees] + ([(LEDGER, header.ledger)] if header.ledger else [])
    for kind, root in named:
        if seen.count((kind, root)) != 1:
            said = "is missing" if (kind, root) not in seen else "is there more than once"
            out.faults.append(BundleFault(root, parts.at, f"The {kind} part of {root} that the header names {said}."))
    for kind, root in seen:
        if (kind, root) not in named:
            out.faults.append(BundleFault(root, parts.at, f"The {kind} part of {root} is not named by the header."))
    return out


def _with(head: bytes | None, body: Iterator[bytes]) -> Iterator[bytes]:
    if head is not None:
        yield head
    yield from body
