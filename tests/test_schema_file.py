from pathlib import Path

from graph.api.schema import export


def test_schema_graphql_is_current():
    on_disk = (Path(__file__).parent.parent / "schema.graphql").read_text(encoding="utf-8")
    assert on_disk == export(), "schema.graphql is stale: run `agentlog schema > schema.graphql`"
