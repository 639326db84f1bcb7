"""Adapters: the technologies behind booking_core's ports (memory, SQL, HTTP, drive time)."""
