// /inspect/compare?a=TASK&b=TASK: two runs side by side, their steps aligned (the longest run of steps of the same
// kind in both), each pair said to be the same or to differ in its model or tool, a step with no partner marked, with the token and cost deltas and both
// verify badges. Without b, the run of the same agent and skill that started before a.
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";
import { compareSide, runBefore } from "./queries.js";
import { Money, Status, Time, duration } from "./format.js";

const html = htm.bind(h);
const count = new Intl.NumberFormat(undefined);
const KINDS = {
  STARTED: "Started", MODEL_CALL: "Model call", TOOL_CALL: "Tool call", TOOL_RESULT: "Tool result",
  ASKED_FOR_HELP: "Asked for help", SENT_BACK: "Answer sent back", ENDED: "Ended", ERASED: "Erasure",
};

const sign = (line) => `${line.kind}/${line.model || ""}/${line.tool || ""}`;
const tokens = (line) => (line.inputTokens ?? 0) + (line.outputTokens ?? 0);

// The steps of a and b paired along their longest common run of kinds; a step with no partner stands alone.
export function align(a, b) {
  const n = a.length;
  const m = b.length;
  const best = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      best[i][j] = a[i].kind === b[j].kind ? best[i + 1][j + 1] + 1 : Math.max(best[i + 1][j], best[i][j + 1]);
    }
  }
  const pairs = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i].kind === b[j].kind && best[i][j] === best[i + 1][j + 1] + 1) pairs.push([a[i++], b[j++]]);
    else if (j >= m || (i < n && best[i + 1][j] >= best[i][j + 1])) pairs.push([a[i++], null]);
    else pairs.push([null, b[j++]]);
  }
  return pairs;
}

function Delta({ a, b, money }) {
  if (a === null || b === null || a === undefined || b === undefined) return html`<span class="none">—</span>`;
  const d = b - a;
  if (d === 0) return html`<span class="none">same</span>`;
  return html`<span class=${d > 0 ? "more" : "less"}>${d > 0 ? "+" : "−"}${money ? html`<${Money} micros=${Math.abs(d)} />` : count.format(Math.abs(d))}</span>`;
}

function Step({ line }) {
  if (!line) return html`<span class="none">—</span>`;
  return html`<span><strong>${KINDS[line.kind] || line.kind}</strong>${line.model ? ` · ${line.model}` : ""}${line.tool ? ` · ${line.tool}` : ""}${
    line.isError ? " (failed)" : ""}</span>`;
}

function Side({ side, name }) {
  const { task, check } = side;
  return html`<div class="side" data-testid=${`side-${name}`}>
    <h2><a href=${`/inspect/${task.id}`}>${name === "a" ? "This run" : "The other run"}</a></h2>
    <p>${check.intact ? html`<span class="badge intact" data-testid="verify-badge">✓ Record intact: ${check.lines} lines checked</span>`
      : html`<span class="badge broken" data-testid="verify-badge">✗ Record broken at line ${check.brokenAt}</span>`}</p>
    <dl class="facts">
      <dt>Status</dt><dd><${Status} status=${task.status} /></dd>
      <dt>Started</dt><dd><${Time} iso=${task.startedAt} /></dd>
      <dt>Took</dt><dd>${duration(task.startedAt, task.endedAt)}</dd>
      <dt>All-in cost</dt><dd><${Money} micros=${task.cost ? task.cost.allInMicros : null} testid=${`cost-${name}`} /></dd>
      <dt>Tokens</dt><dd>${task.cost ? `${count.format(task.cost.allInInputTokens)} in, ${count.format(task.cost.allInOutputTokens)} out` : "—"}</dd>
    </dl>
  </div>`;
}

export function ComparePage() {
  const params = new URLSearchParams(location.search);
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    (async () => {
      const a = await compareSide(params.get("a"));
      if (!a) return setFound({ missing: "a" });
      const other = params.get("b") || await runBefore(a.task);
      const b = other ? await compareSide(other) : null;
      setFound(b ? { a, b } : { a, missing: "b" });
    })().catch((e) => setError(e.message));
  }, []);
  if (error) return html`<main><p class="problem" role="alert">${error}</p></main>`;
  if (!found) return html`<main><p class="loading">Reading both runs…</p></main>`;
  if (found.missing === "a") return html`<main><p class="empty" data-testid="no-task">There is no such task you may see.</p></main>`;
  if (found.missing === "b") {
    return html`<main><h1>Two runs side by side</h1><p class="empty" data-testid="no-other-run">There is no earlier run of ${
      found.a.task.agent} · ${found.a.task.skill} you may see to compare with.</p></main>`;
  }
  const { a, b } = found;
  const pairs = align(a.lines, b.lines);
  const state = ([x, y]) => (!x || !y ? "alone" : sign(x) === sign(y) ? "same" : "changed");
  const same = pairs.filter((p) => state(p) === "same").length;
  const changed = pairs.filter((p) => state(p) === "changed").length;
  return html`<main class="compare">
    <h1>Two runs side by side: ${a.task.agent} · ${a.task.skill}${b.task.agent !== a.task.agent || b.task.skill !== a.task.skill
      ? ` and ${b.task.agent} · ${b.task.skill}` : ""}</h1>
    <div class="sides"><${Side} side=${a} name="a" /><${Side} side=${b} name="b" /></div>
    <p data-testid="compare-summary">${same} of ${pairs.length} steps are the same, ${changed} ${changed === 1 ? "differs" : "differ"} in
      model or tool, ${pairs.length - same - changed} ${pairs.length - same - changed === 1 ? "is" : "are"} in one run only; the other run costs <${Delta}
      a=${a.task.cost && a.task.cost.allInMicros} b=${b.task.cost && b.task.cost.allInMicros} money=${true} /> all in.</p>
    <table class="tasks" data-testid="compare-steps">
      <caption>Their own steps, aligned</caption>
      <thead><tr><th scope="col">This run</th><th scope="col">The other run</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Time (ms)</th></tr></thead>
      <tbody>${pairs.map(([x, y]) => html`<tr data-testid="compare-row" class=${state([x, y])} data-state=${state([x, y])}>
        <td><${Step} line=${x} /></td><td><${Step} line=${y} /></td>
        <td><${Delta} a=${x && tokens(x)} b=${y && tokens(y)} /></td>
        <td><${Delta} a=${x && x.costMicros} b=${y && y.costMicros} money=${true} /></td>
        <td><${Delta} a=${x && x.durationMs} b=${y && y.durationMs} /></td>
      </tr>`)}</tbody>
    </table>
  </main>`;
}
