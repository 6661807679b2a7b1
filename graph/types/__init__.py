"""The strawberry types, one a file named after the GraphQL type it declares; types that refer to each other do so
lazily (`strawberry.lazy`). They may import `graph.api` (the context, guards), `graph.fast` and the floors below
`graph/`."""
