"""Records one piece of work against a running agentlog, reads it back as two people, and verifies it.

    python docs/walkthrough.py [http://127.0.0.1:8000]

Uses only the standard library and the `agentlog token` command.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

URL = (sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000") + "/graphql"


def token(*args: str) -> str:
    return subprocess.run(["agentlog", "token", "--tenant", "shop", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


KIT = token("--sub", "kit", "--kit")
MIA = token("--sub", "mia", "--name", "Mia", "--roles", "Mechanic")
NOOR = token("--sub", "noor", "--name", "Noor", "--roles", "Manager")


def gql(bearer: str, query: str, **variables: object) -> dict:
    body = json.dumps({"query": query, "variables": variables}).encode()
    request = urllib.request.Request(URL, body, {"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"})
    with urllib.request.urlopen(request) as response:
        answer = json.load(response)
    if answer.get("errors"):
        raise SystemExit(json.dumps(answer["errors"], indent=2))
    return answer["data"]


def write(mutation: str, input_type: str, input: dict, fields: str = "seq") -> dict:
    query = f"mutation($input: {input_type}!) {{ {mutation}(input: $input) {{ {fields} }} }}"
    return gql(KIT, query, input=input)[mutation]


write("registerAgent", "RegisterAgentInput", {"name": "Estimator", "roles": ["Helper"], "transcriptReaders": ["Manager"]}, "name")
write("definePolicies", "PoliciesInput", {"supervisesAgents": ["Manager"]}, "supervisesAgents")
task = write("startTask", "StartTaskInput", {
    "agent": "Estimator", "skill": "EstimateRepair", "about": "Ticket T-7", "given": "Rear brake does not bite.",
    "requester": {"id": "mia", "name": "Mia"}, "actor": {"id": "estimator", "name": "Estimator"}, "limitMicros": 50000,
}, "id")["id"]
for step, tool, args, answer in [(1, "PartsFor", {"fault": "rear brake"}, ["brake pads", "cable"]),
                                 (2, "NoteRepair", {"note": "New pads and a cable: one hour."}, "Noted on T-7.")]:
    write("recordModelCall", "ModelCallInput", {
        "task": task, "model": "Everyday", "routeRule": "llm:default", "inputTokens": 120, "outputTokens": 30,
        "costMicros": 200, "messages": [{"role": "user", "content": "Estimate T-7"}],
        "response": {"toolCalls": [{"id": f"c{step}", "name": tool}]},
    })
    write("recordToolCall", "ToolCallInput", {"task": task, "tool": tool, "toolCallId": f"c{step}", "input": args,
                                              "effect": "CHANGE" if tool == "NoteRepair" else "QUERY"})
    write("recordToolResult", "ToolResultInput", {"task": task, "tool": tool, "toolCallId": f"c{step}", "output": answer,
                                                  "durationMs": 12})
write("recordModelCall", "ModelCallInput", {"task": task, "model": "Everyday", "routeRule": "llm:default",
                                            "inputTokens": 200, "outputTokens": 40, "costMicros": 200,
                                            "response": {"text": "One hour."}})
write("endTask", "EndTaskInput", {"task": task, "status": "DONE", "outcome": "Estimated one hour.",
                                  "result": {"hours": 1}}, "status")

READ = """query($id: ID!) {
  task(id: $id) { status spentMicros modelCalls toolCalls turns about given
                  record { seq kind summary contentAccess payload } }
  verifyTrace(task: $id) { intact lines brokenAt problem }
}"""
print("Mia, who asked:", json.dumps(gql(MIA, READ, id=task), indent=2))
print("Noor, who supervises (no content):", json.dumps(gql(NOOR, READ, id=task)["task"]["record"][:3], indent=2))
