"""What a write answers beside its data (resolvers/control/answers.py), in the response's top-level `extensions`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from strawberry.extensions import SchemaExtension

from resolvers.control import answers


class WriteAnswers(SchemaExtension):
    noted: dict[str, Any] | None = None

    def on_execute(self) -> Iterator[None]:
        with answers.collected() as noted:
            self.noted = noted
            yield

    def get_results(self) -> dict[str, Any]:
        return dict(self.noted) if self.noted else {}
