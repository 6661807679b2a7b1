"""No well-known key where it matters: a server reachable from elsewhere needs its own secret, and tokens expire."""

import os
import subprocess
import sys
import time

import jwt
import pytest

from permissions.tokens import DEV_SECRET, read_token


def agentlog(*args: str, secret: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "AGENTLOG_JWT_SECRET"}
    if secret is not None:
        env["AGENTLOG_JWT_SECRET"] = secret
    return subprocess.run([sys.executable, "-m", "graph.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "agentlog.example"])
def test_without_a_secret_serve_refuses_a_host_reachable_from_elsewhere(host):
    out = agentlog("serve", "--host", host, "--port", "0")

    assert out.returncode == 2
    assert "AGENTLOG_JWT_SECRET" in out.stderr and host in out.stderr
    assert "Uvicorn running" not in out.stdout + out.stderr


@pytest.mark.parametrize("host, secret", [
    ("127.0.0.1", None), ("::1", None), ("localhost", None), ("0.0.0.0", "s" * 32), ("::", "s" * 32),
])
def test_serve_starts_on_loopback_without_a_secret_and_anywhere_with_one(monkeypatch, host, secret):
    import uvicorn

    from graph.cli import main as cli

    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.update(kwargs))
    monkeypatch.delenv("AGENTLOG_JWT_SECRET", raising=False)
    if secret:
        monkeypatch.setenv("AGENTLOG_JWT_SECRET", secret)

    assert cli.main(["serve", "--host", host, "--port", "0"]) == 0
    assert started["host"] == host


def claims_of(token: str, secret: str = DEV_SECRET) -> dict:
    return jwt.decode(token, secret, algorithms=["HS256"])


def test_a_token_lives_twelve_hours_unless_told():
    before = time.time()
    out = agentlog("token", "--sub", "mia", "--tenant", "shop")

    lifetime = claims_of(out.stdout.strip())["exp"] - before
    assert 12 * 3600 - 5 <= lifetime <= 12 * 3600 + 5


@pytest.mark.parametrize("ttl, seconds", [("90", 90), ("90s", 90), ("30m", 1800), ("2h", 7200), ("7d", 604800)])
def test_ttl_sets_when_the_token_expires(ttl, seconds):
    before = time.time()
    out = agentlog("token", "--sub", "kit", "--tenant", "shop", "--kit", "--ttl", ttl, secret="s" * 32)

    assert out.returncode == 0, out.stderr
    lifetime = claims_of(out.stdout.strip(), "s" * 32)["exp"] - before
    assert seconds - 5 <= lifetime <= seconds + 5
    assert read_token(out.stdout.strip(), "s" * 32).kit is True


@pytest.mark.parametrize("ttl", ["0", "-5", "soon", "12y"])
def test_a_ttl_that_is_not_a_time_is_refused(ttl):
    out = agentlog("token", "--sub", "kit", "--tenant", "shop", "--ttl", ttl)

    assert out.returncode == 2 and "time to live" in out.stderr and not out.stdout
