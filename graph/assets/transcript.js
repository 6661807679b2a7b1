// The model turns with their tool calls, loaded when the viewer opens them; empty unless every agent in the work
// names one of the viewer's roles as a transcript reader.
import { h } from "preact";
import { useState } from "preact/hooks";
import htm from "htm";
import { agents, transcriptOf } from "./queries.js";
import { Time } from "./format.js";
import { Conversation, Fields, conversationOf } from "./conversation.js";

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
  const [raw, setRaw] = useState(false);
  const content = { systemPrompt: turn.systemPrompt, messages: turn.messages, response: turn.response };
  return html`<article class="turn" data-testid="transcript-turn">
    <h3>Turn ${turn.turn} · ${turn.agent}${turn.model ? ` · ${turn.model}` : ""} · <${Time} iso=${turn.at} /></h3>
    ${turn.contentWithheld
      ? html`<p class="reason">Not recorded: ${WITHHELD[turn.withheldReason] || "withheld"}.</p>`
      : html`
        <p><button type="button" aria-pressed=${raw} onClick=${() => setRaw(!raw)}>${raw ? "Show it readable" : "Show the raw JSON"}</button></p>
        ${raw ? html`<pre data-testid="raw-json">${json(content)}</pre>` : html`<${Conversation} conversation=${conversationOf(content)} />`}`}
    ${turn.tools.length > 0 && html`<h4>Tools</h4><ol class="tools">
      ${turn.tools.map((t) => html`<li>
        <strong>${t.name}</strong>${t.isError ? " (failed)" : ""}${t.durationMs !== null ? `, ${t.durationMs} ms` : ""}
        <dl class="tool-io"><dt>Asked with</dt><dd><${Fields} value=${t.input} /></dd>
          <dt>${t.isError ? "Failed with" : "Answered"}</dt><dd><${Fields} value=${t.output} /></dd></dl></li>`)}
    </ol>`}
  </article>`;
}

// Why this viewer reads the transcript: each agent in it names one of the viewer's roles as a transcript reader.
function Why({ turns, viewer, readers }) {
  const names = [...new Set(turns.map((t) => t.agent))];
  const grants = names.map((name) => {
    const roles = (readers[name] || []).filter((r) => viewer.roles.includes(r));
    return `${name} lets ${roles.length === 1 ? `the role ${roles[0]}` : `the roles ${roles.join(", ")}`} read its transcripts`;
  });
  return html`<p class="reason" data-testid="transcript-why">Shown to you, content included, because ${
    grants.join("; ")}: a transcript is shown to the roles every agent in the work names as its readers, whatever
    else the role may read.</p>`;
}

export function Transcript({ id, viewer }) {
  const [turns, setTurns] = useState(null);
  const [readers, setReaders] = useState({});
  const [error, setError] = useState(null);
  const onToggle = (event) => {
    if (!event.currentTarget.open || turns !== null) return;
    Promise.all([transcriptOf(id), agents()]).then(([found, all]) => {
      setReaders(Object.fromEntries(all.map((a) => [a.name, a.transcriptReaders])));
      setTurns(found);
    }, (e) => setError(e.message));
  };
  return html`<details class="transcript" onToggle=${onToggle}>
    <summary>Show the transcript (model turns and their tool calls)</summary>
    ${error && html`<p class="problem" role="alert">${error}</p>`}
    ${turns === null && !error && html`<p class="loading">Loading the transcript…</p>`}
    ${turns && turns.length === 0 && html`<p class="reason" data-testid="transcript-reason">${REFUSED}</p>`}
    ${turns && turns.length > 0 && viewer && html`<${Why} turns=${turns} viewer=${viewer} readers=${readers} />`}
    ${turns && turns.map((t) => html`<${Turn} key=${`${t.task && t.task.id}-${t.turn}`} turn=${t} />`)}
  </details>`;
}
