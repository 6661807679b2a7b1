"""Records one piece of work against a running agentlog with the kit client, reads it back as two people,
and verifies it.

    python docs/walkthrough.py [http://127.0.0.1:8000]

Needs `agentlog-kit` (`pip install -e kit`) and the `agentlog token` command.
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from agentlog_kit import Kit

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
MIA_PERSON = {"id": "mia", "name": "Mia"}


def token(*args: str) -> str:
    return subprocess.run(["agentlog", "token", "--tenant", "shop", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


KIT = token("--sub", "kit", "--kit")
MIA = token("--sub", "mia", "--name", "Mia", "--roles", "Mechanic")
NOOR = token("--sub", "noor", "--name", "Noor", "--roles", "Manager")


def read(bearer: str, query: str, **variables: object) -> dict:
    answer = httpx.post(f"{URL}/graphql", json={"query": query, "variables": variables},
                        headers={"Authorization": f"Bearer {bearer}"}).json()
    if answer.get("errors"):
        raise SystemExit(json.dumps(answer["errors"], indent=2))
    return answer["data"]


with Kit(URL, KIT) as kit:
    kit.register_agent("Estimator", roles=["Helper"], transcript_readers=["Manager"])
    kit.define_policies(supervises_agents=["Manager"])
    with kit.task(agent="Estimator", skill="EstimateRepair", actor={"id": "estimator", "name": "Estimator"},
                  requester=MIA_PERSON, given="Rear brake does not bite.", limit_micros=50_000,
                  about="Ticket T-7") as t:
        for step, tool, args, answer in [
            (1, "PartsFor", {"fault": "rear brake"}, ["brake pads", "cable"]),
            (2, "NoteRepair", {"note": "New pads and a cable: one hour."}, "Noted on T-7."),
        ]:
            t.model_call("Everyday", route_rule="llm:default", input_tokens=120, output_tokens=30, cost_micros=200,
                         messages=[{"role": "user", "content": "Estimate T-7"}],
                         response={"toolCalls": [{"id": f"c{step}", "name": tool}]})
            call = t.tool_call(tool, tool_call_id=f"c{step}", input=args,
                               effect="CHANGE" if tool == "NoteRepair" else "QUERY")
            call.result(answer, duration_ms=12)
        t.model_call("Everyday", route_rule="llm:default", input_tokens=200, output_tokens=40, cost_micros=200,
                     response={"text": "One hour."})
        t.outcome = "Estimated one hour."
        t.result = {"hours": 1}

READ = """query($id: ID!) {
  task(id: $id) { status spentMicros modelCalls toolCalls turns about given
                  record { seq kind summary contentAccess payload } }
  verifyTrace(task: $id) { intact lines brokenAt problem }
}"""
print("Mia, who asked:", json.dumps(read(MIA, READ, id=t.id), indent=2))
print("Noor, who supervises (no content):", json.dumps(read(NOOR, READ, id=t.id)["task"]["record"][:3], indent=2))
