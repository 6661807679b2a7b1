"""The README works as written: its first command, the walkthrough and the commands "by hand", run from a copy of
the repository's files in a fresh venv, with nothing of the test run's environment but PATH, HOME and pip's own
settings. Only the port changes: the server takes a free one in place of 8000."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.servers import launch

REPO = Path(__file__).resolve().parent.parent
INSTALL_SECONDS = 600


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), re.S)


def checkout(into: Path) -> None:
    """The repository's files as a fresh clone would have them (tracked, and new ones not yet committed)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def newcomer_environment(home: Path) -> dict[str, str]:
    """No AGENTLOG_* variable and no venv on PATH: a shell as a newcomer opens it."""
    path = [p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p).parent / "pyvenv.cfg").exists()]
    kept = {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "PYENV")) or k in ("HOME", "LANG")}
    return {**kept, "PATH": os.pathsep.join(path), "HOME": os.environ.get("HOME", str(home))}


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_readme_runs_as_written_from_a_fresh_venv(tmp_path):
    serve, _tests, walk, by_hand = shell_blocks()
    assert "agentlog serve" in serve and "-e kit" in serve, "the first command installs the kit the walkthrough needs"
    repo = tmp_path / "agentlog"
    checkout(repo)
    env = newcomer_environment(tmp_path)

    server = launch(["timeout", "--kill-after=10", "900", "bash", "-euo", "pipefail", "-c",
                     serve.replace("agentlog serve", "agentlog serve --port 0")], repo, env, INSTALL_SECONDS)
    try:
        assert server.port, "\n".join(server.log[-30:])
        port = str(server.port)
        walked = bash(walk.replace(":8000", f":{port}"), repo, env)
        assert walked.returncode == 0, walked.stdout[-2000:] + walked.stderr[-2000:]
        task = re.search(r"^export TASK=([0-9a-f-]{36})$", walked.stdout, re.M)
        assert task, walked.stdout[-2000:]
        assert '"intact": true' in walked.stdout
        assert f"http://127.0.0.1:{port}/inspect/{task.group(1)}#token=ey" in walked.stdout
        assert "Ana, an Auditor" in walked.stdout and "(content DENIED)" in walked.stdout

        exports = "\n".join(line for line in walk.splitlines() if line.startswith("export "))
        read = bash(f"{exports}\n{task.group(0)}\n{by_hand.replace(':8000', f':{port}')}", repo, env)
    finally:
        server.stop()

    assert read.returncode == 0, read.stdout[-2000:] + read.stderr[-2000:]
    assert f'"id":"{task.group(1)}"' in read.stdout
    assert '"verifyTrace":{"intact":true,"lines":9' in read.stdout
    assert read.stdout.rstrip().endswith('{"intact": true, "lines": 9, "brokenAt": null, "reason": null, "problem": null, "erased": 0}')
