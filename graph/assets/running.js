// "Running now", above the list: the running tasks the viewer may see (written by the kit or opened by a start
// marker) with what each has spent so far, and the traces whose spans wait to be placed, provisional and not yet in
// the record. A task's start and end come through the subscription and are shown at once (an ended task stays,
// with its end, for as long as the page is open); the figures of running work and the waiting traces are read
// again every 2 s, since a line written or a span waiting tells no event.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { runningTasks, waitingTraces } from "./queries.js";
import { LiveState, useTaskEvents, useTick } from "./live.js";
import { Money, Status, Time, Words, duration } from "./format.js";

const html = htm.bind(h);
const count = new Intl.NumberFormat(undefined);
const AGAIN_MS = 2000;
const SETTLE_MS = 150;
const KEPT_ENDED = 10;
const ENDS = new Set(["AgentTaskFinished", "AgentTaskFailed", "AgentTaskStopped"]);

const plural = (n, one, many) => `${count.format(n)} ${n === 1 ? one : many}`;

function Spent({ task }) {
  const cost = task.cost;
  return html`<span class="spent" data-testid="running-spent">
    ${cost ? html`<${Money} micros=${cost.allInMicros} /> all in` : html`<span class="none">cost not shown to your role</span>`}
    <span>${plural(task.modelCalls, "model call", "model calls")}, ${plural(task.toolCalls, "tool call", "tool calls")}</span>
    ${cost && html`<span>${count.format(cost.allInInputTokens)} tokens in, ${count.format(cost.allInOutputTokens)} out</span>`}
  </span>`;
}

function TaskRow({ task, ended }) {
  return html`<tr data-testid="running-task" class=${ended ? "ended" : ""}>
    <td><${Time} iso=${task.startedAt} /></td>
    <td><a href=${`/inspect/${task.id}`}>${task.agent} · ${task.skill}</a>
      ${task.parent && html`<br /><span class="none">part of <a href=${`/inspect/${task.parent.id}`}>${task.parent.agent} · ${task.parent.skill}</a></span>`}</td>
    <td><${Words} value=${task.about} task=${task} /></td>
    <td><${Status} status=${task.status} /></td>
    <td data-testid="running-took">${ended ? html`took ${duration(task.startedAt, task.endedAt)}, ended <${Time} iso=${task.endedAt} />`
      : duration(task.startedAt, null)}</td>
    <td><${Spent} task=${task} /></td>
  </tr>`;
}

function who(trace) {
  const agents = [...new Set(trace.spans.filter((s) => s.agent).map((s) => s.agent))];
  return agents.length ? agents.join(", ") : html`<span class="none">agent not yet known</span>`;
}

function TraceRow({ trace }) {
  return html`<tr data-testid="running-trace">
    <td><${Time} iso=${trace.firstSeenAt} /></td>
    <td>${who(trace)}<br /><span class="none" title=${trace.traceId}>trace ${trace.traceId.slice(0, 12)}…</span></td>
    <td><span class="provisional">not yet in the record</span></td>
    <td>last span received <${Time} iso=${trace.lastSeenAt} /></td>
    <td data-testid="trace-spent">${`${plural(trace.spanCount, "span", "spans")} waiting: ${
      plural(trace.modelCalls, "model call", "model calls")}, ${plural(trace.toolCalls, "tool call", "tool calls")}, ${
      count.format(trace.inputTokens)} tokens in, ${count.format(trace.outputTokens)} out`}</td>
  </tr>`;
}

export function RunningNow({ onEvent = () => {} }) {
  const [running, setRunning] = useState(null);
  const [ended, setEnded] = useState([]);
  const [traces, setTraces] = useState(null);
  const [problem, setProblem] = useState(null);
  const [asked, setAsked] = useState(0);
  useTick();

  useEffect(() => {
    const timer = setTimeout(() => runningTasks().then((found) => { setRunning(found); setProblem(null); },
      (e) => setProblem(e.message)), asked ? SETTLE_MS : 0);
    return () => clearTimeout(timer);
  }, [asked]);
  const shown = useRef(0);
  shown.current = running ? running.tasks.length : 0;
  useEffect(() => {
    let stopped = false;
    const read = () => waitingTraces().then((found) => { if (!stopped) setTraces(found); }, (e) => setProblem(e.message));
    read();
    const timer = setInterval(() => {
      if (document.visibilityState !== "visible") return;
      read();
      if (shown.current) setAsked((n) => n + 1);
    }, AGAIN_MS);
    return () => { stopped = true; clearInterval(timer); };
  }, []);
  useTaskEvents((heard) => {
    if (heard && ENDS.has(heard.event)) {
      setEnded((before) => [heard.task, ...before.filter((t) => t.id !== heard.task.id)].slice(0, KEPT_ENDED));
    }
    setAsked((n) => n + 1);
    onEvent(heard);
  });

  const endedIds = new Set(ended.map((t) => t.id));
  const tasks = running ? running.tasks.filter((t) => !endedIds.has(t.id)) : [];
  const waiting = traces ? traces.traces : [];
  const quiet = tasks.length === 0 && ended.length === 0;
  const counted = running ? running.total - (running.tasks.length - tasks.length) : 0;
  return html`<section class="running" aria-labelledby="running-now" data-testid="running-now">
    <h2 id="running-now">Running now <${LiveState} /></h2>
    ${problem && html`<p class="problem" role="alert">${problem}</p>`}
    ${running === null ? html`<p class="loading">Reading what is running…</p>`
      : quiet ? !problem && html`<p class="empty" data-testid="nothing-running">${waiting.length
        ? "No task you may see is running." : "Nothing you may see is running."}</p>`
        : html`<table class="tasks">
            <caption>${tasks.length === 0 ? "Nothing is running now" : `${plural(counted, "task", "tasks")} running`}${
              counted > tasks.length ? ` (the newest ${count.format(tasks.length)} shown)` : ""}${
              ended.length ? `; ${plural(ended.length, "task", "tasks")} ended while you watched` : ""}</caption>
            <thead><tr><th scope="col">Started</th><th scope="col">Agent · skill</th><th scope="col">About</th>
              <th scope="col">Status</th><th scope="col">Time</th><th scope="col">Spent</th></tr></thead>
            <tbody aria-live="polite">
              ${tasks.map((t) => html`<${TaskRow} key=${t.id} task=${t} />`)}
              ${ended.map((t) => html`<${TaskRow} key=${t.id} task=${t} ended=${true} />`)}
            </tbody>
          </table>`}
    ${waiting.length > 0 && html`<table class="tasks" data-testid="waiting-traces">
      <caption>${`${plural(traces.total, "trace", "traces")} sent over OpenTelemetry with spans waiting for their agent: `
        }shown as sent, not yet part of the record (no step, no hash, no cost until they are placed)</caption>
      <thead><tr><th scope="col">First seen</th><th scope="col">Agent</th><th scope="col">In the record</th>
        <th scope="col">Latest</th><th scope="col">Waiting so far</th></tr></thead>
      <tbody>${waiting.map((t) => html`<${TraceRow} key=${t.traceId} trace=${t} />`)}</tbody>
    </table>`}
  </section>`;
}
