"""The server-rendered pages: sign-in, the admin workspace (``/admin``) and the crew portal
(``/crew``), which take the company from the signed-in user (docs/web.md).

Jinja2 templates (autoescaped), one stylesheet served by the app, sessions in a signed
cookie, a CSRF token on every form, sign-in attempts throttled per email and address.
"""

from adapters.web.deps import WebDeps
from adapters.web.routes import web_routes
from adapters.web.sessions import SessionCodec
from adapters.web.throttle import SignInThrottle

__all__ = ["SessionCodec", "SignInThrottle", "WebDeps", "web_routes"]
