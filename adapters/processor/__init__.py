"""Card-processor adapters: webhook events read into the core's ingest commands."""
