// The inspector: who is reading, then the list of tasks (/inspect) or one task (/inspect/{task}).
import { h, render } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";
import { takeTokenFromFragment, token } from "./api.js";
import { me } from "./queries.js";
import { TaskList } from "./list.js";
import { TaskPage } from "./task.js";
import { SessionPage } from "./session.js";
import { UsagePage } from "./usage.js";
import { ComparePage } from "./compare.js";
import { finishSignIn, organisation, signInWithOrganisation, signOut } from "./sign-in.js";

const html = htm.bind(h);

function SignIn({ problem, onToken, org }) {
  const [value, setValue] = useState("");
  const submit = (event) => {
    event.preventDefault();
    if (value.trim()) onToken(value);
  };
  return html`<main class="sign-in">
    <h1>agentlog inspector</h1>
    <p class="problem" role="alert" data-testid="sign-in-problem">${problem}</p>
    ${org && html`<p><button type="button" onClick=${() => signInWithOrganisation()}>Sign in with your organisation</button></p>`}
    <p>The inspector shows what your own token lets you read. Paste it here; it is kept in this tab only.</p>
    <p>A token is made by whoever runs this server, with <code>agentlog token --sub YOU --tenant TENANT --roles ROLE</code>
      on its host (the README's walkthrough prints a link with one in it).</p>
    <form onSubmit=${submit}>
      <label for="token">Your token</label>
      <input id="token" type="password" autocomplete="off" spellcheck="false" value=${value}
        onInput=${(e) => setValue(e.target.value)} />
      <button type="submit">Sign in</button>
    </form>
  </main>`;
}

function Header({ viewer, onSignOut }) {
  return html`<header class="top">
    <nav aria-label="Main"><a href="/inspect">Tasks</a> <a href="/inspect/usage">Usage</a> <a href="/graphql">GraphiQL</a></nav>
    <p class="viewer">Signed in as <strong>${viewer.name || viewer.id}</strong> (${viewer.tenant}${viewer.roles.length ? `; ${viewer.roles.join(", ")}` : ""})
      <button type="button" onClick=${onSignOut}>Sign out</button></p>
  </header>`;
}

function App() {
  const [state, setState] = useState({ phase: "checking" });
  const check = async (signedIn = null) => {
    const org = organisation().catch(() => null);
    if (signedIn) return setState({ phase: "out", problem: signedIn, org: await org });
    if (!token.get()) return setState({ phase: "out", problem: "Not signed in.", org: await org });
    try {
      setState({ phase: "in", viewer: await me() });
    } catch (error) {
      const problem = /expired/i.test(error.message) ? "Token expired. Paste a fresh token to go on."
        : error.code === "UNAUTHENTICATED" ? `Not signed in: ${error.message}` : error.message;
      setState({ phase: "out", problem, org: await org });
    }
  };
  useEffect(() => { finishSignIn().then(check); }, []);

  if (state.phase === "checking") return html`<p class="loading">Checking your token…</p>`;
  if (state.phase === "out") {
    return html`<${SignIn} problem=${state.problem} org=${state.org} onToken=${(value) => { token.set(value); check(); }} />`;
  }
  const taskId = decodeURIComponent(location.pathname.replace(/^\/inspect\/?/, ""));
  const session = /^session\/(.+)$/.exec(taskId);
  const page = session ? html`<${SessionPage} id=${session[1]} />`
    : taskId === "usage" ? html`<${UsagePage} />`
    : taskId === "compare" ? html`<${ComparePage} />`
    : taskId ? html`<${TaskPage} id=${taskId} viewer=${state.viewer} />` : html`<${TaskList} />`;
  return html`<${Header} viewer=${state.viewer} onSignOut=${() => { signOut(); check(); }} />
    ${page}`;
}

takeTokenFromFragment();
render(html`<${App} />`, document.getElementById("app"));
