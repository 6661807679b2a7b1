"""What `agentlog serve` leaves behind it: JSON log lines a machine reads (ISO-8601 UTC times, no terminal
colours), and no file git would offer to commit."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.servers import launch

REPO = Path(__file__).resolve().parent.parent
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_json_log_lines_carry_an_iso_utc_time_and_no_terminal_colours(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AGENTLOG_")},
           "AGENTLOG_LOG_FORMAT": "json", "AGENTLOG_DATABASE_URL": f"sqlite://{tmp_path / 'agentlog.db'}",
           "TZ": "America/New_York", "FORCE_COLOR": "1"}
    server = launch([sys.executable, "-m", "graph.cli", "serve", "--port", "0"], tmp_path, env)
    server.stop()

    assert server.port, "\n".join(server.log[-20:])
    assert not any("\x1b" in line for line in server.log)
    lines = [json.loads(line) for line in server.log]
    assert any(line["message"].startswith("Uvicorn running on") for line in lines)
    assert all(ISO_UTC.match(line["time"]) for line in lines), [line["time"] for line in lines]


def test_the_files_a_server_keeps_beside_its_database_are_ignored_by_git():
    for name in ("agentlog.db", "agentlog.db.sweeping", "agentlog.db.migrating", "agentlog-signing.key"):
        assert subprocess.run(["git", "check-ignore", "-q", name], cwd=REPO).returncode == 0, name
