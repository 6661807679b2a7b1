// How figures read to a person: dollars with the micros on hover, local times with UTC on hover.
import { h } from "preact";
import htm from "htm";

const html = htm.bind(h);
const count = new Intl.NumberFormat(undefined);

export function dollars(micros) {
  const value = Number(micros) / 1e6;
  const digits = value !== 0 && Math.abs(value) < 1 ? 4 : 2;
  return `$${value.toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

export function Money({ micros, testid }) {
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
  </span>`;
}
