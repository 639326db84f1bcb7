"""In-memory repositories and unit of work: for tests, embedding and demos.

They honour the same contracts as the SQL adapters (the contract tests run against
both), including company scoping, optimistic versions, change stamps and rollback.
"""

from adapters.memory.uow import MemoryStore, MemoryUnitOfWork

__all__ = ["MemoryStore", "MemoryUnitOfWork"]
