"""``Argon2Hasher``: the ``PasswordHasher`` port with argon2-cffi, argon2id.

The defaults are argon2-cffi's, RFC 9106's second recommended choice (3 passes over
64 MiB, 4 lanes: under 0.2 s a hash on the 2-core test machine). A hash carries its own salt and
parameters (``$argon2id$v=19$m=65536,t=3,p=4$...``), so raising them later leaves old
hashes readable, and ``needs_rehash`` says which to replace at the next sign-in.
"""

from __future__ import annotations

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from argon2.profiles import RFC_9106_LOW_MEMORY


class Argon2Hasher:
    """argon2id password hashes; lower the costs only in tests."""

    def __init__(
        self,
        *,
        time_cost: int = RFC_9106_LOW_MEMORY.time_cost,
        memory_cost: int = RFC_9106_LOW_MEMORY.memory_cost,
        parallelism: int = RFC_9106_LOW_MEMORY.parallelism,
    ) -> None:
        self._hasher = PasswordHasher(
            time_cost=time_cost,
            memory_cost=memory_cost,
            parallelism=parallelism,
            type=Type.ID,
        )

    def hash(self, password: str) -> str:
        """A new salted argon2id hash."""
        return self._hasher.hash(password)

    def verify(self, password_hash: str, password: str) -> bool:
        """True when ``password`` matches; False when it does not or the hash is unreadable."""
        try:
            return self._hasher.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, password_hash: str) -> bool:
        """True when the hash was made with other parameters (or is not argon2id at all)."""
        try:
            return self._hasher.check_needs_rehash(password_hash)
        except (InvalidHashError, ValueError):
            return True
