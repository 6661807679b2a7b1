"""An export file checked in parts side by side: the same verdict as `check_export`, on every core.

Each of the chain's lines can be checked without the ones before it but for its link, since it carries the
hash it claims to follow. So the lines after the header are cut into parts at line ends, each part is checked
by the one chain checker starting from its first line's own `seq` and `prevHash`, and the parts are joined by
checking that each starts where the one before it ended. Any fault, in a part or at a join, sends the whole
file through `check_export` once more, so what is said about a broken file (the line, the reason, the field)
is always exactly what the plain checker says.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import chain as chain_of

import orjson

from models.record.check import ChainChecker, Fault
from models.record.export_check import Bad, ExportChecker, Verdict, check_export
from models.record.note import Verifier

SPLIT_FROM = 8 * 1024 * 1024
"""Files smaller than this many bytes are checked in one part: starting workers would cost more than they save."""


@dataclass(frozen=True)
class Part:
    """What a part of the chain's lines holds, as the checker found it, and how it starts and ends."""

    whole: bool
    first_seq: int = 0
    first_prev: str = ""
    last_hash: str = ""
    lines: int = 0
    erased: int = 0
    uncovered: int | None = None
    receipted: bool = False
    mismatch: Fault | None = None


def default_jobs() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cuts(path: str, start: int, parts: int) -> list[tuple[int, int]]:
    """The byte ranges of `parts` runs of whole lines from `start` to the file's end (fewer when lines are long)."""
    end = os.path.getsize(path)
    bounds = [start]
    with open(path, "rb") as file:
        for k in range(1, parts):
            at = max(bounds[-1], start + (end - start) * k // parts)
            file.seek(at)
            if at > start:
                file.readline()
            at = file.tell()
            if at >= end:
                break
            if at > bounds[-1]:
                bounds.append(at)
    bounds.append(end)
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def _lines_between(path: str, start: int, end: int) -> Iterator[bytes]:
    with open(path, "rb") as file:
        file.seek(start)
        at = start
        for raw in file:
            yield raw
            at += len(raw)
            if at >= end:
                return


def check_part(path: str, start: int, end: int, root: str, watch: dict[int, list[tuple[str, str]]],
               first: bool) -> Part:
    """The lines between `start` and `end`, checked as the chain goes on from the part's first line."""
    lines = _lines_between(path, start, end)
    raw = next(lines, None)
    if raw is None:
        return Part(False)
    try:
        opening = orjson.loads(raw)
        seq, prev = opening["seq"], opening["prevHash"]
    except (orjson.JSONDecodeError, TypeError, KeyError):
        return Part(False)
    if type(seq) is not int or type(prev) is not str:
        return Part(False)
    checker = ExportChecker(watch=watch)
    chain = checker.chain = ChainChecker(root if first else None, withheld=True)
    if not first:
        chain.expected, chain.prev_hash = seq, prev
    checker.feed_all(chain_of((raw,), lines))
    if chain.fault is not None:
        return Part(False)
    return Part(True, seq, prev, chain.prev_hash, chain.lines, chain.erased, chain.uncovered,
                chain.receipted, checker.mismatch)


def joined(checker: ExportChecker, parts: list[Part]) -> bool:
    """The parts' chain carried into `checker` as if it had been fed every line; False when a part had a fault
    or does not start where the one before it ended."""
    chain = checker.chain
    for part in parts:
        if not part.whole or part.first_seq != chain.expected or part.first_prev != chain.prev_hash:
            return False
        chain.expected += part.lines
        chain.lines += part.lines
        chain.erased += part.erased
        chain.prev_hash = part.last_hash
        if part.receipted or chain.uncovered is None:
            chain.uncovered = part.uncovered
        if checker.mismatch is None:
            checker.mismatch = part.mismatch
    return True


Mapper = Callable[..., Iterable[Part]]


def check_export_file(path: str, verifier: Verifier | None = None, witnessed: Iterable[str] = (),
                      jobs: int | None = None, split_from: int = SPLIT_FROM, mapper: Mapper | None = None) -> Verdict:
    """The verdict `check_export` gives on the file's lines, its chain checked in `jobs` parts side by side
    (every core by default) when the file is at least `split_from` bytes long. `mapper` runs `check_part` over
    the parts, the first in this process and the rest in worker processes unless one is given."""
    notes = list(witnessed)
    jobs = default_jobs() if jobs is None else jobs
    if jobs > 1 and os.path.getsize(path) >= split_from:
        verdict = _in_parts(path, verifier, notes, jobs, mapper)
        if verdict is not None:
            return verdict
    with open(path, "rb") as lines:
        return check_export(lines, verifier, notes)


def _in_parts(path: str, verifier: Verifier | None, notes: list[str], jobs: int,
              mapper: Mapper | None) -> Verdict | None:
    """The verdict from the parts, or None when the plain checker must say it."""
    checker = ExportChecker(verifier, notes)
    with open(path, "rb") as file:
        first = file.readline()
        start = file.tell()
    if not checker.take_header(first):
        return None
    try:
        point = checker.checkpoint()
    except Bad:
        return None
    ranges = cuts(path, start, jobs)
    if not ranges:
        return None
    root = checker.header.root
    args = [(path, a, b, root, checker.watch, i == 0) for i, (a, b) in enumerate(ranges)]
    parts = list((mapper or _pooled)(args))
    if not joined(checker, parts):
        return None
    return checker.finish(point, None)


def _pooled(args: list[tuple]) -> list[Part]:
    """The first part checked here, the rest in worker processes meanwhile."""
    if len(args) == 1:
        return [check_part(*args[0])]
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
    with ProcessPoolExecutor(len(args) - 1, mp_context=context) as pool:
        later = [pool.submit(check_part, *one) for one in args[1:]]
        here = check_part(*args[0])
        return [here, *(future.result() for future in later)]
