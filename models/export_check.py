"""Offline verification of an agentlog-export/v1 file: plain functions over its lines, no server, no database.

`check_export(lines, verifier, witnessed)` reads the header and each line in order, holding only what the next
line needs, and answers a `Verdict`: intact, or the first bad line and one reason from a closed set. Where a
line's text and salt are present their commitment is recomputed; where they are withheld the chain is checked
on the stored hashes. With a verifier key the export's checkpoint is checked too, and the chain must end at its
head; checkpoints a witness kept are held against the chain the same way.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import orjson

from models.chain import COMMIT_TAG, ERASED_SENTENCE, GENESIS, LINE_TAG
from models.note import Checkpoint, NoteError, Verifier, open_note, origin_of, parse_checkpoint

FORMAT = "agentlog-export/v1"
REASONS = (
    "SEQUENCE", "LINK", "LINE_HASH", "SUMMARY_HASH", "PAYLOAD_HASH", "ERASED_HAS_WORDS", "ERASURE_UNRECEIPTED",
    "TRUNCATED", "HEAD_MISMATCH", "BAD_CHECKPOINT", "MALFORMED",
)
KINDS = frozenset({"STARTED", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT", "ASKED_FOR_HELP", "SENT_BACK", "ENDED",
                   "ERASED"})
HEADER_KEYS = frozenset({"format", "root", "tenant", "chainLength", "chainHead", "checkpoint", "exportedAt"})
HASH_KEYS = ("summaryHash", "payloadHash", "prevHash", "hash")
OPAQUE_KEYS = frozenset({"seq", *HASH_KEYS})
INT_KEYS = ("attempts", "costMicros", "inputTokens", "outputTokens", "durationMs")
STR_KEYS = ("model", "routeRule", "tool", "toolCallId")
LINE_KEYS = frozenset({
    "seq", "kind", "task", "at", *INT_KEYS, *STR_KEYS, "isError", "summary", "summarySalt", "payload",
    "payloadSalt", *HASH_KEYS, "erasedAt", "contentErasedAt",
})
TEXT_KEYS = (*STR_KEYS, "summary", "payload")
FIXED_KEYS = ("seq", "kind", "task", "at", *INT_KEYS, *STR_KEYS, "isError")
MAX_INT = 2**63 - 1

_hash = re.compile(r"[0-9a-f]{64}").fullmatch
_salt = re.compile(r"[0-9a-f]{32}").fullmatch
_uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").fullmatch
_time = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z").fullmatch


def _hexes(text: str) -> bool:
    """Lowercase hex digits only: what bytes.fromhex takes, with no space skipped and no uppercase."""
    try:
        return len(bytes.fromhex(text)) * 2 == len(text) and text == text.lower()
    except ValueError:
        return False

_sha256 = hashlib.sha256
_dumps, _SORTED = orjson.dumps, orjson.OPT_SORT_KEYS


@dataclass(frozen=True)
class Verdict:
    intact: bool
    lines: int
    erased: int
    line: int | None = None
    seq: int | None = None
    reason: str | None = None
    problem: str | None = None
    fork: tuple[str, str] | None = None

    def as_json(self) -> dict:
        out = {"intact": self.intact, "lines": self.lines, "erased": self.erased, "line": self.line,
               "seq": self.seq, "reason": self.reason, "problem": self.problem}
        if self.fork is not None:
            out["fork"] = list(self.fork)
        return out


class Bad(Exception):
    def __init__(self, reason: str, problem: str, fork: tuple[str, str] | None = None) -> None:
        super().__init__(problem)
        self.reason, self.problem, self.fork = reason, problem, fork


@dataclass
class Header:
    root: str
    tenant: str
    chain_length: int
    chain_head: str
    checkpoint: str | None


def _int(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_INT


def parse_header(raw: bytes) -> Header:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise Bad("MALFORMED", "The header is not a JSON object.") from exc
    if not isinstance(data, dict) or set(data) != HEADER_KEYS or data["format"] != FORMAT:
        raise Bad("MALFORMED", f"The first line is not an {FORMAT} header.")
    if not (isinstance(data["root"], str) and _uuid(data["root"]) and isinstance(data["tenant"], str)
            and _int(data["chainLength"]) and isinstance(data["chainHead"], str) and _hash(data["chainHead"])
            and (data["checkpoint"] is None or isinstance(data["checkpoint"], str))):
        raise Bad("MALFORMED", "The header's root, tenant, chainLength, chainHead or checkpoint is malformed.")
    return Header(data["root"], data["tenant"], data["chainLength"], data["chainHead"], data["checkpoint"])


def _shape(line: dict, tasks: set[str]) -> bool | None:
    """True for a well-formed full line, False for a well-formed line of a task the exporter could not see, None
    for anything else: the quick test every line takes, with `_well_formed` to say what is wrong."""
    try:
        keys = line.keys()
        seq, a, b, c, d = line["seq"], line["summaryHash"], line["payloadHash"], line["prevHash"], line["hash"]
        if not (type(seq) is int and 0 <= seq <= MAX_INT and type(a) is str and type(b) is str and type(c) is str
                and type(d) is str and len(a) == 64 and len(b) == 64 and len(c) == 64 and len(d) == 64):
            return None
        if keys == OPAQUE_KEYS:
            return False if _hexes(a + b + c + d) else None
        if keys != LINE_KEYS:
            return None
        s1, s2, task = line["summarySalt"], line["payloadSalt"], line["task"]
        if s1 is None:
            s1 = ""
        elif len(s1) != 32:
            return None
        if s2 is None:
            s2 = ""
        elif len(s2) != 32:
            return None
        if not _hexes(a + b + c + d + s1 + s2) or line["kind"] not in KINDS or not _time(line["at"]):
            return None
        if task not in tasks:
            if type(task) is not str or not _uuid(task):
                return None
            tasks.add(task)
        for key in INT_KEYS:
            value = line[key]
            if value is not None and (type(value) is not int or value < 0 or value > MAX_INT):
                return None
        for key in TEXT_KEYS:
            value = line[key]
            if value is not None and type(value) is not str:
                return None
        error, erased, content_erased = line["isError"], line["erasedAt"], line["contentErasedAt"]
        if (error is not None and type(error) is not bool) or (erased is not None and not _time(erased)) or (
                content_erased is not None and not _time(content_erased)):
            return None
        return True
    except TypeError:
        return None


def _well_formed(line: dict, n: int) -> bool:
    """True for a full line, False for a line of a task the exporter could not see; Bad when neither."""
    keys = line.keys()
    if keys == OPAQUE_KEYS:
        full = False
    elif keys == LINE_KEYS:
        full = True
    else:
        raise Bad("MALFORMED", f"Line {n} does not have the fields of an exported line.")
    if not _int(line["seq"]):
        raise Bad("MALFORMED", f"Line {n}'s seq is not a whole number.")
    for key in HASH_KEYS:
        value = line[key]
        if type(value) is not str or not _hash(value):
            raise Bad("MALFORMED", f"Line {n}'s {key} is not 64 lowercase hex digits.")
    if not full:
        return False
    task, at = line["task"], line["at"]
    if line["kind"] not in KINDS or type(task) is not str or not _uuid(task) or type(at) is not str or not _time(at):
        raise Bad("MALFORMED", f"Line {n}'s kind, task or at is malformed.")
    for key in INT_KEYS:
        value = line[key]
        if value is not None and not _int(value):
            raise Bad("MALFORMED", f"Line {n}'s {key} is not a whole number.")
    for key in (*STR_KEYS, "summary", "payload"):
        value = line[key]
        if value is not None and type(value) is not str:
            raise Bad("MALFORMED", f"Line {n}'s {key} is not text.")
    if line["isError"] is not None and type(line["isError"]) is not bool:
        raise Bad("MALFORMED", f"Line {n}'s isError is not true or false.")
    for key in ("summarySalt", "payloadSalt"):
        value = line[key]
        if value is not None and (type(value) is not str or not _salt(value)):
            raise Bad("MALFORMED", f"Line {n}'s {key} is not 32 lowercase hex digits.")
    for key in ("erasedAt", "contentErasedAt"):
        value = line[key]
        if value is not None and (type(value) is not str or not _time(value)):
            raise Bad("MALFORMED", f"Line {n}'s {key} is not a time.")
    return True


def fixed_bytes(line: dict) -> bytes:
    """The canonical JSON of the fixed fields, as `models.chain.fixed_json` writes it, from exported values."""
    return _dumps({key: line[key] for key in FIXED_KEYS}, option=_SORTED)


@dataclass
class ExportChecker:
    """Takes the header, then the chain's lines in file order; `finish` gives the verdict."""

    verifier: Verifier | None = None
    witnessed: list[str] = field(default_factory=list)
    header: Header | None = None
    expected: int = 1
    prev_hash: str = GENESIS
    erased: int = 0
    uncovered: int | None = None
    found: tuple[int, int, str, str] | None = None
    watch: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    mismatch: tuple[int, str] | None = None
    tasks: set[str] = field(default_factory=set)

    def take_header(self, raw: bytes) -> bool:
        """Reads the file's first line; False when it is not an export's header."""
        try:
            self.header = parse_header(raw)
        except Bad as bad:
            self.found = (1, None, bad.reason, bad.problem)
            return False
        return True

    def feed_all(self, stream: Iterator[bytes]) -> None:
        """Feeds the chain's lines until the file ends or a line is bad."""
        take = self._line
        try:
            for raw in stream:
                take(raw)
        except Bad as bad:
            self.found = (self.expected + 1, self.expected, bad.reason, bad.problem)

    def _line(self, raw: bytes) -> None:
        n = self.expected
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise Bad("MALFORMED", f"Line {n} is not JSON in UTF-8.") from exc
        if type(line) is not dict:
            raise Bad("MALFORMED", f"Line {n} is not a JSON object.")
        full = _shape(line, self.tasks)
        if full is None:
            full = _well_formed(line, n)
        if line["seq"] != n:
            raise Bad("SEQUENCE", f"Line {n} is missing or out of place: the file has line {line['seq']} here.")
        summary_hash, payload_hash, prev_hash, hash_ = (
            line["summaryHash"], line["payloadHash"], line["prevHash"], line["hash"])
        if full:
            self._texts(line, n, summary_hash, payload_hash)
        if prev_hash != self.prev_hash:
            raise Bad("LINK", f"Line {n} does not follow line {n - 1}: a line was removed, moved or slipped in.")
        if full:
            if n == 1 and line["task"] != self.header.root:
                raise Bad("LINK", f"Line 1 starts the chain of task {line['task']}, not of {self.header.root}.")
            fixed = _dumps({key: line[key] for key in FIXED_KEYS}, option=_SORTED)
            computed = _sha256(LINE_TAG + bytes.fromhex(prev_hash) + fixed + bytes.fromhex(summary_hash + payload_hash)
                               ).hexdigest()
            if computed != hash_:
                raise Bad("LINE_HASH", f"Line {n} was changed after it was written.")
            if line["kind"] == "ERASED":
                self.uncovered = None
        if n in self.watch and self.mismatch is None:
            for _, head in self.watch[n]:
                if head != hash_:
                    self.mismatch = (n, f"Line {n} is not the line a signed checkpoint of {n} lines ends at.")
        self.prev_hash = hash_
        self.expected = n + 1

    def _texts(self, line: dict, n: int, summary_hash: str, payload_hash: str) -> None:
        erased, content_erased = line["erasedAt"] is not None, line["contentErasedAt"] is not None
        summary, summary_salt, payload, payload_salt = (
            line["summary"], line["summarySalt"], line["payload"], line["payloadSalt"])
        if erased:
            if summary not in (None, ERASED_SENTENCE) or summary_salt is not None:
                raise Bad("ERASED_HAS_WORDS", f"Line {n} was erased, and something was written in its place.")
        elif summary_salt is not None:
            if _sha256(COMMIT_TAG + bytes.fromhex(summary_salt) + (summary or "").encode()).hexdigest() != summary_hash:
                raise Bad("SUMMARY_HASH", f"Line {n}'s sentence is not the one it was written with.")
        elif summary is not None:
            raise Bad("SUMMARY_HASH", f"Line {n}'s sentence comes without its salt, so it cannot be the one written.")
        if content_erased:
            if payload not in (None, "") or payload_salt is not None:
                raise Bad("ERASED_HAS_WORDS", f"Line {n}'s content is marked erased, but content is still there.")
        elif payload_salt is not None:
            if _sha256(COMMIT_TAG + bytes.fromhex(payload_salt) + (payload or "").encode()).hexdigest() != payload_hash:
                raise Bad("PAYLOAD_HASH", f"Line {n}'s content is not the content it was written with.")
        elif payload is not None:
            raise Bad("PAYLOAD_HASH", f"Line {n}'s content comes without its salt, so it cannot be the one written.")
        if erased or content_erased:
            self.erased += 1
            if self.uncovered is None:
                self.uncovered = n

    def checkpoint(self) -> Checkpoint | None:
        """The export's checkpoint, opened with the verifier key; Bad when it cannot be trusted."""
        if self.verifier is None:
            return None
        header = self.header
        if header.checkpoint is None:
            raise Bad("BAD_CHECKPOINT", "The export carries no checkpoint.")
        point = self._open(header.checkpoint, "The export's checkpoint")
        for note in self.witnessed:
            other = self._open(note, "A witnessed checkpoint")
            if other.size == point.size and other.head != point.head:
                raise Bad("BAD_CHECKPOINT", f"Two checkpoints sign {point.size} lines with different heads: a fork.",
                          (header.checkpoint, note))
            self.watch.setdefault(other.size, []).append((note, other.head))
        self.watch.setdefault(point.size, []).append((header.checkpoint, point.head))
        return point

    def _open(self, note: str, what: str) -> Checkpoint:
        try:
            point = parse_checkpoint(open_note(note, self.verifier))
        except NoteError as exc:
            raise Bad("BAD_CHECKPOINT", f"{what} cannot be trusted ({exc.reason}): {exc.message}") from exc
        if point.origin != origin_of(self.header.tenant, self.header.root):
            raise Bad("BAD_CHECKPOINT", f"{what} is for {point.origin}, not for this export's tree.")
        return point

    def look_for_erasure(self, stream: Iterator[bytes]) -> None:
        """After a broken line: whether an ERASED line further on receipts the erasure seen before it."""
        for raw in stream:
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if type(line) is dict and line.get("kind") == "ERASED":
                self.uncovered = None
                return

    def finish(self, point: Checkpoint | None, distrust: Bad | None) -> Verdict:
        lines = self.expected - 1
        found = self.found
        if found is None and self.header is None:
            found = (1, None, "MALFORMED", f"The file is empty: it has no {FORMAT} header.")
        u = self.uncovered
        if u is not None and (found is None or found[1] is None or u < found[1]):
            found = (u + 1, u, "ERASURE_UNRECEIPTED", f"Line {u} is marked erased, but no erasure was recorded after it.")
        if found is None and distrust is not None:
            return Verdict(False, lines, self.erased, 1, None, distrust.reason, distrust.problem, distrust.fork)
        if found is None:
            found = self._ending(lines, point)
        if found is None:
            return Verdict(True, lines, self.erased)
        number, seq, reason, problem = found
        return Verdict(False, lines, self.erased, number, seq, reason, problem)

    def _ending(self, lines: int, point: Checkpoint | None) -> tuple[int, int, str, str] | None:
        header = self.header
        if point is not None:
            longest = max(self.watch)
            if lines < longest:
                return (lines + 2, lines + 1, "TRUNCATED",
                        f"Line {lines + 1} is missing: the export ends at line {lines}, and a signed checkpoint "
                        f"says {longest}.")
            if self.mismatch is not None:
                return (self.mismatch[0] + 1, self.mismatch[0], "HEAD_MISMATCH", self.mismatch[1])
            if lines > point.size:
                return (point.size + 2, point.size + 1, "HEAD_MISMATCH",
                        f"Line {point.size + 1} comes after the head the checkpoint signed at {point.size} lines.")
        if lines < header.chain_length:
            return (lines + 2, lines + 1, "TRUNCATED",
                    f"Line {lines + 1} is missing: the export ends at line {lines}, and its head says "
                    f"{header.chain_length}.")
        if lines > header.chain_length:
            extra = header.chain_length + 1
            return (extra + 1, extra, "HEAD_MISMATCH", f"Line {extra} comes after the head, which says "
                    f"{header.chain_length} lines.")
        if self.prev_hash != header.chain_head:
            return (lines + 1, lines or None, "HEAD_MISMATCH", f"Line {lines} is not the line the head was written after.")
        return None


def check_export(lines: Iterable[bytes], verifier: Verifier | None = None,
                 witnessed: Iterable[str] = ()) -> Verdict:
    """The verdict on an export given as its lines (bytes, with or without their newline)."""
    checker = ExportChecker(verifier, list(witnessed))
    stream: Iterator[bytes] = iter(lines)
    first = next(stream, None)
    point, distrust = None, None
    if first is not None and checker.take_header(first):
        try:
            point = checker.checkpoint()
        except Bad as bad:
            distrust = bad
        checker.feed_all(stream)
    if checker.found is not None and checker.uncovered is not None:
        checker.look_for_erasure(stream)
    return checker.finish(point, distrust)
