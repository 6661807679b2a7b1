// How figures read to a person: dollars to the last micro that is not zero (never rounded), with the micros on hover;
// local times with UTC on hover.
import { h } from "preact";
import htm from "htm";

const html = htm.bind(h);
const count = new Intl.NumberFormat(undefined);

const wholeDollars = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

// $0.00002, $0.00021, $0.0006, $1.50, $1,234.567891: at least two decimals, and every micro that is not zero.
export function dollars(micros) {
  const digits = String(Math.abs(Math.trunc(Number(micros)))).padStart(7, "0");
  const fraction = digits.slice(-6).replace(/0+$/, "").padEnd(2, "0");
  return `${Number(micros) < 0 ? "-" : ""}$${wholeDollars.format(Number(digits.slice(0, -6)))}.${fraction}`;
}

const UNPRICED = "No price was set for this model when the call was recorded, and none was sent with it; "
  + "totals count it as $0.00.";

export function Money({ micros, testid, unpriced }) {
  if (unpriced) return html`<span class="unpriced" title=${UNPRICED} data-testid=${testid}>unpriced</span>`;
  if (micros === null || micros === undefined) return html`<span class="none">—</span>`;
  return html`<data class="money" value=${micros} title=${`${count.format(micros)} micros`} data-testid=${testid}>${dollars(micros)}</data>`;
}

export function utc(iso) {
  return `${iso.replace("T", " ").replace(/\.\d+/, "").replace(/(Z|\+00:00)$/, "")} UTC`;
}

export function Time({ iso }) {
  if (!iso) return html`<span class="none">—</span>`;
  const local = new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
  return html`<time datetime=${iso} title=${utc(iso)}>${local}</time>`;
}

export function duration(startedAt, endedAt) {
  if (!startedAt) return "";
  const ms = (endedAt ? new Date(endedAt) : new Date()) - new Date(startedAt);
  const seconds = ms / 1000;
  const text = seconds < 1 ? `${Math.round(ms)} ms`
    : seconds < 90 ? `${seconds.toFixed(1)} s`
    : seconds < 5400 ? `${Math.round(seconds / 60)} min`
    : `${(seconds / 3600).toFixed(1)} h`;
  return endedAt ? text : `running for ${text}`;
}

export function Status({ status }) {
  const words = { RUNNING: "running", DONE: "done", FAILED: "failed", STOPPED: "stopped" };
  return html`<span class=${`status status-${(status || "").toLowerCase()}`}>${words[status] || "unknown"}</span>`;
}

export function Budget({ task }) {
  const { cost, limitMicros } = task;
  if (!cost) return html`<span class="budget cost-pending">summing the cost…</span>`;
  const over = limitMicros !== null && cost.allInMicros > limitMicros;
  return html`<span class="budget">
    <span>own <${Money} micros=${cost.ownMicros} /></span>
    <span>all-in <${Money} micros=${cost.allInMicros} testid="cost-all-in" /></span>
    ${limitMicros !== null
      ? html`<span class=${over ? "over" : ""}>of <${Money} micros=${limitMicros} /> budget${over ? " — over budget" : ""}</span>`
      : html`<span class="none">no budget</span>`}
    ${task.unpricedCalls > 0 && html`<span class="unpriced" data-testid="unpriced-calls" title=${UNPRICED}>${
      task.unpricedCalls === 1 ? "1 call" : `${count.format(task.unpricedCalls)} calls`} of its own unpriced</span>`}
  </span>`;
}

export const reads = (task, group) => (task.readableGroups || []).includes(group);

// A field of the words group: its value, or why there is none (never recorded, or not for this viewer).
export function Words({ value, task, missing = "not recorded" }) {
  if (value !== null && value !== undefined) return value;
  return html`<span class="none">${reads(task, "WORDS") ? missing : "not shown to your role"}</span>`;
}
