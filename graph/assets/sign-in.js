// "Sign in with your organisation": the OpenID Connect authorization-code flow with PKCE (RFC 7636), written with
// WebCrypto and fetch. The provider's ID token becomes the tab's token (sessionStorage, shared by the inspector
// and GraphiQL), is refreshed before it expires, and is forgotten on sign-out. Both pages come back to
// /inspect from the provider, the one redirect URI to register.
import { token } from "./api.js";

const PENDING = "agentlog.sign-in";
const REFRESH = "agentlog.refresh";
const REFRESH_BEFORE_S = 60;
let config = null;
let timer = null;

const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
  .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const random = (size) => base64url(crypto.getRandomValues(new Uint8Array(size)));
const claimsOf = (jwt) => JSON.parse(atob(jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
const redirectUri = () => `${location.origin}/inspect`;

// The provider this server trusts, or null when people sign in by pasting a token only.
export async function organisation() {
  if (config === null) {
    const answer = await fetch("/inspect/identity.json", { headers: { Accept: "application/json" } });
    const found = answer.ok ? await answer.json() : {};
    config = found.issuer && found.clientId ? found : false;
  }
  return config || null;
}

async function discovery(issuer) {
  const answer = await fetch(`${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`);
  if (!answer.ok) throw new Error(`The organisation's sign-in service did not answer (${answer.status}).`);
  return answer.json();
}

export async function signInWithOrganisation(returnTo = location.pathname + location.search) {
  const { issuer, clientId } = await organisation();
  const provider = await discovery(issuer);
  const verifier = random(48);
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const state = random(16);
  const nonce = random(16);
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, nonce, returnTo }));
  const offline = (provider.scopes_supported || []).includes("offline_access") ? " offline_access" : "";
  const query = new URLSearchParams({
    response_type: "code", client_id: clientId, redirect_uri: redirectUri(), scope: `openid profile email${offline}`,
    state, nonce, code_challenge: challenge, code_challenge_method: "S256",
  });
  location.assign(`${provider.authorization_endpoint}?${query}`);
}

async function tokenRequest(form) {
  const { issuer } = await organisation();
  const provider = await discovery(issuer);
  const answer = await fetch(provider.token_endpoint, {
    method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
    body: new URLSearchParams(form),
  });
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(body.error_description || body.error || `The sign-in was refused (${answer.status}).`);
  return body;
}

function keep(answer) {
  if (answer.id_token) token.set(answer.id_token);
  if (answer.refresh_token) sessionStorage.setItem(REFRESH, answer.refresh_token);
  scheduleRefresh();
}

// On /inspect?code=…&state=…, back from the provider: trade the code (and the PKCE verifier) for tokens, then go
// back where the sign-in started. Returns a problem to show, or null.
export async function finishSignIn() {
  const params = new URLSearchParams(location.search);
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || "null");
  if (!pending || !(params.has("code") || params.has("error"))) {
    scheduleRefresh();
    return null;
  }
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, "", location.pathname);
  if (params.get("state") !== pending.state) return "The sign-in answer was not for this tab; sign in again.";
  if (params.has("error")) return `The organisation's sign-in said: ${params.get("error_description") || params.get("error")}`;
  try {
    const { clientId } = await organisation();
    const answer = await tokenRequest({
      grant_type: "authorization_code", code: params.get("code"), redirect_uri: redirectUri(),
      client_id: clientId, code_verifier: pending.verifier,
    });
    if (!answer.id_token || claimsOf(answer.id_token).nonce !== pending.nonce) {
      return "The organisation's sign-in gave no identity for this tab; sign in again.";
    }
    keep(answer);
  } catch (error) {
    return error.message;
  }
  if (pending.returnTo && pending.returnTo !== location.pathname) location.replace(pending.returnTo);
  return null;
}

async function refresh() {
  const refreshToken = sessionStorage.getItem(REFRESH);
  const { clientId } = (await organisation()) || {};
  if (!refreshToken || !clientId) return;
  try {
    keep(await tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }));
  } catch {
    sessionStorage.removeItem(REFRESH);
  }
}

// Refreshes the token a minute before it expires (or halfway through a shorter life), while there is a refresh
// token to do it with.
function scheduleRefresh() {
  clearTimeout(timer);
  const current = token.get();
  if (!current || !sessionStorage.getItem(REFRESH)) return;
  let claims;
  try { claims = claimsOf(current); } catch { return; }
  const now = Date.now() / 1000;
  const life = claims.exp - (claims.iat || now);
  const at = claims.exp - Math.min(REFRESH_BEFORE_S, life / 2);
  timer = setTimeout(refresh, Math.max(0, (at - now) * 1000));
}

export function signOut() {
  clearTimeout(timer);
  sessionStorage.removeItem(REFRESH);
  sessionStorage.removeItem(PENDING);
  token.clear();
}
