// Task events as they happen: the server's `taskEvents` subscription over graphql-transport-ws at /graphql, sent the
// viewer's own token in `connection_init`, through graphql-ws (vendored; it sets `graphqlWs` on the page). One
// connection for the page, shared by every part that listens; the server tells each viewer only what they may read.
// A lost connection is tried again (soon at first, then at most every 5 s), and once it is back every listener
// reads anew what it shows, since events told in the gap were not heard.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { token } from "./api.js";

const html = htm.bind(h);

const EVENTS = `subscription { taskEvents { event at task {
  id agent skill status about startedAt endedAt limitMicros readableGroups depth modelCalls toolCalls
  parent { id agent skill } cost { allInMicros allInInputTokens allInOutputTokens }
} } }`;
const AGAIN_MS = 1000;
const RETRY_MS = 500;
const MOST_RETRY_MS = 5000;

const listeners = new Set();
const watchers = new Set();
let state = { live: false, problem: null };
let client = null;
let open = false;

function tell(next) {
  state = next;
  for (const watch of watchers) watch(state);
}

const REFUSED = "Not live: your token was refused. Reload with a fresh token.";
const EXPIRED = "Not live: your token expired. Reload with a fresh token.";
const LOST = "Not live: the connection to the server was lost. Reconnecting…";

// Why the feed stopped, in words: the close code and error codes docs/events.md names.
function problemOf(failure) {
  if (failure && failure.code === 4403) return REFUSED;
  const error = Array.isArray(failure) ? failure[0] : failure;
  return error && error.extensions && error.extensions.code === "UNAUTHENTICATED" ? EXPIRED : LOST;
}

// A subscription the server ended (the feed lost, the subscriber fallen behind: told as errors in its last result,
// then complete) is made again; one ended for the token is not.
function subscribe() {
  let errors = null;
  const ended = (failure) => {
    const problem = problemOf(failure);
    tell({ live: false, problem });
    if (problem === LOST) setTimeout(again, AGAIN_MS);
  };
  client.subscribe({ query: EVENTS }, {
    next: (result) => {
      if (result.errors && result.errors.length) errors = result.errors;
      else if (result.data) for (const listen of listeners) listen(result.data.taskEvents);
    },
    error: ended,
    complete: () => ended(errors),
  });
}

// Events may have been missed in the gap: every listener reads anew (told as `null`).
function readAnew() {
  for (const listen of listeners) listen(null);
}

function again() {
  subscribe();
  if (open) {
    tell({ live: true, problem: null });
    readAnew();
  }
}

function start() {
  if (client) return;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  client = globalThis.graphqlWs.createClient({
    url: `${scheme}://${location.host}/graphql`,
    lazy: false,
    retryAttempts: Infinity,
    shouldRetry: (closed) => !(closed && closed.code === 4403),
    retryWait: (retries) => new Promise((resolve) => setTimeout(resolve,
      Math.min(RETRY_MS * 2 ** retries, MOST_RETRY_MS) + Math.random() * RETRY_MS)),
    connectionParams: () => ({ Authorization: `Bearer ${token.get()}` }),
    on: {
      connected: () => {
        open = true;
        tell({ live: true, problem: null });
        readAnew();
      },
      closed: (closed) => {
        open = false;
        tell({ live: false, problem: problemOf(closed) });
      },
    },
  });
  subscribe();
}

// Calls `onEvent` with each task event the viewer hears (`{event, at, task}`), and with null when the feed
// (re)connects and whatever was shown should be read anew.
export function useTaskEvents(onEvent) {
  const current = useRef(onEvent);
  current.current = onEvent;
  useEffect(() => {
    const listen = (event) => current.current(event);
    listeners.add(listen);
    start();
    return () => listeners.delete(listen);
  }, []);
}

// Whether the page hears events now, and if not, why.
export function useLive() {
  const [seen, setSeen] = useState(state);
  useEffect(() => {
    watchers.add(setSeen);
    setSeen(state);
    return () => watchers.delete(setSeen);
  }, []);
  return seen;
}

// "live", or why not: the connection lost and being made again, or the token refused.
export function LiveState() {
  const live = useLive();
  return live.live
    ? html`<span class="live" data-testid="live-state">live</span>`
    : html`<span class="none" data-testid="live-state">${live.problem || "connecting…"}</span>`;
}

// Draws the part again every second, so "running for" moves on while the work runs.
export function useTick() {
  const [, setNow] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
}
