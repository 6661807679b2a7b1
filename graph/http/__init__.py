"""HTTP beside GraphQL: the routes (`/v1/traces`, `/export`, the REST session transcript and its OpenAPI
document, the inspector's pages, `/healthz` and `/readyz`) and the middleware every request passes (the app's
settings in effect, body limit, CORS, request log, outages, provider keys), with the log set-up. It may import the
floors below `graph/` and `graph.api` only for the schema's context."""
