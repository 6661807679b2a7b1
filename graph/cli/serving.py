"""The app as `agentlog serve` runs it in each server process: settings checked, logging set up, then the app."""

from __future__ import annotations

from starlette.applications import Starlette

from graph.http import logs
from graph.app import create_app
from models import settings


def served_app() -> Starlette:
    current = settings.current()
    logs.configure(current.log_format, current.log_level)
    return create_app()
