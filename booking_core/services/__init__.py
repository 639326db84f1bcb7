"""Use cases: plain functions taking a command and the ports they need."""
