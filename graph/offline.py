"""The command line's export and offline verification: files in and out around the pure export checker."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path

from models.export_check import check_export
from models.note import NoteError, verifier_from_key


def _key_text(key: str) -> str:
    path = Path(key)
    if "+" not in key and path.is_file():
        return path.read_text().strip()
    return key.strip()


def verify_file(file: str, key: str | None, witnessed: list[str], as_json: bool) -> int:
    """Exit 0 when the export is intact, 1 with the first bad line and its reason, 2 when it cannot be read."""
    try:
        verifier = verifier_from_key(_key_text(key)) if key is not None else None
        notes = [Path(note).read_text() for note in witnessed]
        with open(file, "rb") as lines:
            verdict = check_export(lines, verifier, notes)
    except NoteError as exc:
        print(f"--key: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(verdict.as_json(), ensure_ascii=False))
    elif verdict.intact:
        print(f"intact: {verdict.lines} lines, {verdict.erased} erased")
    else:
        at = f"line {verdict.seq} (file line {verdict.line})" if verdict.seq is not None else f"file line {verdict.line}"
        print(f"broken at {at}: {verdict.reason}: {verdict.problem}")
        for note in verdict.fork or ():
            print(f"\n{note}", end="")
    return 0 if verdict.intact else 1


def export_task(task: str, out: str | None) -> int:
    from tortoise import Tortoise

    from models import db
    from resolvers.export import export_all

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
            try:
                async for chunk in found.lines():
                    target.write(chunk)
            finally:
                if out:
                    target.close()
                else:
                    target.flush()
        finally:
            await Tortoise.close_connections()
        return 0

    return asyncio.run(run())
