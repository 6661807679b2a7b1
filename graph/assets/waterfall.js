// The tree as a waterfall: each task, model call and tool call a bar from its start to its end against time, nested
// under its task, the critical path marked (from the root, the part of each task that ended last, down to a call),
// tokens and cost on hover. A model call's start is its line's time less its duration; a tool call runs from its
// call's line to its result's. Only the rows in view are in the page; dragging across the bars, or choosing a row,
// zooms to that range of time. What the viewer may not read is null in the record and is not drawn. While the work
// runs, the lines written since the last read are read every 2 s and their bars added (the tree's tasks read again
// when a task started or ended).
import { h } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import htm from "htm";
import { waterfallLines, waterfallOf, waterfallTasks } from "./queries.js";
import { dollars } from "./format.js";

const html = htm.bind(h);
const ROW = 24;
const SPARE = 8;
const GROW_MS = 2000;
const TASK_LINES = new Set(["STARTED", "ENDED"]);
const count = new Intl.NumberFormat(undefined);

function span(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 90e3) return `${(ms / 1000).toFixed(1)} s`;
  return ms < 5400e3 ? `${Math.round(ms / 60e3)} min` : `${(ms / 3600e3).toFixed(1)} h`;
}

// The rows in tree order: each task, then its own calls in the order of its lines, then the tasks under it.
export function barsOf(root, tasks, lines, now = Date.now()) {
  const byTask = new Map([root, ...tasks].map((t) => [t.id, {
    kind: "task", id: t.id, label: `${t.agent} · ${t.skill}`, depth: t.depth, start: Date.parse(t.startedAt),
    end: t.endedAt ? Date.parse(t.endedAt) : now, running: !t.endedAt, failed: t.status === "FAILED", items: [],
  }]));
  const open = new Map();
  for (const line of lines) {
    const task = line.task && byTask.get(line.task.id);
    if (!task) continue;
    const at = Date.parse(line.at);
    if (line.kind === "MODEL_CALL") {
      task.items.push({
        kind: "model", id: `l${line.seq}`, label: line.model ? `Model call · ${line.model}` : "Model call", depth: task.depth + 1,
        start: Math.max(task.start, at - (line.durationMs || 0)), end: at, failed: !!line.isError, line,
      });
    } else if (line.kind === "TOOL_CALL") {
      const bar = { kind: "tool", id: `l${line.seq}`, label: line.tool ? `Tool · ${line.tool}` : "Tool call", depth: task.depth + 1,
        start: at, end: at, open: true, line };
      task.items.push(bar);
      open.set(`${task.id}/${line.toolCallId || line.tool}`, bar);
    } else if (line.kind === "TOOL_RESULT") {
      const key = `${task.id}/${line.toolCallId || line.tool}`;
      const bar = open.get(key);
      if (bar) {
        bar.end = at;
        bar.open = false;
        bar.failed = !!line.isError;
        bar.result = line;
        open.delete(key);
      }
    }
  }
  for (const bar of open.values()) bar.end = Math.max(bar.end, byTask.get(bar.line.task.id).end);
  for (const t of tasks) {
    const parent = t.parent && byTask.get(t.parent.id);
    if (parent) parent.items.push(byTask.get(t.id));
  }
  const rows = [];
  const walk = (bar) => {
    rows.push(bar);
    for (const item of bar.items) {
      if (item.kind === "task") walk(item);
      else rows.push(item);
    }
  };
  walk(byTask.get(root.id));
  const critical = new Set();
  for (let bar = byTask.get(root.id); bar;) {
    critical.add(bar.id);
    const last = bar.items.reduce((a, b) => (a === null || b.end > a.end ? b : a), null);
    if (last && last.kind !== "task") critical.add(last.id);
    bar = last && last.kind === "task" ? last : null;
  }
  return { rows, critical, start: byTask.get(root.id).start, end: Math.max(...rows.map((r) => r.end)) };
}

function hover(bar) {
  const line = bar.line;
  const took = bar.kind === "model" && line.durationMs !== null && line.durationMs !== undefined ? line.durationMs : bar.end - bar.start;
  const words = [bar.label, span(took)];
  if (line && line.inputTokens !== null && line.inputTokens !== undefined) {
    words.push(`${count.format(line.inputTokens)} tokens in, ${count.format(line.outputTokens ?? 0)} out`);
  }
  if (line && line.costMicros !== null && line.costMicros !== undefined) words.push(dollars(line.costMicros));
  if (bar.running) words.push("still running");
  if (bar.open) words.push("no result recorded");
  if (bar.failed) words.push("failed");
  return words.join(" · ");
}

function Axis({ from, to, origin }) {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return html`<div class="wf-axis" aria-hidden="true">${ticks.map((f) => html`<span style=${{ left: `${f * 100}%` }}>${
    `+${span(from + f * (to - from) - origin)}`}</span>`)}</div>`;
}

// `running`: the lines written since are read every 2 s, and at once whenever `heard` changes; `onGrew` is called
// when any were added.
export function Waterfall({ id, running = false, heard = 0, onGrew = () => {} }) {
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  const [zoom, setZoom] = useState(null);
  const [top, setTop] = useState(0);
  const [drag, setDrag] = useState(null);
  const box = useRef(null);
  const held = useRef({ found: null, busy: false });
  held.current.found = found;
  useEffect(() => { waterfallOf(id, setFound).then((all) => all && setFound(all), (e) => setError(e.message)); }, [id]);
  const grow = async () => {
    const now = held.current;
    if (!now.found || now.found.reading || now.found.more || now.busy) return;
    now.busy = true;
    try {
      const lines = now.found.lines;
      const read = await waterfallLines(id, lines.length ? lines[lines.length - 1].seq : null);
      if (!read.lines.length) return;
      const tree = read.lines.some((l) => TASK_LINES.has(l.kind)) ? await waterfallTasks(id) : null;
      setFound((before) => ({ ...before, ...(tree || {}), lines: [...before.lines, ...read.lines], more: read.full }));
      onGrew();
    } catch {
      // read again at the next turn: the server may be out of reach for a while
    } finally {
      now.busy = false;
    }
  };
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => { if (document.visibilityState === "visible") grow(); }, GROW_MS);
    return () => clearInterval(timer);
  }, [id, running]);
  useEffect(() => { if (heard) grow(); }, [heard]);
  const drawn = useMemo(() => found && barsOf(found.task, found.tasks, found.lines), [found]);
  if (error) return html`<p class="problem" role="alert">${error}</p>`;
  if (!drawn) return html`<p class="loading">Reading the tree's times…</p>`;

  const [from, to] = zoom || [drawn.start, Math.max(drawn.end, drawn.start + 1)];
  const x = (t) => ((t - from) / (to - from)) * 100;
  const height = 16 * ROW;
  const first = Math.max(0, Math.floor(top / ROW) - SPARE);
  const last = Math.min(drawn.rows.length, Math.ceil((top + height) / ROW) + SPARE);
  const visible = drawn.rows.slice(first, last);
  const at = (event) => {
    const area = event.currentTarget.getBoundingClientRect();
    const left = area.left + area.width * 0.3;
    return from + ((event.clientX - left) / (area.width * 0.7)) * (to - from);
  };
  const onUp = (event) => {
    if (!drag) return;
    const end = at(event);
    setDrag(null);
    if (Math.abs(end - drag) > (to - from) / 200) setZoom([Math.min(drag, end), Math.max(drag, end)]);
  };
  return html`<figure class="waterfall" data-testid="waterfall">
    <p class="wf-tools">
      ${zoom ? html`<button type="button" onClick=${() => setZoom(null)}>Show the whole run</button>
        <span data-testid="zoomed">Showing ${span(from - drawn.start)} to ${span(to - drawn.start)} after the start.</span>`
        : html`<span>${drawn.rows.length === 1 ? "1 bar" : `${count.format(drawn.rows.length)} bars`} over ${span(drawn.end - drawn.start)}. Drag across the bars, or
          choose a row, to zoom to that range.</span>`}
      ${found.reading ? html` <span class="loading">Reading more lines (${count.format(found.lines.length)} so far)…</span>`
        : found.more && html` <span class="reason">The first ${count.format(found.lines.length)} lines are drawn.</span>`}
      <span class="key critical">critical path</span>
    </p>
    <${Axis} from=${from} to=${to} origin=${drawn.start} />
    <div class="wf-box" ref=${box} style=${{ height: `${Math.min(height, drawn.rows.length * ROW) + 2}px` }}
        onScroll=${(e) => setTop(e.currentTarget.scrollTop)}
        onMouseDown=${(e) => setDrag(at(e))} onMouseUp=${onUp} onMouseLeave=${() => setDrag(null)}>
      <ol class="wf-rows" style=${{ height: `${drawn.rows.length * ROW}px` }}>
        ${visible.map((bar, n) => {
          const i = first + n;
          const left = Math.max(0, x(bar.start));
          const right = Math.min(100, x(bar.end));
          const critical = drawn.critical.has(bar.id);
          return html`<li key=${bar.id} class=${`wf-row wf-${bar.kind}${critical ? " critical" : ""}${bar.failed ? " failed" : ""}`}
              style=${{ top: `${i * ROW}px` }} data-testid="bar" data-kind=${bar.kind} data-critical=${critical ? "yes" : "no"}
              title=${hover(bar)}>
            <button type="button" class="wf-label" style=${{ paddingLeft: `${0.3 + bar.depth * 0.9}rem` }}
              onMouseDown=${(e) => e.stopPropagation()}
              onClick=${() => setZoom([bar.start, Math.max(bar.end, bar.start + 1)])}>${bar.label}</button>
            <span class="wf-track">${right >= 0 && left <= 100 && html`<span class="wf-bar"
              style=${{ left: `${left}%`, width: `max(2px, ${Math.max(0, right - left)}%)` }}></span>`}</span>
          </li>`;
        })}
      </ol>
    </div>
  </figure>`;
}
