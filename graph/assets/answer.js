// On a task's page: who reviewed the work and what they found, whether its tree is held, and, for those who may,
// Approve / Reject / Note and Hold / Release. Reads and writes only through POST /graphql with the viewer's token.
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";
import { graphql } from "./api.js";
import { Time } from "./format.js";

const html = htm.bind(h);

const REVIEWS = `reviews { by { id name } verdict score note evaluator at } reviewCount
  hold { by { id name } reason at }`;
const VERDICTS = { APPROVED: "approved", REJECTED: "rejected", NOTED: "noted" };
const CHOICES = [["APPROVED", "Approve"], ["REJECTED", "Reject"], ["NOTED", "Note"]];

async function answersOf(id) {
  return (await graphql(`query($id: ID!) { task(id: $id) { ${REVIEWS} } }`, { id })).task;
}

async function review(task, verdict, note) {
  await graphql(`mutation($input: ReviewInput!) { reviewTask(input: $input) { verdict } }`,
    { input: { task, verdict, note: note || null } });
}

async function changeHold(task, holding, reason) {
  const name = holding ? "holdWork" : "releaseHold";
  await graphql(`mutation($input: HoldInput!) { ${name}(input: $input) { __typename } }`, { input: { task, reason } });
}

const sentence = (text) => (/[.!?]$/.test(text) ? text : `${text}.`);
const named = (p) => (p.name ? `${p.name} (${p.id})` : p.id);

function Review({ item }) {
  const who = item.evaluator ? `The evaluator ${item.evaluator}` : named(item.by);
  return html`<li data-testid="review"><strong>${who}</strong> ${VERDICTS[item.verdict]} this work
    ${item.score !== null ? html`, scoring it ${item.score}` : ""} on <${Time} iso=${item.at} />
    ${item.note && html`<blockquote>${item.note}</blockquote>`}</li>`;
}

function ReviewForm({ task, onDone }) {
  const [note, setNote] = useState("");
  const [problem, setProblem] = useState(null);
  const send = (verdict) => review(task.id, verdict, note.trim()).then(() => { setNote(""); setProblem(null); onDone(); },
    (e) => setProblem(e.message));
  return html`<form class="answer-form" onSubmit=${(e) => e.preventDefault()}>
    <label>Your note (optional) <input value=${note} onInput=${(e) => setNote(e.target.value)} /></label>
    ${CHOICES.map(([verdict, label]) => html`<button type="button" onClick=${() => send(verdict)}>${label}</button>`)}
    ${problem && html`<p class="problem" role="alert">${problem}</p>`}
  </form>`;
}

function HoldForm({ task, held, onDone }) {
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState(null);
  const send = () => {
    if (!reason.trim()) { setProblem("Say why, for the record."); return; }
    changeHold(task.id, !held, reason.trim()).then(() => { setReason(""); setProblem(null); onDone(); },
      (e) => setProblem(e.message));
  };
  return html`<form class="answer-form" onSubmit=${(e) => { e.preventDefault(); send(); }}>
    <label>Why ${held ? "the hold ends" : "it is held"} <input value=${reason} onInput=${(e) => setReason(e.target.value)} /></label>
    <button type="submit">${held ? "Release the hold" : "Hold"}</button>
    ${problem && html`<p class="problem" role="alert">${problem}</p>`}
  </form>`;
}

// `task` carries readableGroups and status; `viewer` is `me`, with holdsRecords.
export function Answering({ task, viewer, onChanged }) {
  const [found, setFound] = useState(null);
  const [problem, setProblem] = useState(null);
  const load = () => answersOf(task.id).then(setFound, (e) => setProblem(e.message));
  useEffect(() => { load(); }, [task.id]);
  const changed = () => { load(); if (onChanged) onChanged(); };

  if (problem) return html`<p class="problem" role="alert">${problem}</p>`;
  if (!found) return html`<p class="loading">Loading the reviews…</p>`;
  const readsSentences = task.readableGroups.includes("SENTENCES");
  const ended = task.status !== "RUNNING";
  return html`<div class="answering">
    <p data-testid="hold">${found.hold
      ? html`<strong class="held">Held</strong> by ${named(found.hold.by)} since <${Time} iso=${found.hold.at} />: ${sentence(found.hold.reason)} Nothing erases this work until the hold is released.`
      : "Not held: erasure and retention apply as usual."}</p>
    ${viewer.holdsRecords && html`<${HoldForm} task=${task} held=${!!found.hold} onDone=${changed} />`}
    ${!readsSentences ? html`<p class="none" data-testid="reviews-hidden">${found.reviewCount} ${found.reviewCount === 1 ? "review" : "reviews"}; what they say is not shown to your role.</p>`
      : found.reviews.length === 0 ? html`<p class="empty" data-testid="no-reviews">Nobody has reviewed this work yet.</p>`
      : html`<ul class="reviews">${found.reviews.map((item) => html`<${Review} item=${item} />`)}</ul>`}
    ${readsSentences && (ended ? html`<${ReviewForm} task=${task} onDone=${changed} />`
      : html`<p class="none">It can be reviewed once it has ended.</p>`)}
  </div>`;
}
