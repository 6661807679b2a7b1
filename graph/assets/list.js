// /inspect: the pieces of work the viewer can see (root tasks; sub-tasks too when asked), newest first (or in another
// order), a page at a time, with a search box and the filters of `tasks`.
// It is read again when a task event is heard, so a status shown here changes as the work runs and ends.
// The filters live in the address (a plain GET form), so a filtered list can be bookmarked and shared.
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";
import { ORDERS, filterFields, taskList } from "./queries.js";
import { Budget, Status, Time, Words, duration } from "./format.js";
import { RunningNow } from "./running.js";
import { useTick } from "./live.js";

const html = htm.bind(h);
const TEXT = ["search", "agent", "skill", "requester", "session"];
const SHOWN = new Set([...TEXT, "status", "startedAfter", "startedBefore", "order", "all", "bySession"]);
const STATUSES = ["RUNNING", "DONE", "FAILED", "STOPPED"];
const ORDER_WORDS = { STARTED_AT_DESC: "Newest first", STARTED_AT_ASC: "Oldest first", ENDED_AT_DESC: "Most recently ended" };
const count = new Intl.NumberFormat(undefined);
const SETTLE_MS = 150;

function filterFromAddress(params, known) {
  const filter = {};
  for (const name of TEXT) if (params.get(name) && known.has(name)) filter[name] = params.get(name);
  if (params.get("status")) filter.status = params.get("status");
  if (!params.get("all")) filter.rootsOnly = true;
  for (const name of ["startedAfter", "startedBefore"]) {
    if (params.get(name)) filter[name] = new Date(params.get(name)).toISOString();
  }
  return filter;
}

// Filled from the address and then the viewer's own (defaultValue, defaultChecked): the page is drawn again each
// second and on every event, and that must not undo what the viewer is typing or ticking.
function Filters({ params, known }) {
  const text = (name, label) => known.has(name) && html`<label>${label}
    <input name=${name} type=${name === "search" ? "search" : "text"} defaultValue=${params.get(name) || ""} /></label>`;
  return html`<form class="filters" method="get" action="/inspect" role="search" aria-label="Search and filter tasks">
    ${known.has("search") && html`<p class="search"><label for="search">Search</label>
      <input id="search" name="search" type="search" placeholder="words of the about, trigger, outcome or a step"
        defaultValue=${params.get("search") || ""} /> <button type="submit">Search</button></p>`}
    ${text("agent", "Agent")} ${text("skill", "Skill")}
    <label>Status <select name="status">
      <option value="">any</option>
      ${STATUSES.map((s) => html`<option value=${s} selected=${params.get("status") === s}>${s.toLowerCase()}</option>`)}
    </select></label>
    ${text("requester", "Requested by (id)")} ${text("session", "Session")}
    <label>Started after <input name="startedAfter" type="datetime-local" defaultValue=${params.get("startedAfter") || ""} /></label>
    <label>Started before <input name="startedBefore" type="datetime-local" defaultValue=${params.get("startedBefore") || ""} /></label>
    <label>Order <select name="order">
      ${ORDERS.map((o) => html`<option value=${o} selected=${(params.get("order") || ORDERS[0]) === o}>${ORDER_WORDS[o].toLowerCase()}</option>`)}
    </select></label>
    <label class="check"><input name="all" type="checkbox" value="1" defaultChecked=${!!params.get("all")} /> Sub-tasks too</label>
    <label class="check"><input name="bySession" type="checkbox" value="1" defaultChecked=${!!params.get("bySession")} /> Group by session</label>
    <button type="submit">Filter</button> <a href="/inspect">Clear</a>
  </form>`;
}

function Row({ task }) {
  return html`<tr data-testid="task-row">
    <td><${Time} iso=${task.startedAt} /></td>
    <td><a href=${`/inspect/${task.id}`}>${task.agent} · ${task.skill}</a></td>
    <td><${Words} value=${task.about} task=${task} /></td>
    <td><${Status} status=${task.status} /></td>
    <td>${duration(task.startedAt, task.endedAt)}</td>
    <td><${Budget} task=${task} /></td>
  </tr>`;
}

// The page's rows under one heading per session, in the order each session first appears.
function BySession({ edges }) {
  const groups = new Map();
  for (const e of edges) {
    const key = e.node.session || "";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(e.node);
  }
  return [...groups].map(([session, tasks]) => html`<tbody data-testid="session-group">
    <tr class="group"><th colspan="6" scope="rowgroup">${session
      ? html`<a href=${`/inspect/session/${encodeURIComponent(session)}`}>Session ${session}</a>` : "No session"}
      <span class="none"> · ${tasks.length === 1 ? "1 task" : `${count.format(tasks.length)} tasks`} on this page</span></th></tr>
    ${tasks.map((t) => html`<${Row} key=${t.id} task=${t} />`)}
  </tbody>`);
}

export function TaskList() {
  const params = new URLSearchParams(location.search);
  const [state, setState] = useState({ loading: true, known: new Set() });
  const [heard, setHeard] = useState(0);
  useTick();
  useEffect(() => {
    const timer = setTimeout(async () => {
      try {
        const known = await filterFields();
        const filter = filterFromAddress(params, known);
        const page = await taskList(filter, params.get("after"), params.get("order"));
        const { rootsOnly, ...everything } = filter;
        const withSubTasks = rootsOnly && page.edges.length === 0
          ? (await taskList(everything, null, params.get("order"))).totalCount : 0;
        setState({ known, page, withSubTasks });
      } catch (error) {
        setState({ known: new Set(), error: error.message });
      }
    }, heard ? SETTLE_MS : 0);
    return () => clearTimeout(timer);
  }, [heard]);

  const next = new URLSearchParams(params);
  if (state.page) next.set("after", state.page.pageInfo.endCursor || "");
  const first = new URLSearchParams(params);
  first.delete("after");
  const all = new URLSearchParams(first);
  all.set("all", "1");
  const filtered = [...params.keys()].some((k) => SHOWN.has(k) && k !== "all");
  const what = params.get("all") ? ["task", "tasks"] : ["piece of work", "pieces of work"];
  return html`<main>
    <h1>Tasks</h1>
    <${RunningNow} onEvent=${() => setHeard((n) => n + 1)} />
    <h2>All work</h2>
    <${Filters} params=${params} known=${state.known} />
    ${state.loading && html`<p class="loading">Loading tasks…</p>`}
    ${state.error && html`<p class="problem" role="alert">${state.error}</p>`}
    ${state.page && (state.page.edges.length === 0
      ? html`<p class="empty">No tasks you may see${filtered ? " match these filters" : ""}.${state.withSubTasks > 0
          ? html` <a href=${`/inspect?${all}`}>Show the sub-tasks you may see (${count.format(state.withSubTasks)})</a>.` : ""}</p>`
      : html`<table class="tasks">
          <caption>${count.format(state.page.totalCount)} ${state.page.totalCount === 1 ? what[0] : what[1]}, ${
            (ORDER_WORDS[params.get("order")] || ORDER_WORDS[ORDERS[0]]).toLowerCase()}${params.get("after") ? " (a later page)" : ""}${
            params.get("all") ? "" : html` (sub-tasks are listed under each; <a href=${`/inspect?${all}`}>list them here too</a>)`}</caption>
          <thead><tr><th scope="col">Started</th><th scope="col">Agent · skill</th><th scope="col">About</th>
            <th scope="col">Status</th><th scope="col">Took</th><th scope="col">Cost</th></tr></thead>
          ${params.get("bySession") ? html`<${BySession} edges=${state.page.edges} />`
            : html`<tbody>${state.page.edges.map((e) => html`<${Row} key=${e.node.id} task=${e.node} />`)}</tbody>`}
        </table>`)}
    <nav class="pages" aria-label="Pages">
      ${params.get("after") && html`<a href=${`/inspect?${first}`}>First page</a>`}
      ${state.page && state.page.pageInfo.hasNextPage && html`<a href=${`/inspect?${next}`} rel="next">Next page</a>`}
    </nav>
  </main>`;
}
