// A task's money against its budget, with the 80% and 100% marks the server tells, and "Stop this work" for a
// running task: a reason, then stopTask; a stop already asked says who asked, why and when.
import { h } from "preact";
import { useState } from "preact/hooks";
import htm from "htm";
import { graphql } from "./api.js";
import { Money, Time } from "./format.js";

const html = htm.bind(h);
const MARKS = [80, 100];
const STOP = `mutation($input: StopTaskInput!) { stopTask(input: $input) { stopAsked { by { id name } reason at } } }`;

// The all-in spend on a track that reaches the limit, or the spend when it went past; the marks at 80% and 100%.
export function BudgetMeter({ task }) {
  const { cost, limitMicros } = task;
  if (limitMicros === null || limitMicros === undefined || !cost) return null;
  const spent = cost.allInMicros;
  const end = Math.max(limitMicros, spent, 1);
  const share = limitMicros > 0 ? Math.floor((spent * 100) / limitMicros) : 100;
  const passed = MARKS.filter((mark) => spent * 100 > limitMicros * mark);
  const state = passed.includes(100) ? "over" : passed.includes(80) ? "near" : "within";
  return html`<div class=${`meter ${state}`} data-testid="budget-meter">
    <div class="meter-track" role="meter" aria-label="All-in spend against the budget" aria-valuemin="0"
      aria-valuemax=${limitMicros} aria-valuenow=${spent} aria-valuetext=${`${share}% of the budget`}>
      <div class="meter-fill" style=${{ width: `${(spent / end) * 100}%` }}></div>
      ${MARKS.map((mark) => html`<span class="meter-mark" style=${{ left: `${(limitMicros * mark) / end}%` }}
        title=${`${mark}% of the budget`}></span>`)}
    </div>
    <p class="meter-words" data-testid="budget-words"><${Money} micros=${spent} /> of <${Money} micros=${limitMicros} />${
      ` spent all in: ${share}%${state === "over" ? ", past the budget" : state === "near" ? ", past 80%" : ""}`}</p>
  </div>`;
}

function Asked({ stop }) {
  const by = stop.by.name || stop.by.id;
  return html`<p class="stop-asked" role="status" data-testid="stop-asked">${by} asked the work to stop (<${Time} iso=${stop.at} />): ${stop.reason}</p>`;
}

// Shown on running work to a person; a stop the server refuses says who may stop it instead.
export function StopWork({ task, onAsked }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState(null);
  const [sending, setSending] = useState(false);
  if (task.stopAsked) return html`<${Asked} stop=${task.stopAsked} />`;
  if (task.status !== "RUNNING") return null;
  if (!open) {
    return html`<p><button type="button" class="stop" onClick=${() => setOpen(true)}>Stop this work</button></p>`;
  }
  const submit = async (event) => {
    event.preventDefault();
    if (!reason.trim()) return setProblem("Say why it should stop: the reason is kept in the record.");
    setSending(true);
    try {
      const data = await graphql(STOP, { input: { task: task.id, reason: reason.trim() } });
      onAsked(data.stopTask.stopAsked);
    } catch (error) {
      setProblem(error.code === "FORBIDDEN"
        ? "Only a supervisor of this agent, or who asked for the work, may stop it."
        : error.message);
    } finally {
      setSending(false);
    }
  };
  return html`<form class="stop-form" onSubmit=${submit} aria-label="Stop this work">
    <label for="stop-reason">Why should it stop? The agent is told at its next step, and the reason is kept in the record.</label>
    <textarea id="stop-reason" rows="2" value=${reason} onInput=${(e) => { setReason(e.target.value); setProblem(null); }}></textarea>
    <p><button type="submit" class="stop" disabled=${sending}>Ask it to stop</button>
      <button type="button" onClick=${() => { setOpen(false); setProblem(null); }}>Cancel</button></p>
    ${problem && html`<p class="problem" role="alert" data-testid="stop-problem">${problem}</p>`}
  </form>`;
}
