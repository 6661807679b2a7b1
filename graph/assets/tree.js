// The tree of sub-tasks (WAI-ARIA tree): arrows move, Right opens, Left closes or goes up, Enter opens the task.
// A node's children are loaded when it opens, and shown a page at a time.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { PAGE, childIds, costs, nodes } from "./queries.js";
import { Budget, Status, duration } from "./format.js";

const html = htm.bind(h);

function Node({ task, level, open: startOpen, onShown }) {
  const [open, setOpen] = useState(!!startOpen);
  const [ids, setIds] = useState(task.childIds || null);
  const [children, setChildren] = useState(null);
  const [asked, setAsked] = useState(0);
  const [error, setError] = useState(null);
  const expandable = task.hasChildren !== false && !(ids && ids.length === 0);
  const failed = (e) => setError(e.message);
  const more = (known, shown, from) => nodes(known.slice(from, from + PAGE))
    .then((page) => {
      setChildren([...shown, ...page]);
      setAsked(from + PAGE);
      if (page.length) {
        costs(page.map((c) => c.id)).then((found) => setChildren((now) => now.map((c) => (
          found[c.id] ? { ...c, cost: found[c.id] } : c))), failed);
      }
    }, failed)
    .then(() => onShown && from === 0 && onShown());

  useEffect(() => {
    if (!open || children !== null) return;
    if (ids === null) childIds(task.id).then((found) => { setIds(found); return more(found, [], 0); }, failed);
    else more(ids, [], 0);
  }, [open]);

  const onKeyDown = (event) => {
    if (event.target !== event.currentTarget) return;
    if (event.key === "ArrowRight" && expandable) {
      event.preventDefault();
      if (!open) setOpen(true);
      else event.currentTarget.querySelector('[role="treeitem"]')?.focus();
    } else if (event.key === "ArrowLeft") {
      event.preventDefault();
      if (open && expandable) setOpen(false);
      else event.currentTarget.parentElement.closest('[role="treeitem"]')?.focus();
    } else if (event.key === "Enter") {
      location.href = `/inspect/${task.id}`;
    }
  };

  return html`<li role="treeitem" aria-level=${level} aria-expanded=${expandable ? String(open) : undefined}
      aria-selected="false" tabindex="-1" data-testid="tree-node" data-task=${task.id} onKeyDown=${onKeyDown}>
    <div class="node-row">
      ${expandable
        ? html`<button type="button" class="toggle" tabindex="-1" aria-hidden="true" onClick=${() => setOpen(!open)}>${open ? "▾" : "▸"}</button>`
        : html`<span class="toggle" aria-hidden="true"></span>`}
      <a href=${`/inspect/${task.id}`} tabindex="-1">${task.agent} · ${task.skill}</a>
      <span class="about">${task.about ?? ""}</span>
      <${Status} status=${task.status} />
      <span class="took">${duration(task.startedAt, task.endedAt)}</span>
      <${Budget} task=${task} />
    </div>
    ${open && html`<ul role="group">
      ${error && html`<li role="none" class="problem">${error}</li>`}
      ${children === null && !error && html`<li role="none" class="loading">Loading sub-tasks…</li>`}
      ${children && children.map((c) => html`<${Node} key=${c.id} task=${c} level=${level + 1} />`)}
      ${children && ids.length > asked && html`<li role="none" class="more">
        <button type="button" onClick=${() => more(ids, children, asked)}>
          Show ${Math.min(PAGE, ids.length - asked)} more (${asked} of ${ids.length} shown)</button></li>`}
    </ul>`}
  </li>`;
}

// onShown is called once the task and its first page of children are on the screen.
export function Tree({ task, onShown }) {
  const ref = useRef(null);
  useEffect(() => {
    const first = ref.current && ref.current.querySelector('[role="treeitem"]');
    if (first) first.tabIndex = 0;
  }, []);

  const onFocusIn = (event) => {
    const item = event.target.closest('[role="treeitem"]');
    if (!item || event.target !== item) return;
    for (const other of ref.current.querySelectorAll('[role="treeitem"][tabindex="0"]')) other.tabIndex = -1;
    item.tabIndex = 0;
  };
  const onKeyDown = (event) => {
    const item = event.target.closest('[role="treeitem"]');
    if (!item || event.target !== item) return;
    const items = [...ref.current.querySelectorAll('[role="treeitem"]')];
    const at = items.indexOf(item);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    items[Math.max(0, Math.min(items.length - 1, to))].focus();
  };
  return html`<ul role="tree" aria-label="Sub-tasks" class="tree" ref=${ref} onfocusin=${onFocusIn} onKeyDown=${onKeyDown}>
    <${Node} task=${task} level=${1} open=${true} onShown=${onShown} />
  </ul>`;
}
