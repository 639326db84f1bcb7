"""Entrypoints: wiring, the CLI and the ASGI app. They import adapters and booking_core."""
