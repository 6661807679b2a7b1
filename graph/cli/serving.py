"""The app as `agentlog serve` runs it in each server process: settings read once and checked, logging set up, then
the app that keeps them."""

from __future__ import annotations

from starlette.applications import Starlette

from graph.http import logs
from graph.app import create_app
from models import settings


def served_app() -> Starlette:
    found = settings.load()
    logs.configure(found.log_format, found.log_level)
    return create_app(found)
