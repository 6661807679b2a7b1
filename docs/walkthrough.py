"""Records one piece of work against a running agentlog with the kit client, reads it back as three people,
verifies it, and prints the task's id and its inspector link.

    python docs/walkthrough.py [http://127.0.0.1:8000]

Needs `agentlog-kit` (`pip install -e kit`) and the `agentlog` command on PATH.
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from agentlog_kit import Kit

URL = (sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000").rstrip("/")


def token(*args: str) -> str:
    return subprocess.run(["agentlog", "token", "--tenant", "shop", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


KIT = token("--sub", "kit", "--kit")
MIA = token("--sub", "mia", "--name", "Mia", "--roles", "Mechanic")
NOOR = token("--sub", "noor", "--name", "Noor", "--roles", "Manager")
ANA = token("--sub", "ana", "--name", "Ana", "--roles", "Auditor")


def read(bearer: str, query: str, **variables: object) -> dict:
    answer = httpx.post(f"{URL}/graphql", json={"query": query, "variables": variables},
                        headers={"Authorization": f"Bearer {bearer}"}).json()
    if answer.get("errors"):
        raise SystemExit(json.dumps(answer["errors"], indent=2))
    return answer["data"]


with Kit(URL, KIT) as kit:
    # Managers may read the transcripts of the Estimator's work.
    kit.register_agent("Estimator", roles=["Helper"], transcript_readers=["Manager"])
    # Who reads what is decided by role: a Manager supervises the tenant's agents (figures, words and sentences,
    # never content); an Auditor audits them (everything, content included). Mia reads her own tasks as their
    # requester, whatever her roles.
    kit.define_policies(supervises_agents=["Manager"], audits_agents=["Auditor"])
    with kit.task(agent="Estimator", skill="EstimateRepair", actor={"id": "estimator", "name": "Estimator"},
                  requester={"id": "mia", "name": "Mia"}, given="Rear brake does not bite.", limit_micros=50_000,
                  about="Ticket T-7", trigger="Mia asked for an estimate of T-7.") as t:
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

STEPS = """query($id: ID!) { task(id: $id) { record { seq kind summary contentAccess payload } } }"""


def steps(who: str, bearer: str, first: int = 9) -> None:
    print(f"\n{who}:")
    for line in read(bearer, STEPS, id=t.id)["task"]["record"][:first]:
        seen = line["payload"] if line["contentAccess"] == "SHOWN" else f"(content {line['contentAccess']})"
        print(f"  {line['seq']}. {line['summary']}  {seen or ''}")


receipt = read(MIA, """query($id: ID!) {
  task(id: $id) { status spentMicros modelCalls toolCalls about outcome }
  verifyTrace(task: $id) { intact lines brokenAt problem }
}""", id=t.id)
print("The receipt, as Mia reads it:", json.dumps(receipt["task"]))
steps("Mia, who asked, reads every step and its content", MIA)
steps("Noor, a Manager (supervisesAgents), reads the sentences but not the content (the first three)", NOOR, first=3)
steps("Ana, an Auditor (auditsAgents), reads everything, as Mia does (the first three steps)", ANA, first=3)
print("\nverifyTrace:", json.dumps(receipt["verifyTrace"]))
print(f"\nThe task's id: {t.id}")
print(f"Open it in the inspector as Mia: {URL}/inspect/{t.id}#token={MIA}")
print("To read it by hand, as in the README:")
print(f"export TASK={t.id}")
