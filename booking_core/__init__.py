"""booking_core: the pure domain of the booking service.

Pricing, the catalog, the quote state machine and the payment ledger, behind
repository ports. It imports attrs and the standard library only: no I/O, no
clock, no framework. See docs/architecture.md.
"""

__version__ = "0.1.0"
