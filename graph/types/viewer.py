import strawberry


@strawberry.type(description="The caller, as the token says.")
class Viewer:
    id: str
    name: str | None
    tenant: str
    roles: list[str]
