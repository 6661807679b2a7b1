"""Every AGENTLOG_* setting is checked before the server starts, read once there, and the README lists each one as
it is."""

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graph.app import settle_heap
from models import settings

REPO = Path(__file__).resolve().parent.parent

BAD = [
    ("AGENTLOG_MAX_TOKENS", "ten", "valid integer"),
    ("AGENTLOG_TRANSCRIPT_ROW_CAP", "0", "greater than or equal to 1"),
    ("AGENTLOG_RECORD_CONTENT", "maybe", "valid boolean"),
    ("AGENTLOG_LOG_FORMAT", "xml", "'text' or 'json'"),
    ("AGENTLOG_DATABASE_URL", "mysql://db/agentlog", "a URL starting with sqlite://"),
    ("AGENTLOG_DATABASE_URL", "postgres://u@h1:5432,h2:54x2/agentlog", "the port of 'h2:54x2' is not a port number"),
    ("AGENTLOG_DATABASE_URL", "postgres://u@h1,h2/agentlog?target_session_attrs=writable",
     "target_session_attrs is one of any, primary, standby, prefer-standby, read-write, read-only"),
]


def serve(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graph.cli", "serve", "--port", "0"], cwd=REPO, capture_output=True, text=True,
        env={**os.environ, **env}, timeout=60,
    )


@pytest.mark.parametrize(("variable", "value", "should"), BAD)
def test_a_bad_value_stops_serve_with_one_line_naming_it(variable, value, should):
    out = serve({variable: value})

    assert out.returncode == 2
    line = out.stderr.strip()
    assert line.startswith(f"{variable}={value!r} is refused: ") and should in line and "\n" not in line


def test_every_bad_value_is_named_at_once():
    out = serve({"AGENTLOG_MAX_ALIASES": "-1", "AGENTLOG_LOG_LEVEL": "LOUD"})

    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert [line.split("=", 1)[0] for line in lines] == ["AGENTLOG_MAX_ALIASES", "AGENTLOG_LOG_LEVEL"]


def test_the_secret_is_never_printed():
    out = serve({"AGENTLOG_JWT_SECRET": "s3cret-value", "AGENTLOG_MAX_TOKENS": "x"})

    assert out.returncode == 2 and "s3cret-value" not in out.stderr + out.stdout


def test_the_settings_are_the_environment_as_it_was_when_they_were_read(monkeypatch):
    monkeypatch.setenv("AGENTLOG_TRANSCRIPT_ROW_CAP", "12")
    read = settings.load()
    monkeypatch.setenv("AGENTLOG_TRANSCRIPT_ROW_CAP", "13")

    with settings.using(read):
        assert settings.transcript_row_cap() == 12
    with settings.using(settings.load(transcript_row_cap=7)):
        assert settings.transcript_row_cap() == 7


def test_settings_given_in_place_of_the_environment_take_its_other_values(monkeypatch):
    monkeypatch.setenv("AGENTLOG_EXECUTOR", "stock")

    given = settings.load(otlp_wait_s=1)

    assert (given.otlp_wait_s, given.executor) == (1, "stock")


def test_a_refused_value_is_named_with_what_it_should_be(monkeypatch):
    monkeypatch.setenv("AGENTLOG_MAX_TOKENS", "lots")
    with pytest.raises(settings.Refused, match="AGENTLOG_MAX_TOKENS='lots' is refused"):
        settings.load()
    with pytest.raises(settings.Refused, match="AGENTLOG_MAX_ALIASES=0 is refused") as refused:
        settings.load(max_tokens=40, max_aliases=0)
    assert len(refused.value.lines) == 1


def test_the_readme_lists_every_setting_as_the_settings_class_defines_it():
    readme = (REPO / "README.md").read_text()

    assert settings.reference() in readme, "run `agentlog settings` and paste its table into the README"


def test_the_settings_command_prints_the_table():
    out = subprocess.run([sys.executable, "-m", "graph.cli", "settings"], cwd=REPO, capture_output=True, text=True)

    assert out.stdout == settings.reference()


def test_a_misspelt_variable_is_named(monkeypatch):
    monkeypatch.setenv("AGENTLOG_MAX_TOKEN", "40")

    assert "AGENTLOG_MAX_TOKEN" in settings.unknown()
    assert "AGENTLOG_MAX_TOKENS" not in settings.unknown()


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)
    gc.unfreeze()


@pytest.mark.parametrize(("young", "expected"), [("12345", 12345), ("0", None)])
def test_a_started_server_collects_its_youngest_generation_as_set(thresholds, young, expected):
    gc.set_threshold(700, *thresholds[1:])

    settle_heap(settings.load(gc_young=young).gc_young)

    assert gc.get_threshold() == (expected or 700, *thresholds[1:])
    assert gc.get_freeze_count() > 0
