"""What the image does, without a Docker engine: only the files the Dockerfile copies, installed into a fresh
venv, served from an empty folder, and the walkthrough (a client, with the kit of the test run) run against it."""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.servers import Server, launch

REPO = Path(__file__).resolve().parent.parent
SECRET = "container-test-secret-of-32-bytes-or-more"


def copied() -> list[tuple[str, str]]:
    """(source, destination) of every COPY in the Dockerfile, destinations relative to its WORKDIR."""
    pairs = []
    for line in (REPO / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            *sources, destination = shlex.split(line)[1:]
            pairs += [(source, destination) for source in sources]
    return pairs


def image_files(app: Path) -> None:
    for source, destination in copied():
        target = app / destination
        if (REPO / source).is_dir():
            shutil.copytree(REPO / source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / source, target / source)


def health_check(port: int, env: dict[str, str]) -> int:
    """The Dockerfile's HEALTHCHECK command, pointed at the port the test's server took; its exit code."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    command = json.loads(re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", text, re.M).group(1))
    command = [part.replace(":8000/", f":{port}/") for part in command]
    return subprocess.run(command, env=env, capture_output=True, timeout=30).returncode


def serve(venv: Path, data: Path, env: dict[str, str]) -> Server:
    command = ["timeout", "--kill-after=10", "600", venv / "bin" / "agentlog", "serve", "--host", "127.0.0.1",
               "--port", "0"]
    return launch(command, data, env)


def test_the_image_serves_the_walkthrough_from_an_empty_folder(tmp_path, database):
    app, data, venv = tmp_path / "app", tmp_path / "data", tmp_path / "venv"
    image_files(app)
    data.mkdir()
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    install = subprocess.run([venv / "bin" / "pip", "install", "-q", "."], cwd=app, capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    url = database if database.startswith("postgres") else f"sqlite://{data / 'agentlog.db'}"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "AGENTLOG_JWT_SECRET": SECRET,
           "AGENTLOG_DATABASE_URL": url}

    server = serve(venv, data, env)
    try:
        assert server.port, "\n".join(server.log[-30:])
        walk = subprocess.run([sys.executable, REPO / "docs" / "walkthrough.py", server.url], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
        healthy = health_check(server.port, env)
    finally:
        server.stop()

    assert healthy == 0, "the image's HEALTHCHECK fails on a serving server"
    assert health_check(server.port, env) != 0, "the image's HEALTHCHECK passes with no server"

    assert walk.returncode == 0, walk.stdout[-2000:] + walk.stderr[-2000:]
    assert re.search(r'"intact": true', walk.stdout)
    assert url.startswith("postgres") or (data / "agentlog.db").exists()
