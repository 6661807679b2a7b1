// The steps of the record in order, as a virtualised list: only the rows in view are in the page, and the steps are
// read a page at a time as the list scrolls towards the last one read (onMore), so a record of any length scrolls
// smoothly. Arrows, Page Up/Down, Home and End move between steps; the chosen one is shown whole.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { Money, Time } from "./format.js";
import { Readable, conversationOf, conversationLine } from "./conversation.js";

const html = htm.bind(h);
export const ROW = 84;
const SPARE = 6;
const FITTING = 10;

const KINDS = {
  STARTED: "Started", MODEL_CALL: "Model call", TOOL_CALL: "Tool call", TOOL_RESULT: "Tool result",
  ASKED_FOR_HELP: "Asked for help", SENT_BACK: "Answer sent back", STOP_ASKED: "Stop asked", ENDED: "Ended",
  ERASED: "Erasure", REVIEWED: "Reviewed", HELD: "Held", RELEASED: "Hold released",
};

const NEVER_RECORDED = {
  METADATA_ONLY: "the agent records figures only",
  RECORDING_OFF: "recording was off on the server",
  REDACTED: "the call was marked redacted",
};

export function Reason({ step }) {
  const words = {
    DENIED: () => "Content not shown to your role.",
    WITHHELD: () => `Content never recorded: ${NEVER_RECORDED[step.withheldReason] || "it was withheld"}.`,
    ERASED: () => html`Content erased on <${Time} iso=${step.contentErasedAt} />.`,
  }[step.contentAccess];
  return html`<span class="reason" data-testid="content-reason">${words ? words() : "No content."}</span>`;
}

// The content in one line: a model call as its last message and reply, an object as its fields.
function line(step) {
  const conversation = step.kind === "MODEL_CALL" ? conversationOf(step.payload) : null;
  if (conversation) return conversationLine(conversation);
  try {
    const value = JSON.parse(step.payload);
    if (value && typeof value === "object" && !Array.isArray(value)) {
      return Object.entries(value).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join(" · ");
    }
  } catch {
    return step.payload;
  }
  return step.payload;
}

function Sentence({ step }) {
  if (step.erasedAt) return html`<span class="reason">Sentence erased on <${Time} iso=${step.erasedAt} />.</span>`;
  if (step.summary === null) return html`<span class="reason">Sentence not shown to your role.</span>`;
  return step.summary;
}

function Content({ step, whole }) {
  if (step.contentAccess !== "SHOWN") return html`<${Reason} step=${step} />`;
  if (!step.payload) return html`<span class="reason">No content.</span>`;
  return whole
    ? html`<${Readable} key=${step.seq} payload=${step.payload} kind=${step.kind} />`
    : html`<code data-testid="step-content" title=${step.payload}>${line(step)}</code>`;
}

function hiddenSteps(above, below) {
  const steps = (n) => (n === 1 ? "1 step" : `${n} steps`);
  const parts = [above > 0 && `${steps(above)} above`, below === null ? "more below, read as you scroll"
    : below > 0 && `${steps(below)} below`].filter(Boolean);
  return parts.length ? `Scroll the box for the ${parts.length > 1 ? "others" : "rest"}: ${parts.join(", ")}.`
    : "Every step is in view.";
}

function Row({ step, index, total, taskId, broken, chosen, onChoose }) {
  const other = step.task && step.task.id !== taskId;
  return html`<li id=${`line-${step.seq}`} data-testid="step" data-seq=${step.seq} tabindex=${chosen ? 0 : -1}
      class=${`step${broken ? " broken" : ""}${chosen ? " chosen" : ""}`} style=${{ top: `${index * ROW}px` }}
      aria-posinset=${index + 1} aria-setsize=${total} aria-current=${chosen ? "true" : undefined}
      onClick=${() => onChoose(index)}>
    <div class="step-head">
      <span class="seq">${step.seq}</span>
      <strong>${KINDS[step.kind] || step.kind}</strong>
      ${step.tool && html`<span>${step.tool}</span>`}
      ${step.model && html`<span>${step.model}</span>`}
      <${Time} iso=${step.at} />
      ${step.costMicros !== null && html`<${Money} micros=${step.costMicros} unpriced=${step.call && step.call.costSource === "UNPRICED"} />`}
      ${step.durationMs !== null && html`<span>${step.durationMs} ms</span>`}
      ${step.isError && html`<span class="status status-failed">error</span>`}
      ${other && html`<a href=${`/inspect/${step.task.id}`}>${step.task.agent} · ${step.task.skill}</a>`}
      ${broken && html`<span class="status status-failed">broken here</span>`}
    </div>
    <p class="sentence"><${Sentence} step=${step} /></p>
    <p class="content"><${Content} step=${step} /></p>
  </li>`;
}

export function Steps({ steps, done, total, onMore, reach, taskId, brokenAt, goTo }) {
  const box = useRef(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(480);
  const [chosen, setChosen] = useState(null);
  const [want, setWant] = useState(null);

  const choose = (index, focus) => {
    if (index < 0 || index >= steps.length) return;
    setChosen(index);
    const el = box.current;
    if (index * ROW < el.scrollTop || (index + 1) * ROW > el.scrollTop + el.clientHeight) {
      el.scrollTop = Math.max(0, index * ROW - el.clientHeight / 3);
      setTop(el.scrollTop);
    }
    if (focus) requestAnimationFrame(() => document.getElementById(`line-${steps[index].seq}`)?.focus());
  };

  useEffect(() => { setHeight(box.current.clientHeight); }, [done]);
  useEffect(() => { if (goTo) setWant(goTo); }, [goTo]);
  useEffect(() => {
    if (!want) return;
    const index = steps.findIndex((s) => s.seq === want.seq);
    if (index >= 0) choose(index, true);
    setWant(null);
  }, [want, steps]);

  const first = Math.max(0, Math.floor(top / ROW) - SPARE);
  const last = Math.min(steps.length, Math.ceil((top + height) / ROW) + SPARE);
  useEffect(() => { if (!done && last >= steps.length - SPARE) onMore(); }, [last, steps.length, done]);

  const onKeyDown = (event) => {
    if (event.key === "End" && !done) {
      event.preventDefault();
      reach(Infinity).then((read) => read.length && setWant({ seq: read[read.length - 1].seq }));
      return;
    }
    const at = chosen ?? -1;
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, PageDown: at + 10, PageUp: at - 10, Home: 0, End: steps.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    choose(Math.max(0, Math.min(steps.length - 1, to)), true);
  };

  const rows = done ? steps.length : Math.max(total || 0, steps.length + 1);
  const step = chosen !== null ? steps[chosen] : null;
  const fits = done && rows <= FITTING;
  const above = Math.min(steps.length, Math.floor(top / ROW));
  const below = done ? Math.max(0, rows - Math.floor((top + height) / ROW)) : null;
  return html`
    <div class=${`steps-box${fits ? " fits" : ""}`} ref=${box} onScroll=${(e) => setTop(e.currentTarget.scrollTop)}
        tabindex=${chosen === null ? 0 : -1} onKeyDown=${onKeyDown} aria-label="Steps, in order">
      <ol class="steps" style=${{ height: `${rows * ROW}px` }}>
        ${steps.slice(first, last).map((s, i) => html`<${Row} key=${s.seq} step=${s} index=${first + i}
          total=${done ? steps.length : -1} taskId=${taskId} broken=${s.seq === brokenAt} chosen=${first + i === chosen}
          onChoose=${(index) => choose(index, true)} />`)}
      </ol>
      ${!done && last >= steps.length && html`<p class="loading steps-more" style=${{ top: `${steps.length * ROW}px` }}>Reading more steps…</p>`}
    </div>
    ${!fits && html`<p class="steps-hidden" data-testid="steps-hidden" aria-live="polite">${hiddenSteps(above, below)}</p>`}
    ${step && html`<section class="step-whole" aria-live="polite" aria-label=${`Step ${step.seq}`}>
      <h3>Step ${step.seq}: ${KINDS[step.kind] || step.kind}</h3>
      <p><${Sentence} step=${step} /></p>
      <${Content} step=${step} whole=${true} />
      <p class="hash">Line hash <code>${step.hash}</code></p>
    </section>`}`;
}
