"""Webhook adapters: resolvers for the URL policy and the HTTP sender (docs/webhooks.md)."""

from adapters.webhooks.resolver import StaticResolver, SystemResolver
from adapters.webhooks.sender import AttemptResult, Outcome, WebhookSender, retry_after_seconds

__all__ = [
    "AttemptResult",
    "Outcome",
    "StaticResolver",
    "SystemResolver",
    "WebhookSender",
    "retry_after_seconds",
]
