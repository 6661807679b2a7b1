"""The `agentlog` command: serve, token, verify, export, schema."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import uuid

from models import db


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from resolvers.signing import SigningKeyError, signer

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        signer()
    except SigningKeyError as exc:
        print(exc, file=sys.stderr)
        return 2
    if not os.environ.get("AGENTLOG_JWT_SECRET"):
        logging.getLogger("agentlog").warning(
            "AGENTLOG_JWT_SECRET is not set: tokens are signed with a development key anyone can know."
        )
    if args.workers > 1 and db.database_url().startswith("sqlite"):
        logging.getLogger("agentlog").warning(
            "%d workers share one SQLite file: writers queue on its lock; use PostgreSQL for several processes.",
            args.workers,
        )
    uvicorn.run("graph.app:create_app", factory=True, host=args.host, port=args.port, workers=args.workers,
                log_level="info")
    return 0


def token(args: argparse.Namespace) -> int:
    from permissions.tokens import issue_token

    roles = [r for part in args.roles for r in part.split(",") if r]
    print(issue_token(args.sub, args.tenant, roles=roles, name=args.name, kit=args.kit))
    return 0


def verify(args: argparse.Namespace) -> int:
    from tortoise import Tortoise

    from resolvers.verify import verify_task

    if args.file is not None:
        from graph.offline import verify_file

        return verify_file(args.file, args.key, args.witness, args.json)
    if args.task is None:
        print("Give a task id, or --file EXPORT.", file=sys.stderr)
        return 2
    try:
        task_id = uuid.UUID(args.task)
    except ValueError:
        print(f"{args.task!r} is not a task id.", file=sys.stderr)
        return 2

    async def run() -> int:
        await db.open_database(db.database_url())
        try:
            check = await verify_task(task_id)
        finally:
            await Tortoise.close_connections()
        if check is None:
            print(f"No task {task_id}.", file=sys.stderr)
            return 2
        print(json.dumps({
            "intact": check.intact, "lines": check.lines, "brokenAt": check.broken_at,
            "problem": check.problem, "erased": check.erased,
        }))
        return 0 if check.intact else 1

    return asyncio.run(run())


def export(args: argparse.Namespace) -> int:
    from graph.offline import export_task

    return export_task(args.task, args.out)


def schema(args: argparse.Namespace) -> int:
    from graph.schema import export

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
    p.set_defaults(run=token)

    p = commands.add_parser("verify", help="walk a task's tree's chain, or an export file; exit 1 when it is broken")
    p.add_argument("task", nargs="?")
    p.add_argument("--file", help="an export file to verify offline, with no server or database")
    p.add_argument("--key", help="the verifier key (as checkpointKey answers it), or a file holding it")
    p.add_argument("--witness", action="append", default=[], metavar="NOTE",
                   help="a file holding a checkpoint a witness kept; may be given more than once")
    p.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    p.set_defaults(run=verify)

    p = commands.add_parser("export", help="write a task's tree's whole record as JSON Lines, from the database")
    p.add_argument("task")
    p.add_argument("--out", help="the file to write (default: standard output)")
    p.set_defaults(run=export)

    p = commands.add_parser("schema", help="print the GraphQL schema")
    p.set_defaults(run=schema)

    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
