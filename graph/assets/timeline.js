// The steps drawn to scale in time: one mark per step (or per slice of time, for long records), coloured by kind.
// Clicking a mark chooses the nearest step in the list.
import { h } from "preact";
import htm from "htm";
import { duration, utc } from "./format.js";

const html = htm.bind(h);
const WIDTH = 1000;
const SLICES = 500;
const GROUPS = [
  ["model", "model calls", (s) => s.kind === "MODEL_CALL"],
  ["tool", "tool calls and results", (s) => s.kind === "TOOL_CALL" || s.kind === "TOOL_RESULT"],
  ["fail", "failures", (s) => s.isError || s.kind === "ERASED"],
  ["other", "starts, ends and help", () => true],
];
const group = (step) => GROUPS.find(([, , test]) => test(step))[0];

export function Timeline({ steps, onChoose }) {
  if (steps.length < 2) return null;
  const times = steps.map((s) => Date.parse(s.at));
  const start = times.reduce((a, b) => Math.min(a, b));
  const span = Math.max(1, times.reduce((a, b) => Math.max(a, b)) - start);
  const slices = new Map();
  steps.forEach((step, i) => {
    const slice = Math.min(SLICES - 1, Math.floor(((times[i] - start) / span) * SLICES));
    if (!slices.has(slice)) slices.set(slice, { index: i, kind: group(step) });
  });
  const choose = (event) => {
    const box = event.currentTarget.getBoundingClientRect();
    const at = start + ((event.clientX - box.left) / box.width) * span;
    let best = 0;
    times.forEach((t, i) => { if (Math.abs(t - at) < Math.abs(times[best] - at)) best = i; });
    onChoose(steps[best].seq);
  };
  const first = new Date(start).toISOString();
  const last = new Date(start + span).toISOString();
  return html`<figure class="timeline">
    <svg viewBox=${`0 0 ${WIDTH} 28`} preserveAspectRatio="none" role="img" onClick=${choose}
        aria-label=${`${steps.length} steps from ${utc(first)} to ${utc(last)}`}>
      <line x1="0" y1="27" x2=${WIDTH} y2="27" class="axis" />
      ${[...slices].map(([slice, { kind }]) => html`<rect x=${(slice / SLICES) * WIDTH} y="2" width=${WIDTH / SLICES} height="24" class=${kind} />`)}
    </svg>
    <figcaption>Steps in time, over ${duration(first, last)}:
      ${GROUPS.map(([kind, words]) => html` <span class=${`key ${kind}`}>${words}</span>`)}</figcaption>
  </figure>`;
}
