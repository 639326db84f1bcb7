"""``uvicorn entrypoints.asgi:app``: the application configured from the environment."""

from entrypoints.web import build_app

app = build_app()
