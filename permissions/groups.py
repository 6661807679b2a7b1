"""The field groups a field is declared in: the names access is decided in, not the decision."""

from __future__ import annotations

from enum import Enum


class Group(str, Enum):
    FIGURES = "figures"
    WORDS = "words"
    SENTENCES = "sentences"
    CONTENT = "content"
    TRANSCRIPT = "transcript"
