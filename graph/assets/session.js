// /inspect/session/{id}: one conversation's turns in order, each with its requester, outcome and all-in cost as the
// viewer may see them, and what the whole conversation cost, summed from the meter over the tasks they may read.
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";
import { sessionOf } from "./queries.js";
import { Money, Status, Time, Words, duration, reads } from "./format.js";

const html = htm.bind(h);
const count = new Intl.NumberFormat(undefined);

function Requester({ task }) {
  if (task.requester) return task.requester.name || task.requester.id;
  return html`<span class="none">${reads(task, "WORDS") ? "not recorded" : "not shown to your role"}</span>`;
}

function Turn({ task, n }) {
  return html`<tr data-testid="session-turn">
    <td>${n}</td>
    <td><${Time} iso=${task.startedAt} /></td>
    <td><a href=${`/inspect/${task.id}`}>${task.agent} · ${task.skill}</a><br /><${Words} value=${task.about} task=${task} /></td>
    <td data-testid="turn-requester"><${Requester} task=${task} /></td>
    <td><${Status} status=${task.status} /></td>
    <td data-testid="turn-outcome"><${Words} value=${task.outcome} task=${task}
      missing=${task.status === "RUNNING" ? "still running" : "not recorded"} /></td>
    <td><${Money} micros=${task.cost ? task.cost.allInMicros : null} testid="turn-cost" /></td>
  </tr>`;
}

export function SessionPage({ id }) {
  const [session, setSession] = useState(undefined);
  const [error, setError] = useState(null);
  useEffect(() => { sessionOf(id).then(setSession, (e) => setError(e.message)); }, [id]);
  if (error) return html`<main><p class="problem" role="alert">${error}</p></main>`;
  if (session === undefined) return html`<main><p class="loading">Loading the session…</p></main>`;
  if (session === null) {
    return html`<main><h1>Session ${id}</h1><p class="empty" data-testid="no-session">No task of this session is yours to see.</p></main>`;
  }
  return html`<main>
    <h1>Session ${session.id}</h1>
    <dl class="facts" data-testid="session-facts">
      <dt>Turns</dt><dd>${count.format(session.tasks.length)}${session.moreTurns ? " (the first 500)" : ""}, ${
        count.format(session.taskCount)} ${session.taskCount === 1 ? "task" : "tasks"} in all</dd>
      <dt>Started</dt><dd><${Time} iso=${session.startedAt} /></dd>
      <dt>Ended</dt><dd><${Time} iso=${session.endedAt} /></dd>
      <dt>Took</dt><dd>${duration(session.startedAt, session.endedAt)}</dd>
      <dt>Cost</dt><dd><${Money} micros=${session.totalCostMicros} testid="session-cost" /> all in</dd>
      <dt>Tokens</dt><dd data-testid="session-tokens">${count.format(session.inputTokens)} in, ${count.format(session.outputTokens)} out</dd>
      <dt>Model calls</dt><dd>${count.format(session.modelCalls)}</dd>
      <dt>Failed</dt><dd>${session.failedTasks === 0 ? "none" : `${count.format(session.failedTasks)} ${session.failedTasks === 1 ? "task" : "tasks"}`}</dd>
    </dl>
    <p class="reason">Summed from the meter over the tasks of this session you may see.</p>
    <table class="tasks">
      <caption>The turns, oldest first</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Started</th><th scope="col">Agent · skill, about</th>
        <th scope="col">Asked by</th><th scope="col">Status</th><th scope="col">Outcome</th><th scope="col">All-in cost</th></tr></thead>
      <tbody>${session.tasks.map((t, i) => html`<${Turn} key=${t.id} task=${t} n=${i + 1} />`)}</tbody>
    </table>
  </main>`;
}
