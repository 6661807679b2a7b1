// /inspect/usage: what the work the viewer may see cost over the last day, week or month, by agent and by model:
// spend, tokens, model calls and failed tasks, a line per agent (or model), drawn with uPlot. One usage read per
// grouping feeds its four charts; a table under them gives the same totals in words.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import uPlot from "uplot";
import { usageOf } from "./queries.js";
import { Money, dollars } from "./format.js";

const html = htm.bind(h);
const count = new Intl.NumberFormat(undefined);
const RANGES = [
  ["24h", "Last 24 hours", 24 * 3600e3, "HOUR"],
  ["7d", "Last 7 days", 7 * 24 * 3600e3, "HOUR"],
  ["30d", "Last 30 days", 30 * 24 * 3600e3, "DAY"],
];
const STEP = { HOUR: 3600e3, DAY: 24 * 3600e3 };
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const COLOURS = ["#0b57a4", "#b34700", "#0b6b2f", "#7a1fa2", "#9a0f19", "#00707a", "#5c4200", "#4a4a4a"];
const METRICS = [
  ["spend", "Spend", (p) => p.costMicros, (v) => dollars(Math.round(v))],
  ["tokens", "Tokens (in and out)", (p) => p.inputTokens + p.outputTokens, (v) => count.format(v)],
  ["calls", "Model calls", (p) => p.calls, (v) => count.format(v)],
  ["failures", "Failed tasks", (p) => p.failures ?? 0, (v) => count.format(v)],
];

// The buckets from `from` to `to`, and for each key its value in each (0 where it used nothing).
function series(points, from, to, bucket, value) {
  const step = STEP[bucket];
  const start = bucket === "DAY" ? Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate())
    : Math.floor(from.getTime() / step) * step;
  const xs = [];
  for (let t = start; t < to.getTime(); t += step) xs.push(t / 1000);
  const at = new Map(xs.map((x, i) => [x, i]));
  const lines = new Map();
  for (const p of points) {
    const key = p.key ?? "not recorded";
    if (!lines.has(key)) lines.set(key, xs.map(() => 0));
    const i = at.get(Date.parse(p.at) / 1000);
    if (i !== undefined) lines.get(key)[i] += value(p);
  }
  return { xs, lines: [...lines] };
}

function Chart({ title, xs, lines, format, whole, testid }) {
  const box = useRef(null);
  useEffect(() => {
    const width = Math.max(320, box.current.clientWidth);
    const plot = new uPlot({
      width, height: 220, title,
      scales: { x: { time: true } },
      series: [{}, ...lines.map(([key], i) => ({
        label: key, stroke: COLOURS[i % COLOURS.length], width: 2, value: (u, v) => (v === null ? "—" : format(v)),
      }))],
      axes: [{}, { values: (u, ticks) => ticks.map(format), size: 80, ...(whole ? { incrs: WHOLE } : {}) }],
    }, [xs, ...lines.map(([, values]) => values)], box.current);
    return () => plot.destroy();
  }, [xs, lines]);
  return html`<figure class="chart" data-testid=${testid}><div ref=${box}></div></figure>`;
}

function totals(points) {
  const by = new Map();
  for (const p of points) {
    const key = p.key ?? "not recorded";
    const t = by.get(key) || { key, costMicros: 0, tokensIn: 0, tokensOut: 0, calls: 0, failures: p.failures === null ? null : 0 };
    t.costMicros += p.costMicros;
    t.tokensIn += p.inputTokens;
    t.tokensOut += p.outputTokens;
    t.calls += p.calls;
    if (t.failures !== null) t.failures += p.failures;
    by.set(key, t);
  }
  return [...by.values()].sort((a, b) => b.costMicros - a.costMicros);
}

function Group({ name, words, points, from, to, bucket }) {
  const rows = totals(points);
  return html`<section aria-labelledby=${`${name}-title`} data-testid=${`usage-${name}`}>
    <h2 id=${`${name}-title`}>By ${words}</h2>
    ${points.length === 0 ? html`<p class="empty">No model calls you may see in this time.</p>` : html`
      <div class="charts">
        ${METRICS.filter(([metric]) => metric !== "failures" || name !== "model").map(([metric, title, value, format]) => {
          const { xs, lines } = series(points, from, to, bucket, value);
          return html`<${Chart} key=${`${metric}-${from.getTime()}`} title=${title} xs=${xs} lines=${lines} format=${format}
            whole=${metric !== "spend"} testid=${`chart-${name}-${metric}`} />`;
        })}
      </div>
      <table class="tasks" data-testid=${`totals-${name}`}>
        <caption>Totals over the time shown, most spent first</caption>
        <thead><tr><th scope="col">${words[0].toUpperCase() + words.slice(1)}</th><th scope="col">Spend</th>
          <th scope="col">Tokens in</th><th scope="col">Tokens out</th><th scope="col">Model calls</th>
          ${name !== "model" && html`<th scope="col">Failed tasks</th>`}</tr></thead>
        <tbody>${rows.map((r) => html`<tr data-testid="usage-row">
          <th scope="row">${r.key}</th><td><${Money} micros=${r.costMicros} /></td><td>${count.format(r.tokensIn)}</td>
          <td>${count.format(r.tokensOut)}</td><td>${count.format(r.calls)}</td>
          ${name !== "model" && html`<td>${count.format(r.failures)}</td>`}</tr>`)}</tbody>
      </table>`}
  </section>`;
}

export function UsagePage() {
  const params = new URLSearchParams(location.search);
  const range = RANGES.find(([key]) => key === params.get("range")) || RANGES[1];
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const to = new Date();
    const from = new Date(to.getTime() - range[2]);
    Promise.all([usageOf(from, to, range[3], "AGENT"), usageOf(from, to, range[3], "MODEL")])
      .then(([agents, models]) => setFound({ from, to, agents, models }), (e) => setError(e.message));
  }, []);
  return html`<main class="usage">
    <h1>Usage</h1>
    <nav class="ranges" aria-label="Time shown">
      ${RANGES.map(([key, words]) => (key === range[0]
        ? html`<strong aria-current="page">${words}</strong>` : html`<a href=${`/inspect/usage?range=${key}`}>${words}</a>`))}
    </nav>
    <p class="reason">Summed from the meter over the work you may see, ${range[3] === "DAY" ? "a point a day" : "a point an hour"} (UTC); a failed task counts when it ended.</p>
    ${error && html`<p class="problem" role="alert">${error}</p>`}
    ${!found && !error && html`<p class="loading">Summing the meter…</p>`}
    ${found && html`
      <${Group} name="agent" words="agent" points=${found.agents} from=${found.from} to=${found.to} bucket=${range[3]} />
      <${Group} name="model" words="model" points=${found.models} from=${found.from} to=${found.to} bucket=${range[3]} />`}
  </main>`;
}
