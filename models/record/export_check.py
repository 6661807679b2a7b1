"""Offline verification of an agentlog-export/v1 file: plain functions over its lines, no server, no database.

`check_export(lines, verifier, witnessed)` reads the header, checks that each line is a well-formed exported
line, and feeds it to the one chain checker (`models/record/check.py`), which the server's `verifyTrace` feeds
too. The answer is a `Verdict`: intact, or the first bad line and one reason from the closed set. Where a line's
text and salt are present their commitment is recomputed; where they are withheld the chain is checked on the
stored hashes. With a verifier key the export's checkpoint is checked too, and the chain must end at its head;
checkpoints a witness kept are held against the chain the same way.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from datetime import datetime

import orjson

from models.record.chain import Line
from models.record.check import ChainChecker, Fault
from models.record.note import Checkpoint, NoteError, Verifier, open_note, origin_of, parse_checkpoint
from models.record.vocabulary import LineKind, VerifyReason

FORMAT = "agentlog-export/v1"
REASONS = tuple(VerifyReason)
KINDS = frozenset(kind.value for kind in LineKind)
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
MAX_INT = 2**63 - 1

EXPORTED = tuple(  # the exported keys of the chain's Line fields, in order; its two marks are read apart
    re.sub(r"_([a-z])", lambda m: m.group(1).upper(), f.name) for f in fields(Line)
    if f.name not in ("erased", "content_erased")
)

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


MALFORMED, BAD_CHECKPOINT = VerifyReason.MALFORMED, VerifyReason.BAD_CHECKPOINT


@dataclass(frozen=True)
class Verdict:
    intact: bool
    lines: int
    erased: int
    line: int | None = None
    seq: int | None = None
    reason: VerifyReason | None = None
    problem: str | None = None
    fork: tuple[str, str] | None = None
    field: str | None = None
    signature_checked: bool = False

    def as_json(self) -> dict:
        out = {"intact": self.intact, "lines": self.lines, "erased": self.erased, "line": self.line,
               "seq": self.seq, "reason": self.reason, "problem": self.problem, "field": self.field,
               "signatureChecked": self.signature_checked}
        if self.fork is not None:
            out["fork"] = list(self.fork)
        return out


class Bad(Exception):
    def __init__(self, reason: VerifyReason, problem: str, fork: tuple[str, str] | None = None,
                 field: str | None = None) -> None:
        super().__init__(problem)
        self.reason, self.problem, self.fork, self.field = reason, problem, fork, field


@dataclass
class Header:
    root: str
    tenant: str
    chain_length: int
    chain_head: str
    checkpoint: str | None


def _int(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_INT


def _text(value: object) -> bool:
    return type(value) is str


HEADER_CHECKS = (
    ("root", lambda v: _text(v) and _uuid(v), "a lowercase hyphenated UUID"),
    ("tenant", _text, "text"),
    ("chainLength", _int, "a whole number"),
    ("chainHead", lambda v: _text(v) and _hash(v), "64 lowercase hex digits"),
    ("checkpoint", lambda v: v is None or _text(v), "a signed note or null"),
)


def parse_header(raw: bytes) -> Header:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise Bad(MALFORMED, "The header is not a JSON object.") from exc
    if not isinstance(data, dict) or set(data) != HEADER_KEYS or data["format"] != FORMAT:
        raise Bad(MALFORMED, f"The first line is not an {FORMAT} header.")
    for key, good, what in HEADER_CHECKS:
        if not good(data[key]):
            raise Bad(MALFORMED, f"The header's {key} is not {what}.", field=key)
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
    """True for a full line, False for a line of a task the exporter could not see; Bad naming the field when
    neither."""
    keys = line.keys()
    if keys == OPAQUE_KEYS:
        full = False
    elif keys == LINE_KEYS:
        full = True
    else:
        wrong = sorted((keys - LINE_KEYS) | (OPAQUE_KEYS - keys)) or sorted(LINE_KEYS - keys)
        raise Bad(MALFORMED, f"Line {n} does not have the fields of an exported line: {', '.join(wrong)}.",
                  field=wrong[0])
    if not _int(line["seq"]):
        raise _malformed(n, "seq", "a whole number")
    for key in HASH_KEYS:
        value = line[key]
        if type(value) is not str or not _hash(value):
            raise _malformed(n, key, "64 lowercase hex digits")
    if not full:
        return False
    if line["kind"] not in KINDS:
        raise _malformed(n, "kind", "a line kind")
    if type(line["task"]) is not str or not _uuid(line["task"]):
        raise _malformed(n, "task", "a lowercase hyphenated UUID")
    for key in ("at", "erasedAt", "contentErasedAt"):
        value = line[key]
        if (value is not None or key == "at") and (type(value) is not str or not _time(value)):
            raise _malformed(n, key, "a time in RFC 3339 UTC with six fraction digits")
    for key in INT_KEYS:
        value = line[key]
        if value is not None and not _int(value):
            raise _malformed(n, key, "a whole number")
    for key in TEXT_KEYS:
        value = line[key]
        if value is not None and type(value) is not str:
            raise _malformed(n, key, "text")
    if line["isError"] is not None and type(line["isError"]) is not bool:
        raise _malformed(n, "isError", "true or false")
    for key in ("summarySalt", "payloadSalt"):
        value = line[key]
        if value is not None and (type(value) is not str or not _salt(value)):
            raise _malformed(n, key, "32 lowercase hex digits")
    return True


def _malformed(n: int, key: str, what: str) -> Bad:
    return Bad(MALFORMED, f"Line {n}'s {key} is not {what}.", field=key)


_values = operator.itemgetter(*EXPORTED)
_from_iso = datetime.fromisoformat
_dumps = orjson.dumps


def _rewritten(at: str) -> bool:
    """Whether a well-formed line's time is one `rfc3339` writes back unchanged: ASCII digits, a date that
    exists, a year of four digits."""
    if not at.isascii() or at < "1000":
        return False
    try:
        _from_iso(at)
    except ValueError:
        return False
    return True


def fixed_bytes(line: dict) -> bytes:
    """A well-formed full line's fixed fields as `models.record.chain.fixed_json` writes them, in UTF-8, from the
    exported values: its task a lowercase UUID and its time one `_rewritten` passed, both as the chain writes
    them; orjson writes whole numbers, booleans and text as the standard encoder does."""
    return _dumps({
        "at": line["at"], "attempts": line["attempts"], "costMicros": line["costMicros"],
        "durationMs": line["durationMs"], "inputTokens": line["inputTokens"], "isError": line["isError"],
        "kind": line["kind"], "model": line["model"], "outputTokens": line["outputTokens"],
        "routeRule": line["routeRule"], "seq": line["seq"], "task": line["task"], "tool": line["tool"],
        "toolCallId": line["toolCallId"],
    })


def line_of(line: dict) -> Line:
    """A well-formed full exported line as the chain's `Line`."""
    values = _values(line)
    return Line(*values[:3], _from_iso(values[3]), *values[4:], line["erasedAt"] is not None,
                line["contentErasedAt"] is not None)


@dataclass
class ExportChecker:
    """Takes the header, then the chain's lines in file order; `finish` gives the verdict."""

    verifier: Verifier | None = None
    witnessed: list[str] = field(default_factory=list)
    header: Header | None = None
    chain: ChainChecker | None = None
    header_fault: Bad | None = None
    watch: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    mismatch: Fault | None = None
    tasks: set[str] = field(default_factory=set)

    def take_header(self, raw: bytes) -> bool:
        """Reads the file's first line; False when it is not an export's header."""
        try:
            self.header = parse_header(raw)
        except Bad as bad:
            self.header_fault = bad
            return False
        self.chain = ChainChecker(self.header.root, withheld=True)
        return True

    def feed_all(self, stream: Iterator[bytes]) -> None:
        """Feeds the chain's lines; after the first fault, only counts them and looks for erasure receipts."""
        chain, take = self.chain, self._line
        for raw in stream:
            if chain.fault is None:
                try:
                    take(raw)
                except Bad as bad:
                    chain.fail(bad.reason, bad.problem, bad.field)
                    chain.pass_over(None, False)
            else:
                self._pass_over(raw)

    def _line(self, raw: bytes) -> None:
        n = self.chain.expected
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise Bad(MALFORMED, f"Line {n} is not JSON in UTF-8.") from exc
        if type(line) is not dict:
            raise Bad(MALFORMED, f"Line {n} is not a JSON object.")
        full = _shape(line, self.tasks)
        if full is None:
            full = _well_formed(line, n)
        if full:
            if not self._sealed(line):
                try:
                    parsed = line_of(line)
                except ValueError as exc:
                    raise _malformed(n, "at", "a time that exists") from exc
                self.chain.feed(parsed)
        else:
            self.chain.feed_hashes(line["seq"], line["prevHash"], line["hash"])
        if n in self.watch and self.mismatch is None:
            for _, head in self.watch[n]:
                if head != line["hash"]:
                    self.mismatch = Fault(n, VerifyReason.HEAD_MISMATCH,
                                          f"Line {n} is not the line a signed checkpoint of {n} lines ends at.")

    def _sealed(self, line: dict) -> bool:
        """Feeds a well-formed full line on the chain's fast path when it is plainly sealed: salted, marked
        neither erased, at a time that writes back as itself. False when it is not, or does not check out."""
        at, summary_salt, payload_salt = line["at"], line["summarySalt"], line["payloadSalt"]
        if (summary_salt is None or payload_salt is None or line["erasedAt"] is not None
                or line["contentErasedAt"] is not None or not _rewritten(at)):
            return False
        return self.chain.feed_sealed(
            line["seq"], line["kind"], line["task"], line["summary"], line["payload"], summary_salt, payload_salt,
            line["summaryHash"], line["payloadHash"], line["prevHash"], line["hash"], fixed_bytes(line))

    def _pass_over(self, raw: bytes) -> None:
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:
            line = None
        if type(line) is dict:
            marked = line.get("erasedAt") is not None or line.get("contentErasedAt") is not None
            self.chain.pass_over(line.get("kind"), marked)
        else:
            self.chain.pass_over(None, False)

    def checkpoint(self) -> Checkpoint | None:
        """The export's checkpoint, opened with the verifier key; Bad when it cannot be trusted."""
        if self.verifier is None:
            return None
        header = self.header
        if header.checkpoint is None:
            raise Bad(BAD_CHECKPOINT, "The export carries no checkpoint.")
        point = self._open(header.checkpoint, "The export's checkpoint")
        for note in self.witnessed:
            other = self._open(note, "A witnessed checkpoint")
            if other.size == point.size and other.head != point.head:
                raise Bad(BAD_CHECKPOINT, f"Two checkpoints sign {point.size} lines with different heads: a fork.",
                          (header.checkpoint, note))
            self.watch.setdefault(other.size, []).append((note, other.head))
        self.watch.setdefault(point.size, []).append((header.checkpoint, point.head))
        return point

    def _open(self, note: str, what: str) -> Checkpoint:
        try:
            point = parse_checkpoint(open_note(note, self.verifier))
        except NoteError as exc:
            raise Bad(BAD_CHECKPOINT, f"{what} cannot be trusted ({exc.reason}): {exc.message}") from exc
        if point.origin != origin_of(self.header.tenant, self.header.root):
            raise Bad(BAD_CHECKPOINT, f"{what} is for {point.origin}, not for this export's tree.")
        return point

    def finish(self, point: Checkpoint | None, distrust: Bad | None) -> Verdict:
        checked = point is not None
        chain = self.chain
        if chain is None:
            bad = self.header_fault or Bad(MALFORMED, f"The file is empty: it has no {FORMAT} header.")
            return Verdict(False, 0, 0, 1, None, bad.reason, bad.problem, field=bad.field)
        fault = chain.line_fault()
        if fault is None and distrust is not None:
            return Verdict(False, chain.lines, chain.erased, 1, None, distrust.reason, distrust.problem, distrust.fork)
        if fault is None and point is not None:
            fault = self._against_checkpoint(chain.lines, point)
        if fault is None:
            fault = chain.head_fault(self.header.chain_length, self.header.chain_head)
        if fault is None:
            return Verdict(True, chain.lines, chain.erased, signature_checked=checked)
        return Verdict(False, chain.lines, chain.erased, fault.seq + 1, fault.seq, fault.reason, fault.problem,
                       field=fault.field, signature_checked=checked)

    def _against_checkpoint(self, lines: int, point: Checkpoint) -> Fault | None:
        longest = max(self.watch)
        if lines < longest:
            return Fault(lines + 1, VerifyReason.TRUNCATED,
                         f"Line {lines + 1} is missing: the export ends at line {lines}, and a signed checkpoint "
                         f"says {longest}.")
        if self.mismatch is not None:
            return self.mismatch
        if lines > point.size:
            return Fault(point.size + 1, VerifyReason.HEAD_MISMATCH,
                         f"Line {point.size + 1} comes after the head the checkpoint signed at {point.size} lines.")
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
    return checker.finish(point, distrust)
