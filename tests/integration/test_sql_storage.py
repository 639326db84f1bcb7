"""What the SQL adapter promises beyond the repository contracts: the migrations build
exactly ``tables.py``, and a conflict leaves the unit of work usable. (How a late commit
is listed by change: ``test_change_order.py``.)"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from adapters.sql.tables import metadata
from booking_core.errors import ConflictError
from tests import factories as f


def test_migrations_build_exactly_the_tables_module(database):
    database.migrate()  # a second run has nothing to do
    with database.engine.connect() as connection:
        opts = {"compare_type": True, "include_object": _built_on(database.dialect)}
        context = MigrationContext.configure(connection, opts=opts)
        differences = [
            d
            for d in compare_metadata(context, metadata)
            if not (d[0] == "remove_table" and d[1].name == "alembic_version")
        ]
    assert differences == []


def _built_on(dialect: str) -> Callable[..., bool]:
    """Leaves out what ``tables.py`` builds on another dialect only (``ddl_if``)."""

    def include(schema_item: object, *_: object) -> bool:
        only_on = getattr(schema_item, "_ddl_if", None)
        return only_on is None or only_on.dialect in (None, dialect)

    return include


def test_a_conflict_leaves_the_unit_of_work_usable(database):
    first = f.customer("cmp_a", email="ada@example.com")
    with database.uow() as uow:
        uow.customers.add(first)
        uow.commit()
    other = f.customer("cmp_a", email="x@example.com")
    with database.uow() as uow:
        uow.customers.add(other)
        with pytest.raises(ConflictError) as caught:
            uow.customers.add(f.customer("cmp_a", email="ADA@example.com"))
        with pytest.raises(ConflictError):
            uow.customers.save(attrs.evolve(other, email="ada@example.com"))
        assert uow.customers.by_email("cmp_a", "ada@example.com") == first
        uow.commit()
    assert caught.value.message == "A customer with this email already exists."
    with database.uow() as uow:
        assert uow.customers.get("cmp_a", other.id) == other
