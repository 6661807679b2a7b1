"""A throwaway PostgreSQL cluster of the test's own, made with initdb and driven with pg_ctl on a free port. It never
touches the machine's own server. initdb refuses root, so when the tests run as root the cluster belongs to the
`postgres` user and its commands run through `runuser`."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

BIN = Path(os.environ.get("AGENTLOG_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children_of(parent: int) -> list[int]:
    """The processes whose parent is `parent`, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


class Cluster:
    def __init__(self) -> None:
        self._make_home("agentlog-cluster-")
        self._run(BIN / "initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")

    def _make_home(self, prefix: str) -> None:
        """A folder of its own, owned by the postgres user when run as root, and a free port."""
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self.port = free_port()
        self.owner = "postgres" if os.geteuid() == 0 else None
        if self.owner:
            entry = pwd.getpwnam(self.owner)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}"

    def _run(self, *command: object, timeout: float = 120) -> None:
        argv = [str(part) for part in command]
        if self.owner:
            argv = ["runuser", "-u", self.owner, "--", *argv]
        subprocess.run(argv, check=True, capture_output=True, timeout=timeout, cwd=self.root)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(BIN / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")

    def kill(self) -> None:
        """SIGKILL to the postmaster and every process it started, as when its host dies: stopped first, so that
        it forks nothing more while its children are found. Its shared memory segment, which no one removes once
        they are all gone, is removed."""
        said = (self.data / "postmaster.pid").read_text().splitlines()
        postmaster = int(said[0])
        os.kill(postmaster, signal.SIGSTOP)
        for pid in [postmaster, *children_of(postmaster)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        segment = said[6].split()[-1] if len(said) > 6 else None
        if segment:
            subprocess.run(["ipcrm", "-m", segment], capture_output=True, timeout=30)

    def promote(self) -> None:
        """A standby (tests/pg_replicas.py) made a primary, once it has replayed all the WAL it has."""
        self._run(BIN / "pg_ctl", "-D", self.data, "-w", "-t", "60", "promote")

    def running(self) -> bool:
        """Whether its postmaster is alive. A killed one whose parent never reaps it stays a zombie, which
        `pg_ctl status` takes for alive and `pg_ctl stop` waits on until it gives up; it is read from /proc."""
        try:
            postmaster = (self.data / "postmaster.pid").read_text().split("\n", 1)[0].strip()
            state = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state not in ("Z", "X")

    def remove(self) -> None:
        try:
            if self.running():
                self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
