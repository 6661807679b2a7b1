// The model turns with their tool calls, loaded when the viewer opens them; empty unless every agent in the work
// names one of the viewer's roles as a transcript reader.
import { h } from "preact";
import { useState } from "preact/hooks";
import htm from "htm";
import { transcriptOf } from "./queries.js";
import { Time } from "./format.js";

const html = htm.bind(h);
const WITHHELD = {
  METADATA_ONLY: "the agent records figures only",
  RECORDING_OFF: "recording was off on the server",
  REDACTED: "the call was marked redacted",
  ERASED: "it was erased",
};

const REFUSED = "There is no transcript you may read here. A transcript is shown only to the roles that every "
  + "agent in this work names as its transcript readers.";
const json = (value) => JSON.stringify(value, null, 2);

function Turn({ turn }) {
  return html`<article class="turn" data-testid="transcript-turn">
    <h3>Turn ${turn.turn} · ${turn.agent}${turn.model ? ` · ${turn.model}` : ""} · <${Time} iso=${turn.at} /></h3>
    ${turn.contentWithheld
      ? html`<p class="reason">Not recorded: ${WITHHELD[turn.withheldReason] || "withheld"}.</p>`
      : html`
        ${turn.systemPrompt && html`<h4>System prompt</h4><pre>${turn.systemPrompt}</pre>`}
        <h4>Messages</h4><pre>${json(turn.messages)}</pre>
        <h4>Response</h4><pre>${json(turn.response)}</pre>`}
    ${turn.tools.length > 0 && html`<h4>Tools</h4><ol class="tools">
      ${turn.tools.map((t) => html`<li>
        <strong>${t.name}</strong>${t.isError ? " (failed)" : ""}${t.durationMs !== null ? `, ${t.durationMs} ms` : ""}
        <pre>${json({ input: t.input, output: t.output })}</pre></li>`)}
    </ol>`}
  </article>`;
}

export function Transcript({ id }) {
  const [turns, setTurns] = useState(null);
  const [error, setError] = useState(null);
  const onToggle = (event) => {
    if (event.currentTarget.open && turns === null) transcriptOf(id).then(setTurns, (e) => setError(e.message));
  };
  return html`<details class="transcript" onToggle=${onToggle}>
    <summary>Show the transcript (model turns and their tool calls)</summary>
    ${error && html`<p class="problem" role="alert">${error}</p>`}
    ${turns === null && !error && html`<p class="loading">Loading the transcript…</p>`}
    ${turns && turns.length === 0 && html`<p class="reason" data-testid="transcript-reason">${REFUSED}</p>`}
    ${turns && turns.map((t) => html`<${Turn} key=${`${t.task && t.task.id}-${t.turn}`} turn=${t} />`)}
  </details>`;
}
