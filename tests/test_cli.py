"""The agentlog command: tokens for local use, and verifying a record from the shell."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from permissions.tokens import read_token
from models import TraceEvent
from tests.shop import Shop


HERE = Path(__file__).resolve().parent.parent


def agentlog(*args: str, database: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    env.pop("AGENTLOG_DATABASE_URL", None)
    if database:
        env["AGENTLOG_DATABASE_URL"] = database
    return subprocess.run([sys.executable, "-m", "graph.cli", *args], capture_output=True, text=True, env=env,
                          timeout=60, cwd=cwd)


def test_token_prints_a_token_the_server_accepts():
    out = agentlog("token", "--sub", "mia", "--tenant", "shop", "--roles", "Mechanic,Manager", "--name", "Mia")

    principal = read_token(out.stdout.strip())
    assert (principal.sub, principal.tenant, principal.name, principal.kit) == ("mia", "shop", "Mia", False)
    assert principal.roles == {"Mechanic", "Manager"}


def test_a_kit_token_says_so():
    out = agentlog("token", "--sub", "kit", "--tenant", "shop", "--kit")

    assert read_token(out.stdout.strip()).kit is True


async def test_verify_answers_intact_and_exits_zero(client, database):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    out = agentlog("verify", task, database=database)

    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"intact": True, "lines": 9, "brokenAt": None, "reason": None, "problem": None,
                                       "erased": 0}


async def test_verify_names_the_broken_line_and_exits_one(client, database):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    line = await TraceEvent.filter(task_id=task, seq=4).first()
    await TraceEvent.filter(id=line.id).update(summary="Something else.")

    out = agentlog("verify", task, database=database)

    assert out.returncode == 1
    assert json.loads(out.stdout)["brokenAt"] == 4


@pytest.mark.parametrize("command", ["verify", "export"])
def test_reading_in_a_folder_without_a_database_says_where_it_looked_and_makes_none(tmp_path, command):
    out = agentlog(command, str(uuid.uuid4()), cwd=tmp_path)

    assert out.returncode == 2
    assert str(tmp_path / "agentlog.db") in out.stderr and "AGENTLOG_DATABASE_URL" in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_opening_a_database_leaves_no_lock_file_beside_it(tmp_path):
    (tmp_path / "kept.db").touch()

    out = agentlog("verify", str(uuid.uuid4()), database=f"sqlite://{tmp_path / 'kept.db'}", cwd=tmp_path)

    assert out.returncode == 2 and "No task" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.db"]


def test_verify_refuses_what_is_not_a_task_id():
    out = agentlog("verify", "T-7")

    assert out.returncode == 2 and "not a task id" in out.stderr


async def test_health_and_graphiql(client):
    assert (await client.http.get("/healthz")).json() == {"status": "ok"}
    page = await client.http.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "graphiql" in page.text.lower()


async def test_me_says_who_the_token_is_for(client):
    shop = Shop(client)

    data = await client.ok("{ me { id name tenant roles } }", token=shop.noor)

    assert data["me"] == {"id": "noor", "name": "Noor", "tenant": shop.tenant, "roles": ["Auditor", "Manager"]}
    error = await client.error("{ me { id } }")
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
