// /inspect/{task}: the receipt, whether its record is intact, the tree under it, its steps, and its transcript.
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";
import { costs, stepsOf, taskPage, verifyOf } from "./queries.js";
import { Budget, Status, Time, duration } from "./format.js";
import { Tree } from "./tree.js";
import { Steps } from "./steps.js";
import { Transcript } from "./transcript.js";
import { Timeline } from "./timeline.js";

const html = htm.bind(h);
const hidden = html`<span class="none">not shown to your role</span>`;

function Badge({ check, onGoTo }) {
  if (check.intact) {
    return html`<p><span class="badge intact" data-testid="verify-badge" role="status">✓ Record intact: ${check.lines} lines checked${check.erased ? `, ${check.erased} erased` : ""}</span></p>`;
  }
  const go = (event) => { event.preventDefault(); onGoTo(check.brokenAt); };
  return html`<p><a class="badge broken" data-testid="verify-badge" href=${`#line-${check.brokenAt}`} onClick=${go}>✗ Record broken at line ${check.brokenAt}: ${check.problem}</a></p>`;
}

function Facts({ task }) {
  const person = (p) => (p ? p.name || p.id : hidden);
  return html`<dl class="facts">
    <dt>Status</dt><dd><${Status} status=${task.status} /></dd>
    <dt>Started</dt><dd><${Time} iso=${task.startedAt} /></dd>
    <dt>Ended</dt><dd><${Time} iso=${task.endedAt} /></dd>
    <dt>Took</dt><dd>${duration(task.startedAt, task.endedAt)}</dd>
    <dt>Cost</dt><dd><${Budget} task=${task} /></dd>
    <dt>For</dt><dd>${person(task.requester)}</dd>
    <dt>Ran as</dt><dd>${task.actor ? task.actor.name || task.actor.id : "—"}</dd>
    <dt>Why it ran</dt><dd>${task.trigger ?? hidden}</dd>
    <dt>Outcome</dt><dd>${task.outcome ?? (task.status === "RUNNING" ? "still running" : hidden)}</dd>
    ${task.session && html`<dt>Session</dt><dd>${task.session}</dd>`}
  </dl>`;
}

export function TaskPage({ id }) {
  const [task, setTask] = useState(undefined);
  const [check, setCheck] = useState(null);
  const [steps, setSteps] = useState(null);
  const [error, setError] = useState(null);
  const [goTo, setGoTo] = useState(null);
  const [whole, setWhole] = useState(false);
  const failed = (e) => setError(e.message);

  useEffect(() => { taskPage(id).then(setTask, failed); }, [id]);
  const afterTree = () => {
    costs([id]).then((found) => setTask((now) => ({ ...now, cost: found[id] })), failed);
    verifyOf(id).then(setCheck, failed);
  };
  useEffect(() => {
    setSteps(null);
    stepsOf(id, whole).then(setSteps, failed);
  }, [id, whole]);
  useEffect(() => {
    const seq = /^#line-(\d+)$/.exec(location.hash);
    if (seq && steps) setGoTo({ seq: Number(seq[1]) });
  }, [steps]);

  if (error) return html`<main><p class="problem" role="alert">${error}</p></main>`;
  if (task === undefined) return html`<main><p class="loading">Loading the task…</p></main>`;
  if (!task) {
    return html`<main><h1>No such task</h1>
      <p class="empty" data-testid="no-task">There is no task with this id that you may see.</p></main>`;
  }
  const onGoTo = (seq) => {
    history.replaceState(null, "", `#line-${seq}`);
    if (!whole && steps && !steps.some((s) => s.seq === seq)) setWhole(true);
    setGoTo({ seq });
  };
  return html`<main class="task">
    ${task.lineage.length > 0 && html`<nav class="lineage" aria-label="Part of">
      <ol>${task.lineage.map((t) => html`<li><a href=${`/inspect/${t.id}`}>${t.agent} · ${t.skill}</a></li>`)}</ol></nav>`}
    <h1>${task.agent} · ${task.skill}</h1>
    <p class="about">${task.about ?? hidden}</p>
    ${check ? html`<${Badge} check=${check} onGoTo=${onGoTo} />` : html`<p class="loading">Checking the record…</p>`}
    <${Facts} task=${task} />
    <section aria-labelledby="tree-title">
      <h2 id="tree-title">Sub-tasks</h2>
      <${Tree} task=${task} onShown=${afterTree} />
    </section>
    <section aria-labelledby="steps-title">
      <h2 id="steps-title">${whole ? "Steps of the whole tree" : "Steps"}${steps ? ` (${steps.length})` : ""}</h2>
      ${(whole || task.chainLength > (steps ? steps.length : 0)) && html`<p>
        <button type="button" onClick=${() => setWhole(!whole)}>${whole ? "Show only this task's steps"
          : `Show the steps of the whole tree (${task.chainLength} lines)`}</button></p>`}
      ${steps === null ? html`<p class="loading">Loading the steps…</p>`
        : steps.length === 0 ? html`<p class="empty">No steps you may see.</p>`
        : html`<${Timeline} steps=${steps} onChoose=${onGoTo} />
          <${Steps} steps=${steps} taskId=${task.id} brokenAt=${check && !check.intact ? check.brokenAt : null} goTo=${goTo} />`}
      ${whole && check && !check.intact && steps && !steps.some((s) => s.seq === check.brokenAt)
        && html`<p class="reason">Line ${check.brokenAt} is not among the steps you may see.</p>`}
    </section>
    <section aria-labelledby="transcript-title">
      <h2 id="transcript-title">Transcript</h2>
      <${Transcript} id=${task.id} />
    </section>
  </main>`;
}
