"""GraphQL: the schema assembled from its parts, the query and subscription roots, the inputs, the per-request
context and its DataLoaders, field guards, errors and the view that answers before GraphQL runs; the mutations are
in `mutations/`, the types in `graph/types/`. It may import `graph.types`, `graph.fast`, `graph.http.errors` and every
floor below `graph/`."""
