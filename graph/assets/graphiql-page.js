// GraphiQL with the Authorization header set from a token kept in sessionStorage (shared with the inspector).
(function () {
  const KEY = "agentlog.token";
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) {
    sessionStorage.setItem(KEY, fragment.get("token"));
    history.replaceState(null, "", location.pathname + location.search);
  }

  const input = document.getElementById("token");
  const who = document.getElementById("who");
  input.value = sessionStorage.getItem(KEY) || "";

  async function post(body) {
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    const token = sessionStorage.getItem(KEY);
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch("/graphql", { method: "POST", headers, body: JSON.stringify(body) });
    return response.json();
  }

  async function sayWho() {
    if (!sessionStorage.getItem(KEY)) { who.textContent = "not signed in"; return; }
    const answer = await post({ query: "{ me { id name tenant } }" });
    const me = answer.data && answer.data.me;
    who.textContent = me ? `signed in as ${me.name || me.id} (${me.tenant})`
      : /expired/i.test((answer.errors || [{}])[0].message || "") ? "token expired" : "token not accepted";
  }

  document.getElementById("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = input.value.trim().replace(/^Bearer\s+/i, "");
    if (token) sessionStorage.setItem(KEY, token); else sessionStorage.removeItem(KEY);
    sayWho();
  });
  document.getElementById("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    input.value = "";
    sayWho();
  });

  async function fetcher(params, options) {
    const headers = { "Content-Type": "application/json", Accept: "application/json", ...(options && options.headers) };
    const token = sessionStorage.getItem(KEY);
    if (token && !Object.keys(headers).some((h) => h.toLowerCase() === "authorization")) {
      headers.Authorization = "Bearer " + token;
    }
    const response = await fetch("/graphql", { method: "POST", headers, body: JSON.stringify(params) });
    return response.json();
  }

  const EXAMPLES = [
    [`# The token's principal: who the server takes you for.
query WhoAmI {
  me { id name tenant roles }
}`],
    [`# The newest tasks you may see, with what they cost against their budget.
query MyTasks {
  tasks(first: 10) {
    edges {
      node {
        id agent skill status about startedAt endedAt limitMicros
        cost { ownMicros allInMicros }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`],
    [`# A task, its first sub-tasks and steps. Paste a task id into the variables; for the next
# page, pass the last child's id as children(after:) and the last seq as record(after:).
query Task($id: ID!) {
  task(id: $id) {
    id agent status about outcome startedAt endedAt chainLength childCount
    cost { ownMicros allInMicros }
    children(first: 50) { id agent status about }
    record(first: 100) { seq kind at summary contentAccess payload }
  }
}`, `{ "id": "" }`],
    [`# Walks the whole chain of the task's tree.
query Verify($id: ID!) {
  verifyTrace(task: $id) { intact lines brokenAt problem erased }
}`, `{ "id": "" }`],
  ];

  const tabs = EXAMPLES.map(([query, variables]) => ({ query, variables }));
  ReactDOM.createRoot(document.getElementById("graphiql")).render(
    React.createElement(GraphiQL, {
      fetcher,
      defaultTabs: tabs,
      defaultEditorToolsVisibility: true,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
    }),
  );
  sayWho();
})();
