"""Alembic migrations of the SQL schema; ``Database.migrate()`` applies them."""
