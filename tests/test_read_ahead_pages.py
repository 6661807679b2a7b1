"""A list field's page is read ahead whether `first` and `after` come as variables or as literals in the query."""

from __future__ import annotations

from strawberry.types.nodes import SelectedField

from graph.fast.plan import page_of
from resolvers.read.pages import Page


def selected(name: str, **arguments: object) -> SelectedField:
    return SelectedField(name=name, directives={}, arguments=arguments, selections=[])


def test_a_literal_page_is_read_as_a_variable_is():
    assert page_of(selected("record", first="5000", after="120")) == page_of(selected("record", first=5000, after=120))
    assert page_of(selected("record", first="5000")) == Page(5000, None)
    assert page_of(selected("children", first="50")) == Page(50, None)


def test_a_page_that_cannot_be_read_ahead_is_left_to_its_field():
    assert page_of(selected("record", first="5001")) is None
    assert page_of(selected("children", first="50", after="3f1c")) is None
