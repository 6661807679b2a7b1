"""The command line's export, offline verification and key: files in and out around the pure export checker."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from models.record.export_check import Verdict
from models.record.export_parts import check_export_file
from models.record.note import NoteError, Verifier, verifier_from_key

T = TypeVar("T")

UNCHECKED = (
    "The checkpoint's signature was not checked: no --key was given, so this file was checked only against its "
    "own header, which whoever wrote the file could also have written. Get the server's key with the "
    "checkpointKey query (`{ checkpointKey }`) or `agentlog key` where the server runs, and pass it as --key."
)


def key_text(key: str) -> str:
    path = Path(key)
    if "+" not in key and path.is_file():
        return path.read_text().strip()
    return key.strip()


def checked_offline(key: str | None, check: Callable[[Verifier | None], T]) -> tuple[Verifier | None, T] | None:
    """The verifier of `key` (none without one) and what `check` found with it; None, said on stderr, when the key
    or a file cannot be read."""
    try:
        verifier = verifier_from_key(key_text(key)) if key is not None else None
        return verifier, check(verifier)
    except NoteError as exc:
        print(f"--key: {exc.message}", file=sys.stderr)
    except OSError as exc:
        print(f"{exc.filename}: {exc.strerror}", file=sys.stderr)
    return None


def verify_file(file: str, key: str | None, witnessed: list[str], as_json: bool, jobs: int | None = None) -> int:
    """Exit 0 when the export is intact, 1 with the first bad line and its reason, 2 when it cannot be read."""
    found = checked_offline(key, lambda verifier: check_export_file(
        file, verifier, [Path(note).read_text() for note in witnessed], jobs))
    if found is None:
        return 2
    verifier, verdict = found
    if as_json:
        print(json.dumps(verdict.as_json(), ensure_ascii=False))
    else:
        print(said(verdict))
        for note in verdict.fork or ():
            print(f"\n{note}", end="")
        if verifier is None:
            print(UNCHECKED)
    return 0 if verdict.intact else 1


def said(verdict: Verdict) -> str:
    if verdict.intact:
        checked = "its checkpoint's signature checked" if verdict.signature_checked else "its signature not checked"
        return f"intact: {verdict.lines} lines, {verdict.erased} erased; {checked}"
    at = f"line {verdict.seq} (file line {verdict.line})" if verdict.seq is not None else f"file line {verdict.line}"
    field = f" ({verdict.field})" if verdict.field else ""
    return f"broken at {at}: {verdict.reason.value}{field}: {verdict.problem}"


def print_key() -> int:
    """The verifier key of the signing key the server uses here, read from its file; none is made."""
    from resolvers.write.signing import DEFAULT_FILE, SigningKeyError, read_key, signing_key_file

    named = signing_key_file()
    path = Path(named or DEFAULT_FILE).resolve()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if named:
            print(f"AGENTLOG_SIGNING_KEY: there is no file {path}.", file=sys.stderr)
        else:
            print(f"No signing key at {path}: the server makes one there on its first start. Run this where the "
                  "server runs, with its AGENTLOG_SIGNING_KEY.", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{path}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        print(read_key(data, path).verifier.key)
    except SigningKeyError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def export_task(task: str, out: str | None) -> int:
    from tortoise import Tortoise

    from models import db
    from resolvers.read.export import export_all

    try:
        task_id = uuid.UUID(task)
    except ValueError:
        print(f"{task!r} is not a task id.", file=sys.stderr)
        return 2

    async def run() -> int:
        await db.open_database(db.database_url())
        try:
            found = await export_all(task_id)
            if found is None:
                print(f"No task {task_id}.", file=sys.stderr)
                return 2
            target = open(out, "wb") if out else sys.stdout.buffer
            lines = written = 0
            try:
                async for chunk in found.lines():
                    target.write(chunk)
                    lines += chunk.count(b"\n")
                    written += len(chunk)
            finally:
                if out:
                    target.close()
                else:
                    target.flush()
        finally:
            await Tortoise.close_connections()
        if out:
            print(f"Wrote {max(lines - 1, 0)} lines of the record of task {task_id}'s tree, after a header, to "
                  f"{Path(out).resolve()} ({written} bytes).")
        return 0

    return asyncio.run(run())
