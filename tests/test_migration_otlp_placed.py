"""Migrations 0012 and 0013 keep every span taken: placed spans move into one `otlp_placed` row per trace, then
into a row each, with an agent span's task and a tool span's tool; a waiting span stays waiting with its body;
and the way back restores them."""

import json
import subprocess
import sys
from pathlib import Path

from tests.migration_steps import TASK
from tests.test_start_up import drop, empty_database

ROOT = Path(__file__).resolve().parent.parent


async def test_placed_spans_move_into_one_row_per_trace_and_back(database):
    url, name = await empty_database(database)
    try:
        done = subprocess.run([sys.executable, "-m", "tests.migration_steps", url], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
    finally:
        await drop(database, name)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])

    assert found["placed"] == [
        {"tenant": "shop", "trace_id": "t1", "spans": [
            ["a1", None, "agent", TASK, None], ["c1", "a1", "llm", None, None], ["p1", "a1", "tool", None, "PartsFor"],
        ]},
        {"tenant": "shop", "trace_id": "t2", "spans": [["f1", None, "other", None, None]]},
    ]
    assert found["waiting"] == [{"tenant": "shop", "trace_id": "t1", "span_id": "w1", "parent_span_id": "gone",
                                 "kind": "llm", "body": '{"name":"chat","fields":{}}', "received_us": 4}]
    assert found["duplicate_refused"] is True
    assert [tuple(row.values()) for row in found["by_id"]] == [
        ("shop", "t1", "a1", None, "agent", TASK, None), ("shop", "t1", "c1", "a1", "llm", None, None),
        ("shop", "t2", "f1", None, "other", None, None), ("shop", "t1", "p1", "a1", "tool", None, "PartsFor"),
    ]
    assert [(row["span_id"], row["placed"], row["task_id"]) for row in found["back"]] == [
        ("a1", True, TASK), ("c1", True, None), ("f1", True, None), ("p1", True, None), ("w1", False, None),
    ]
    assert json.loads(next(row["body"] for row in found["back"] if row["span_id"] == "p1")) == {
        "fields": {"tool": "PartsFor"}}
