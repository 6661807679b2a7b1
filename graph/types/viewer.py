import strawberry


@strawberry.type(description="The caller, as the token says.")
class Viewer:
    id: str
    name: str | None
    tenant: str
    roles: list[str]
    holds_records: bool = strawberry.field(
        description="Whether the caller may hold work and release a hold: a person holding a role holdsRecords names."
    )
