// /inspect/{task}: the receipt, whether its record is intact, the tree under it, its steps, and its transcript.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { STEP_PAGE, beginWaterfall, costs, stepsOf, taskPage, verifyOf } from "./queries.js";
import { Budget, Status, Time, Words, duration, reads } from "./format.js";
import { Tree } from "./tree.js";
import { Steps } from "./steps.js";
import { Transcript } from "./transcript.js";
import { Timeline } from "./timeline.js";
import { Answering } from "./answer.js";
import { BudgetMeter, StopWork } from "./stop.js";
import { Waterfall } from "./waterfall.js";
import { LiveState, useTaskEvents } from "./live.js";

const html = htm.bind(h);
const NEW_STEPS_MS = 2000;
const CHECK_MS = 1000;
const ENDS = new Set(["AgentTaskFinished", "AgentTaskFailed", "AgentTaskStopped"]);

function Badge({ check, running, onGoTo }) {
  if (check.intact) {
    return html`<p><span class="badge intact" data-testid="verify-badge" role="status">✓ Record intact${running ? " so far" : ""}: ${check.lines === 1 ? "1 line" : `${check.lines} lines`} checked${check.erased ? `, ${check.erased} erased` : ""}</span></p>`;
  }
  const go = (event) => { event.preventDefault(); onGoTo(check.brokenAt); };
  return html`<p><a class="badge broken" data-testid="verify-badge" href=${`#line-${check.brokenAt}`} onClick=${go}>✗ Record broken at line ${check.brokenAt}: ${check.problem}</a></p>`;
}

const named = (p) => p.name || p.id;

// Whom the work was for: its own requester, else the nearest one above it (the one it was done for), marked so.
function Requester({ task }) {
  if (task.requester) return named(task.requester);
  if (!reads(task, "WORDS")) return html`<span class="none">not shown to your role</span>`;
  const above = [...task.lineage].reverse().find((t) => t.requester);
  if (!above) return html`<span class="none">not recorded</span>`;
  const from = html`<a href=${`/inspect/${above.id}`}>${above.agent} · ${above.skill}</a>`;
  return html`${named(above.requester)} <span class="none" data-testid="inherited">(inherited from ${from}, the task it is part of)</span>`;
}

function Facts({ task }) {
  return html`<dl class="facts">
    <dt>Status</dt><dd><${Status} status=${task.status} />${task.status === "RUNNING" && html` <${LiveState} />`}</dd>
    <dt>Started</dt><dd><${Time} iso=${task.startedAt} /></dd>
    <dt>Ended</dt><dd><${Time} iso=${task.endedAt} /></dd>
    <dt>Took</dt><dd>${duration(task.startedAt, task.endedAt)}</dd>
    <dt>Cost</dt><dd><${Budget} task=${task} /><${BudgetMeter} task=${task} /></dd>
    <dt>For</dt><dd data-testid="requester"><${Requester} task=${task} /></dd>
    <dt>Ran as</dt><dd>${task.actor ? named(task.actor) : "—"}</dd>
    <dt>Why it ran</dt><dd data-testid="trigger"><${Words} value=${task.trigger} task=${task} /></dd>
    <dt>Outcome</dt><dd data-testid="outcome"><${Words} value=${task.outcome} task=${task}
      missing=${task.status === "RUNNING" ? "still running" : "not recorded"} /></dd>
    ${task.session && html`<dt>Session</dt><dd><a href=${`/inspect/session/${encodeURIComponent(task.session)}`}
      data-testid="session-link">${task.session}</a></dd>`}
  </dl>`;
}

export function TaskPage({ id, viewer }) {
  const [task, setTask] = useState(undefined);
  const [check, setCheck] = useState(null);
  const [steps, setSteps] = useState(null);
  const [error, setError] = useState(null);
  const [goTo, setGoTo] = useState(null);
  const [whole, setWhole] = useState(false);
  const [stepsDone, setStepsDone] = useState(false);
  const [heard, setHeard] = useState(0);
  const list = useRef(null);
  const pending = useRef(null);
  const shown = useRef(null);
  const checking = useRef({ asked: 0, at: 0, timer: null });
  shown.current = task;
  const failed = (e) => setError(e.message);

  // The badge from the latest check asked (an earlier one answering late is dropped); while the work runs it is
  // checked again as lines arrive, at most once a second.
  const verify = (quiet = false) => {
    const now = checking.current;
    const asked = ++now.asked;
    now.at = Date.now();
    verifyOf(id).then((found) => { if (asked === now.asked) setCheck(found); }, (e) => quiet || failed(e));
  };
  const recheck = () => {
    const now = checking.current;
    if (now.timer) return;
    now.timer = setTimeout(() => { now.timer = null; verify(true); }, Math.max(0, now.at + CHECK_MS - Date.now()));
  };
  useEffect(() => () => clearTimeout(checking.current.timer), []);

  // The next page of steps, once at a time; `reach` reads pages until line `seq` (or the last line) is read. A
  // `quiet` read that fails is tried again at the next one (the server may be out of reach for a while).
  const page = (quiet = false) => {
    const now = list.current;
    if (now.done) return Promise.resolve();
    if (!now.busy) {
      const last = now.steps.length ? now.steps[now.steps.length - 1].seq : null;
      now.busy = stepsOf(id, now.whole, last).then((found) => {
        now.steps = [...now.steps, ...found];
        now.done = found.length < STEP_PAGE;
        now.busy = null;
        if (list.current === now) { setSteps(now.steps); setStepsDone(now.done); }
      }, (e) => {
        now.done = true;
        now.busy = null;
        if (!quiet) failed(e);
      });
    }
    return now.busy;
  };
  const reach = async (seq) => {
    const now = list.current;
    while (!now.done && !(now.steps.length && now.steps[now.steps.length - 1].seq >= seq)) await page();
    return now.steps;
  };

  useEffect(() => {
    beginWaterfall(id);
    taskPage(id).then(setTask, failed);
  }, [id]);
  useEffect(() => { if (task && task.childCount === 0) afterTree(); }, [task && task.id]);
  const afterTree = () => {
    costs([id]).then((found) => setTask((now) => ({ ...now, cost: found[id] })), failed);
    verify();
  };
  // While the task runs, the steps written since the last read are read every 2 s (a line tells no event), and the
  // badge checked again when there were any; when the subscription says it ended, its receipt, cost, badge and last
  // steps are read again, and so they are when it reconnects after events may have been missed.
  const more = () => {
    const now = list.current;
    if (!now || !now.done || now.busy) return;
    const before = now.steps.length;
    now.done = false;
    page(true).then(() => { if (now.steps.length > before) recheck(); });
  };
  const showEnd = (found) => {
    setTask(found);
    if (found) { afterTree(); more(); }
  };
  const ended = () => taskPage(id).then(showEnd, failed);
  const caughtUp = () => taskPage(id).then((found) => {
    if (found && found.status === "RUNNING") { more(); setHeard((n) => n + 1); } else showEnd(found);
  }, failed);
  useEffect(() => {
    if (!task || task.status !== "RUNNING") return undefined;
    const timer = setInterval(() => { if (document.visibilityState === "visible") more(); }, NEW_STEPS_MS);
    return () => clearInterval(timer);
  }, [task && task.status]);
  useTaskEvents((event) => {
    if (!event) {
      if (shown.current && shown.current.status === "RUNNING") caughtUp();
    } else if (event.task.id === id && ENDS.has(event.event)) ended();
  });
  useEffect(() => {
    list.current = { whole, steps: [], done: false, busy: null };
    setSteps(null);
    setStepsDone(false);
    const hash = /^#line-(\d+)$/.exec(location.hash);
    const seq = pending.current ?? (hash && Number(hash[1]));
    pending.current = null;
    page().then(() => seq && reach(seq).then(() => setGoTo({ seq })));
  }, [id, whole]);

  if (error) return html`<main><p class="problem" role="alert">${error}</p></main>`;
  if (task === undefined) return html`<main><p class="loading">Loading the task…</p></main>`;
  if (!task) {
    return html`<main><h1>No such task</h1>
      <p class="empty" data-testid="no-task">There is no task with this id that you may see.</p></main>`;
  }
  const onGoTo = (seq) => {
    history.replaceState(null, "", `#line-${seq}`);
    reach(seq).then((read) => {
      if (whole || read.some((s) => s.seq === seq)) setGoTo({ seq });
      else { pending.current = seq; setWhole(true); }
    });
  };
  const readTo = (seq) => steps && (stepsDone || (steps.length > 0 && steps[steps.length - 1].seq >= seq));
  const counted = !steps ? "" : stepsDone ? ` (${steps.length})`
    : whole ? ` (${steps.length} of ${task.chainLength} read)` : ` (${steps.length} read so far)`;
  return html`<main class="task">
    ${task.lineage.length > 0 && html`<nav class="lineage" aria-label="Part of">
      <ol>${task.lineage.map((t) => html`<li><a href=${`/inspect/${t.id}`}>${t.agent} · ${t.skill}</a></li>`)}</ol></nav>`}
    <h1>${task.agent} · ${task.skill}</h1>
    <p class="about"><${Words} value=${task.about} task=${task} /></p>
    ${check ? html`<${Badge} check=${check} running=${task.status === "RUNNING"} onGoTo=${onGoTo} />` : html`<p class="loading">Checking the record…</p>`}
    <${StopWork} task=${task} onAsked=${(stopAsked) => setTask((now) => ({ ...now, stopAsked }))} />
    <${Facts} task=${task} />
    <section aria-labelledby="answer-title">
      <h2 id="answer-title">Reviews and hold</h2>
      <${Answering} task=${task} viewer=${viewer} onChanged=${() => verify()} />
    </section>
    <section aria-labelledby="tree-title">
      <h2 id="tree-title">Sub-tasks</h2>
      ${task.childCount === 0
        ? html`<p class="empty" data-testid="no-sub-tasks">None: this task handed no work on.</p>`
        : html`<${Tree} task=${task} onShown=${afterTree} />`}
    </section>
    <section aria-labelledby="waterfall-title">
      <h2 id="waterfall-title">Where the time went</h2>
      <p><a href=${`/inspect/compare?a=${task.id}`} data-testid="compare-link">Compare with the run before it</a></p>
      <${Waterfall} key=${task.status} id=${task.id} running=${task.status === "RUNNING"} heard=${heard}
        onGrew=${recheck} />
    </section>
    <section aria-labelledby="steps-title">
      <h2 id="steps-title">${whole ? "Steps of the whole tree" : "Steps"}${counted}</h2>
      ${(whole || task.childCount > 0 || task.lineage.length > 0 || (stepsDone && task.chainLength > steps.length)) && html`<p>
        <button type="button" onClick=${() => setWhole(!whole)}>${whole ? "Show only this task's steps"
          : `Show the steps of the whole tree (${task.chainLength} lines)`}</button></p>`}
      ${steps === null ? html`<p class="loading">Loading the steps…</p>`
        : steps.length === 0 ? html`<p class="empty">No steps you may see.</p>`
        : html`<${Timeline} steps=${steps} onChoose=${onGoTo} />
          <${Steps} steps=${steps} done=${stepsDone} total=${whole ? task.chainLength : null} onMore=${page} reach=${reach}
            taskId=${task.id} brokenAt=${check && !check.intact ? check.brokenAt : null} goTo=${goTo} />`}
      ${whole && check && !check.intact && readTo(check.brokenAt) && !steps.some((s) => s.seq === check.brokenAt)
        && html`<p class="reason">Line ${check.brokenAt} is not among the steps you may see.</p>`}
    </section>
    <section aria-labelledby="transcript-title">
      <h2 id="transcript-title">Transcript</h2>
      <${Transcript} key=${task.status} id=${task.id} viewer=${viewer} />
    </section>
  </main>`;
}
