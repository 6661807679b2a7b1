// The one way the inspector reads: POST /graphql with the viewer's own token, kept in sessionStorage.
const KEY = "agentlog.token";

export function takeTokenFromFragment() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get("token");
  if (token) {
    sessionStorage.setItem(KEY, token);
    history.replaceState(null, "", location.pathname + location.search);
  }
}

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value.trim().replace(/^Bearer\s+/i, "")),
  clear: () => sessionStorage.removeItem(KEY),
};

export class GraphQLError extends Error {
  constructor(error) {
    super(error.message);
    this.code = (error.extensions && error.extensions.code) || "INTERNAL";
  }
}

export async function graphql(query, variables = {}) {
  const headers = { "Content-Type": "application/json", Accept: "application/json" };
  const bearer = token.get();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const response = await fetch("/graphql", { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  const body = await response.json();
  if (body.errors && body.errors.length) throw new GraphQLError(body.errors[0]);
  return body.data;
}
