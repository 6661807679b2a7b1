"""The `agentlog` command: serve, token, verify, export, key, schema."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import logging
import os
import re
import sys
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from models import db, settings

    try:
        found = settings.load()
    except settings.Refused as exc:
        print("\n".join(exc.lines), file=sys.stderr)
        return 2
    if args.workers > 1:
        share_metrics()
    from graph.http import logs

    logs.configure(found.log_format, found.log_level)
    for name in settings.unknown():
        logging.getLogger("agentlog").warning("%s names no setting of agentlog; it is ignored.", name)
    from resolvers.write.signing import SigningKeyError, signer

    try:
        with settings.using(found):
            signer()
            url = db.database_url()
    except SigningKeyError as exc:
        print(exc, file=sys.stderr)
        return 2
    missing = missing_database(url)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    if found.jwt_secret is None and found.oidc_issuer:
        logging.getLogger("agentlog").warning(
            "AGENTLOG_JWT_SECRET is not set: only the identity provider's tokens are accepted, so no kit can write."
        )
    elif found.jwt_secret is None:
        if not is_loopback(args.host):
            print(
                f"AGENTLOG_JWT_SECRET is not set, so tokens would be signed with a development key anyone can know; "
                f"refusing to listen on {args.host}. Set AGENTLOG_JWT_SECRET (32 bytes or more, e.g. "
                f"`openssl rand -hex 32`), or serve on a loopback address such as 127.0.0.1.",
                file=sys.stderr,
            )
            return 2
        logging.getLogger("agentlog").warning(
            "AGENTLOG_JWT_SECRET is not set: tokens are signed with a development key anyone can know."
        )
    if args.workers > 1 and url.startswith("sqlite"):
        logging.getLogger("agentlog").warning(
            "%d workers share one SQLite file: writers queue on its lock; use PostgreSQL for several processes.",
            args.workers,
        )
    uvicorn.run("graph.cli.serving:served_app", factory=True, host=args.host, port=args.port, workers=args.workers,
                log_config=None, access_log=False)
    return 0


def missing_database(url: str) -> str | None:
    """The line to stop on when the URL names a PostgreSQL database that does not exist on a server that answers.

    Any other failure to connect is left to the server's start, which says what it met."""
    if not url.startswith(("postgres://", "postgresql://", "asyncpg://")):
        return None
    import asyncpg

    from models import db

    config = db.connection(url)
    assert isinstance(config, dict)
    found = config["credentials"]

    async def attempt() -> str | None:
        try:
            connection = await asyncpg.connect(host=found["host"], port=found["port"], user=found["user"],
                                               password=found.get("password"), database=found["database"], timeout=10,
                                               target_session_attrs=found.get("target_session_attrs"))
        except asyncpg.InvalidCatalogNameError:
            several = isinstance(found["host"], list)
            pairs = list(zip(found["host"], found["port"])) if several else [(found["host"], found["port"])]
            host, port = pairs[0]
            where = ",".join(f"{name}:{number}" for name, number in pairs)
            return (f"AGENTLOG_DATABASE_URL names the PostgreSQL database {found['database']!r}, which does not exist "
                    f"on {where}: create it (createdb -h {host} -p {port} -U {found['user']} "
                    f"{found['database']}) or name one that does.")
        except Exception:
            return None
        await connection.close()
        return None

    return asyncio.run(attempt())


def absent_database(url: str) -> str | None:
    """The line to stop on when the database a command reads does not exist: no SQLite file (none is made), or a
    PostgreSQL database missing on a server that answers."""
    from models import db

    file = db.sqlite_file(url)
    if file is not None and not file.is_file():
        return f"No database at {file}; set AGENTLOG_DATABASE_URL to the server's."
    return missing_database(url)


def share_metrics() -> None:
    """Server processes keep their metrics in one folder, emptied first, so each scrape answers all of them.

    Set before prometheus-client is first imported, as its multiprocess mode requires."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or tempfile.mkdtemp(prefix="agentlog-metrics-")
    for left in Path(folder).glob("*.db"):
        left.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder


def settings_reference(args: argparse.Namespace) -> int:
    from models.settings import reference

    sys.stdout.write(reference())
    return 0


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


TTL_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DEFAULT_TTL = "12h"


def duration(text: str) -> timedelta:
    """`90`, `90s`, `30m`, `12h` or `7d`: a positive time to live."""
    found = re.fullmatch(r"(\d+)([smhd]?)", text.strip().lower())
    if not found or int(found.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time to live: use e.g. 3600, 30m, 12h or 7d.")
    return timedelta(seconds=int(found.group(1)) * TTL_UNITS[found.group(2) or "s"])


def token(args: argparse.Namespace) -> int:
    from permissions.tokens import NoSecret, issue_token

    roles = [r for part in args.roles for r in part.split(",") if r]
    try:
        print(issue_token(args.sub, args.tenant, roles=roles, name=args.name, kit=args.kit, ttl=args.ttl))
    except NoSecret as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def verify(args: argparse.Namespace) -> int:
    if args.bundle is not None:
        from graph.cli.bundle import verify_bundle

        return verify_bundle(args.bundle, args.key, args.json)
    if args.file is not None:
        from graph.cli.offline import verify_file

        return verify_file(args.file, args.key, args.witness, args.json, args.jobs)
    from tortoise import Tortoise

    from models import db
    from resolvers.read.verify import verify_task

    if args.task is None:
        print("Give a task id, or --file EXPORT.", file=sys.stderr)
        return 2
    try:
        task_id = uuid.UUID(args.task)
    except ValueError:
        print(f"{args.task!r} is not a task id.", file=sys.stderr)
        return 2

    url = db.database_url()
    absent = absent_database(url)
    if absent:
        print(absent, file=sys.stderr)
        return 2

    async def run() -> int:
        await db.open_database(url)
        try:
            check = await verify_task(task_id)
        finally:
            await Tortoise.close_connections()
        if check is None:
            print(f"No task {task_id}.", file=sys.stderr)
            return 2
        print(json.dumps({
            "intact": check.intact, "lines": check.lines, "brokenAt": check.broken_at, "reason": check.reason,
            "problem": check.problem, "erased": check.erased,
        }))
        return 0 if check.intact else 1

    return asyncio.run(run())


def export(args: argparse.Namespace) -> int:
    from graph.cli.offline import export_task
    from models import db

    absent = absent_database(db.database_url())
    if absent:
        print(absent, file=sys.stderr)
        return 2
    if args.bundle is not None:
        from graph.cli.bundle import export_bundle

        return export_bundle(args.bundle, args.task)
    if len(args.task) != 1:
        print("Give one task id, or --bundle FILE and the tasks it holds.", file=sys.stderr)
        return 2
    return export_task(args.task[0], args.out)


def key(args: argparse.Namespace) -> int:
    from graph.cli.offline import print_key

    return print_key()


def schema(args: argparse.Namespace) -> int:
    from graph.api.schema import export

    sys.stdout.write(export())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentlog", description="The record of what AI agents did.")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("serve", help="serve GraphQL under uvicorn")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--workers", type=int, default=1, help="server processes sharing the port (PostgreSQL)")
    p.set_defaults(run=serve)

    p = commands.add_parser("token", help="print a bearer token for local use")
    p.add_argument("--sub", required=True)
    p.add_argument("--tenant", required=True)
    p.add_argument("--name")
    p.add_argument("--roles", nargs="*", default=[], help="roles, space- or comma-separated")
    p.add_argument("--kit", action="store_true", help="a kit token, which writes the record")
    p.add_argument("--ttl", type=duration, default=duration(DEFAULT_TTL),
                   help=f"how long the token is good for: seconds, or with s, m, h or d (default {DEFAULT_TTL})")
    p.set_defaults(run=token)

    p = commands.add_parser("verify", help="walk a task's tree's chain, or an export file; exit 1 when it is broken")
    p.add_argument("task", nargs="?")
    p.add_argument("--file", help="an export file to verify offline, with no server or database")
    p.add_argument("--bundle", metavar="FILE", help="an incident bundle to verify offline, every part of it")
    p.add_argument("--key", help="the verifier key (as checkpointKey answers it), or a file holding it")
    p.add_argument("--witness", action="append", default=[], metavar="NOTE",
                   help="a file holding a checkpoint a witness kept; may be given more than once")
    p.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="check a large file's lines in N processes side by side (default: one per core)")
    p.set_defaults(run=verify)

    p = commands.add_parser("export", help="write a task's tree's whole record as JSON Lines, from the database")
    p.add_argument("task", nargs="+")
    p.add_argument("--out", help="the file to write (default: standard output)")
    p.add_argument("--bundle", metavar="FILE",
                   help="write an incident bundle of the tasks' trees and the tenant's ledger to FILE")
    p.set_defaults(run=export)

    p = commands.add_parser("key", help="print the checkpoint verifier key of this server's signing key, for --key")
    p.set_defaults(run=key)

    p = commands.add_parser("schema", help="print the GraphQL schema")
    p.set_defaults(run=schema)

    p = commands.add_parser("settings", help="print the table of AGENTLOG_* settings, as in the README")
    p.set_defaults(run=settings_reference)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValueError as exc:
        from models.settings import Refused

        if not isinstance(exc, Refused):
            raise
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
