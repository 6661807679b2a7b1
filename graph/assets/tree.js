// The tree of sub-tasks (WAI-ARIA tree): arrows move, Right opens, Left closes or goes up, Enter opens the task.
// A node's children are read a page at a time (children(first, after)), the first when it opens.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { PAGE, childPage, costs } from "./queries.js";
import { Budget, Status, duration } from "./format.js";

const html = htm.bind(h);

function Node({ task, level, open: startOpen, onShown }) {
  const [open, setOpen] = useState(!!startOpen);
  const [children, setChildren] = useState(task.children || null);
  const [done, setDone] = useState(false);
  const [error, setError] = useState(null);
  const count = task.childCount;
  const expandable = count !== 0 && task.hasChildren !== false;
  const failed = (e) => setError(e.message);
  const withCosts = (page) => page.length && costs(page.map((c) => c.id)).then((found) => setChildren((now) => now.map((c) => (
    found[c.id] ? { ...c, cost: found[c.id] } : c))), failed);
  const more = (shown) => childPage(task.id, shown.length ? shown[shown.length - 1].id : null)
    .then((page) => {
      setChildren([...shown, ...page]);
      if (page.length < PAGE) setDone(true);
      withCosts(page);
    }, failed)
    .then(() => onShown && shown.length === 0 && onShown());

  useEffect(() => {
    if (!task.children) return;
    withCosts(task.children);
    if (onShown) onShown();
  }, []);
  useEffect(() => {
    if (open && children === null) more([]);
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
      ${children && !done && count > children.length && html`<li role="none" class="more">
        <button type="button" onClick=${() => more(children)}>
          Show ${Math.min(PAGE, count - children.length)} more (${children.length} of ${count} shown)</button></li>`}
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
