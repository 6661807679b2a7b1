import strawberry

import models
from graph.types.enums import AgentLogging


@strawberry.type(description="An agent the kit registered: the roles it holds and who may read its transcripts.")
class Agent:
    name: str
    purpose: str | None
    roles: list[str]
    transcript_readers: list[str] = strawberry.field(
        description="Roles that may read its transcripts; empty means nobody, not even the roles it holds."
    )
    logging: AgentLogging

    @classmethod
    def of(cls, row: models.RegisteredAgent) -> "Agent":
        return cls(
            name=row.name,
            purpose=row.purpose,
            roles=list(row.roles or []),
            transcript_readers=list(row.transcript_readers or []),
            logging=AgentLogging(row.logging),
        )
