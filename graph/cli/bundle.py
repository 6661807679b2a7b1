"""The command line's incident bundle (SPEC 9.3): `agentlog export --bundle FILE TASK...` writes one from the
database, everything included; `agentlog verify --bundle FILE [--key KEY]` checks every part offline."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from graph.cli.offline import UNCHECKED, checked_offline, said
from models.record.bundle_check import BundleVerdict, PartVerdict, check_bundle
from models.record.note import Verifier


def export_bundle(out: str, tasks: list[str]) -> int:
    from tortoise import Tortoise

    from models import db
    from resolvers.read.bundle import NotReadable, bundle_all

    async def run() -> int:
        await db.open_database(db.database_url())
        try:
            try:
                found = await bundle_all(tasks)
            except NotReadable as exc:
                print(f"No task {exc.task}.", file=sys.stderr)
                return 2
            except ValueError as exc:
                print(exc, file=sys.stderr)
                return 2
            written = 0
            with open(out, "wb") as target:
                async for chunk in found.lines():
                    target.write(chunk)
                    written += len(chunk)
        finally:
            await Tortoise.close_connections()
        ledger = "and the tenant's ledger" if found.ledger else "(the tenant has no ledger yet)"
        print(f"Wrote a bundle of {len(found.trees)} trees {ledger} to {Path(out).resolve()} ({written} bytes).")
        return 0

    return asyncio.run(run())


def part_said(part: PartVerdict) -> str:
    whole = ("whole up to its signed checkpoint" if part.whole_to_checkpoint
             else "not shown whole up to a signed checkpoint")
    verdict = said(part.verdict)
    if not part.verdict.intact and part.file_line is not None:
        verdict += f" (bundle line {part.file_line})"
    return f"{part.part} {part.root}: {verdict}; {whole}"


def verify_bundle(file: str, key: str | None, as_json: bool) -> int:
    """Exit 0 when every part is intact, 1 naming each fault, 2 when the file or the key cannot be read."""
    def check(verifier: Verifier | None) -> BundleVerdict:
        with open(file, "rb") as lines:
            return check_bundle(lines, verifier)

    found = checked_offline(key, check)
    if found is None:
        return 2
    verifier, verdict = found
    if as_json:
        print(json.dumps(verdict.as_json(), ensure_ascii=False))
    else:
        print(report(verdict))
        if verifier is None:
            print(UNCHECKED)
    return 0 if verdict.intact else 1


def report(verdict: BundleVerdict) -> str:
    lines = [part_said(part) for part in verdict.parts]
    lines += [f"bundle line {f.line}: {f.reason.value}: {f.problem}" for f in verdict.faults]
    lines.append("intact: every part" if verdict.intact else "broken: see the faults above")
    return "\n".join(lines)
