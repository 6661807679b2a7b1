"""A server that cannot start, or a command that cannot read the record, says why in one line and exits 2, as
for any bad setting: a PostgreSQL database that does not exist, a JWT secret too short to be one."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.pg_cluster import free_port

REPO = Path(__file__).resolve().parent.parent


SERVE = ("serve", "--port", "0")


def agentlog(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    ours = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLOG_")}
    return subprocess.run([sys.executable, "-m", "graph.cli", *args], cwd=REPO, capture_output=True,
                          text=True, env={**ours, **env}, timeout=60)


def serve(env: dict[str, str]) -> subprocess.CompletedProcess:
    return agentlog(env, *SERVE)


@pytest.mark.postgres_only
@pytest.mark.parametrize("command", [SERVE, ("verify", str(uuid.uuid4())), ("export", str(uuid.uuid4()))],
                         ids=["serve", "verify", "export"])
def test_a_postgresql_database_that_does_not_exist_is_named_in_one_line(database, command):
    missing = f"agentlog_missing_{uuid.uuid4().hex[:8]}"
    url = f"{database.rsplit('/', 1)[0]}/{missing}"

    out = agentlog({"AGENTLOG_DATABASE_URL": url}, *command)

    assert out.returncode == 2
    line = out.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"AGENTLOG_DATABASE_URL names the PostgreSQL database '{missing}', which does not exist")


@pytest.mark.postgres_only
def test_a_database_missing_behind_a_url_of_several_hosts_is_named_with_them(database):
    """The URL is read as libpq reads it: the host that does not answer is passed over, the primary is asked."""
    missing = f"agentlog_missing_{uuid.uuid4().hex[:8]}"
    scheme, _, rest = database.rsplit("/", 1)[0].partition("://")
    user, _, answering = rest.rpartition("@")
    hosts = f"127.0.0.1:{free_port()},{answering}"
    url = f"{scheme}://{user}@{hosts}/{missing}?target_session_attrs=read-write"

    out = serve({"AGENTLOG_DATABASE_URL": url})

    assert out.returncode == 2
    assert out.stderr.strip().startswith(
        f"AGENTLOG_DATABASE_URL names the PostgreSQL database '{missing}', which does not exist on {hosts}: ")


@pytest.mark.parametrize("secret", ["s" * 31, "short", "é" * 15])
def test_a_jwt_secret_shorter_than_32_bytes_is_refused_at_start(secret):
    out = serve({"AGENTLOG_JWT_SECRET": secret})

    assert out.returncode == 2
    assert out.stderr.strip() == (
        "AGENTLOG_JWT_SECRET=(hidden) is refused: it should be 32 bytes or more, e.g. `openssl rand -hex 32`.")
    assert secret not in out.stderr + out.stdout


def test_a_jwt_secret_of_32_bytes_is_taken(monkeypatch):
    from models import settings

    monkeypatch.setenv("AGENTLOG_JWT_SECRET", "é" * 16)

    assert settings.problems() == []
