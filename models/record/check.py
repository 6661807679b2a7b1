"""The one chain checker: lines in seq order in, the first fault out, with one reason from a closed set.

`verifyTrace`, `agentlog verify TASK` and `agentlog verify --file` all feed it; nothing here touches a database,
GraphQL or a file. The server's lines always carry their texts and salts; an export's may withhold them
(`withheld=True`), and a line of a task the exporter could not see carries only its hashes (`feed_hashes`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from models.record.chain import COMMIT_TAG, ERASED_SENTENCE, GENESIS, LINE_TAG, Line, commit, fixed_json, line_hash
from models.record.vocabulary import LineKind, VerifyReason

ERASED = LineKind.ERASED
_sha256 = hashlib.sha256


@dataclass(frozen=True, slots=True)
class Fault:
    seq: int
    reason: VerifyReason
    problem: str
    field: str | None = None


@dataclass(frozen=True, slots=True)
class TraceCheck:
    intact: bool
    lines: int
    broken_at: int | None
    problem: str | None
    erased: int
    reason: VerifyReason | None = None
    field: str | None = None


HEXES = (("summarySalt", "summary_salt"), ("payloadSalt", "payload_salt"), ("summaryHash", "summary_hash"),
         ("payloadHash", "payload_hash"), ("prevHash", "prev_hash"))


def _malformed(line: Line, n: int) -> Fault:
    """The fault of a line whose salts or hashes the encoding could not take, naming the first such field."""
    for name, attribute in HEXES:
        value = getattr(line, attribute)
        if value is not None and not _is_hex(value):
            return Fault(n, VerifyReason.MALFORMED, f"Line {n}'s {name} is not lowercase hex.", name)
    return Fault(n, VerifyReason.MALFORMED, f"Line {n} holds a value its encoding cannot take.")


def _is_hex(value: object) -> bool:
    try:
        return isinstance(value, str) and len(bytes.fromhex(value)) * 2 == len(value)
    except ValueError:
        return False


class ChainChecker:
    """Checks lines fed in seq order, one at a time, holding only what the next line needs.

    After the first fault the lines are still fed, only to count them and to see whether an erasure seen
    before the fault is receipted by an ERASED line after it."""

    def __init__(self, root: str | None = None, withheld: bool = False) -> None:
        self.root = root
        self.withheld = withheld
        self.expected = 1
        self.prev_hash = GENESIS
        self.lines = 0
        self.erased = 0
        self.fault: Fault | None = None
        self.uncovered: int | None = None
        self.unreceipted: int | None = None
        self.receipted = False

    def feed(self, line: Line) -> None:
        n = self._count(line.kind, line.erased or line.content_erased)
        if self.fault is None:
            try:
                found = self._fault_of(line, n)
            except (ValueError, TypeError):
                found = _malformed(line, n)
            if found is not None:
                self._found(found)
            self.prev_hash = line.hash

    def feed_sealed(self, seq: int, kind: str, task: str, summary: str | None, payload: str | None,
                    summary_salt: str, payload_salt: str, summary_hash: str, payload_hash: str, prev_hash: str,
                    hash: str, fixed: bytes) -> bool:
        """A salted line marked neither erased nor content-erased, its fixed fields already encoded as `fixed_json`
        writes them (as UTF-8): True when the whole line checks out. False when it does not, having taken nothing:
        the caller then feeds it as a `Line`, and `feed` finds and names its fault."""
        n = self.expected
        if (seq != n or prev_hash != self.prev_hash or (n == 1 and self.root is not None and task != self.root)
                or _sha256(COMMIT_TAG + bytes.fromhex(summary_salt) + (summary or "").encode()).hexdigest()
                != summary_hash
                or _sha256(COMMIT_TAG + bytes.fromhex(payload_salt) + (payload or "").encode()).hexdigest()
                != payload_hash
                or _sha256(LINE_TAG + bytes.fromhex(prev_hash) + fixed + bytes.fromhex(summary_hash + payload_hash)
                           ).hexdigest() != hash):
            return False
        self.expected = n + 1
        self.lines += 1
        if kind == ERASED:
            self.uncovered = None
            self.unreceipted = None
            self.receipted = True
        self.prev_hash = hash
        return True

    def feed_hashes(self, seq: int, prev_hash: str, hash: str) -> None:
        """A line whose fields and texts are not shown: only its place and its link can be checked."""
        n = self._count(None, False)
        if self.fault is None:
            found = self._sequence(seq, n) or self._link(prev_hash, n)
            if found is not None:
                self._found(found)
            self.prev_hash = hash

    def fail(self, reason: VerifyReason, problem: str, field: str | None = None) -> None:
        """A fault found outside the chain's encoding (a line that cannot be read), at the line expected next."""
        if self.fault is None:
            self._found(Fault(self.expected, reason, problem, field))

    def pass_over(self, kind: str | None, marked: bool) -> None:
        """A line after the first fault, known only by its kind and whether it is marked erased."""
        self._count(kind, marked)

    def _count(self, kind: str | None, marked: bool) -> int:
        n = self.expected
        self.expected = n + 1
        self.lines += 1
        if kind == ERASED:
            self.uncovered = None
            self.unreceipted = None
            self.receipted = True
        if marked:
            self.erased += 1
            if self.uncovered is None:
                self.uncovered = n
        return n

    def _found(self, fault: Fault) -> None:
        self.fault = fault
        if self.uncovered is not None and self.uncovered < fault.seq:
            self.unreceipted = self.uncovered

    @staticmethod
    def _sequence(seq: int, n: int) -> Fault | None:
        if seq > n:
            return Fault(n, VerifyReason.SEQUENCE, f"Line {n} is missing: the record goes from line {n - 1} to line {seq}.")
        if seq < n:
            return Fault(n, VerifyReason.SEQUENCE, f"Line {n} is out of place: it says it is line {seq}.")
        return None

    def _link(self, prev_hash: str, n: int) -> Fault | None:
        if prev_hash != self.prev_hash:
            return Fault(n, VerifyReason.LINK, f"Line {n} does not follow line {n - 1}: a line was removed, moved or slipped in.")
        return None

    def _fault_of(self, line: Line, n: int) -> Fault | None:
        """The line's fault, checked in a fixed order: its place, its sentence, its content, its link, its hash."""
        if line.seq != n:
            return self._sequence(line.seq, n)
        if line.erased or line.summary_salt is None:
            found = self._sentence(line, n)
            if found is not None:
                return found
        elif commit(line.summary_salt, line.summary or "") != line.summary_hash:
            return Fault(n, VerifyReason.SUMMARY_HASH, f"Line {n}'s sentence is not the one it was written with.")
        if line.content_erased or line.payload_salt is None:
            found = self._content(line, n)
            if found is not None:
                return found
        elif commit(line.payload_salt, line.payload or "") != line.payload_hash:
            return Fault(n, VerifyReason.PAYLOAD_HASH, f"Line {n}'s content is not the content it was written with.")
        if line.prev_hash != self.prev_hash:
            return self._link(line.prev_hash, n)
        if n == 1 and self.root is not None and line.task != self.root:
            return Fault(1, VerifyReason.LINK, f"Line 1 starts the chain of task {line.task}, not of {self.root}.")
        if line_hash(line.prev_hash, fixed_json(line), line.summary_hash, line.payload_hash) != line.hash:
            return Fault(n, VerifyReason.LINE_HASH, f"Line {n} was changed after it was written.")
        return None

    def _sentence(self, line: Line, n: int) -> Fault | None:
        """A sentence erased, or without its salt: withheld from an export's reader, or wrongly so."""
        summary = line.summary
        if line.erased:
            if line.summary_salt is not None or (summary != ERASED_SENTENCE and not (self.withheld and summary is None)):
                return Fault(n, VerifyReason.ERASED_HAS_WORDS, f"Line {n} was erased, and something was written in its place.")
        elif not self.withheld:
            return Fault(n, VerifyReason.SUMMARY_HASH, f"Line {n}'s sentence is not the one it was written with.")
        elif summary is not None:
            return Fault(n, VerifyReason.SUMMARY_HASH,
                         f"Line {n}'s sentence comes without its salt, so it cannot be the one written.")
        return None

    def _content(self, line: Line, n: int) -> Fault | None:
        """Content erased, or without its salt: withheld from an export's reader, or wrongly so."""
        payload = line.payload
        if line.content_erased:
            if payload or line.payload_salt is not None:
                return Fault(n, VerifyReason.ERASED_HAS_WORDS,
                             f"Line {n}'s content is marked erased, but content is still there.")
        elif not self.withheld:
            return Fault(n, VerifyReason.PAYLOAD_HASH, f"Line {n}'s content is not the content it was written with.")
        elif payload is not None:
            return Fault(n, VerifyReason.PAYLOAD_HASH,
                         f"Line {n}'s content comes without its salt, so it cannot be the one written.")
        return None

    def line_fault(self) -> Fault | None:
        """The first fault among the lines fed, an erasure no ERASED line receipts included."""
        if self.fault is not None:
            if self.unreceipted is not None:
                return self._unreceipted(self.unreceipted)
            return self.fault
        if self.uncovered is not None:
            return self._unreceipted(self.uncovered)
        return None

    @staticmethod
    def _unreceipted(n: int) -> Fault:
        return Fault(n, VerifyReason.ERASURE_UNRECEIPTED, f"Line {n} is marked erased, but no erasure was recorded after it.")

    def head_fault(self, head_length: int, head_hash: str) -> Fault | None:
        """Whether the chain ends where its head says: lines cut off the end, or slipped in after it."""
        lines = self.lines
        if lines < head_length:
            return Fault(lines + 1, VerifyReason.TRUNCATED,
                         f"Line {lines + 1} is missing: the record ends at line {lines}, and its head says {head_length}.")
        if lines > head_length:
            extra = head_length + 1
            return Fault(extra, VerifyReason.HEAD_MISMATCH,
                         f"Line {extra} was slipped in after the head, which says {head_length} lines.")
        if lines and self.prev_hash != head_hash:
            return Fault(lines, VerifyReason.HEAD_MISMATCH, f"Line {lines} is not the line the head was written after.")
        return None

    def result(self, fault: Fault | None) -> TraceCheck:
        if fault is None:
            return TraceCheck(True, self.lines, None, None, self.erased)
        return TraceCheck(False, self.lines, fault.seq, fault.problem, self.erased, fault.reason, fault.field)

    def finish(self, head_length: int, head_hash: str) -> TraceCheck:
        return self.result(self.line_fault() or self.head_fault(head_length, head_hash))


def check_chain(lines: Iterable[Line], head_length: int, head_hash: str, root: str | None = None) -> TraceCheck:
    checker = ChainChecker(root)
    for line in lines:
        checker.feed(line)
    return checker.finish(head_length, head_hash)
