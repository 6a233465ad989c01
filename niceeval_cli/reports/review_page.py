"""`niceeval review`'s page: self-contained, escaping every string, loading nothing else.

Its script and style are inline and allowed by hash in a Content-Security-Policy that loads
nothing from elsewhere (the report's, with the page's own origin allowed for its label writes);
every string reaches it as JSON in a `<script type="application/json">` block (escaped as the
report's) and is put on the page by the script as text, never as markup, with controls and bidi
overrides shown escaped (`\\u202e`) from the report's own table, so no eval id, reply or comment
displays reversed or hidden.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from markupsafe import escape

from .html import SAFE_TEXT, content_security_policy, embed_json


def _asset(name: str) -> str:
    return (resources.files("niceeval_cli.reports.html") / "templates" / name).read_text(encoding="utf-8")


def page_html(run_id: str, items: list[dict[str, Any]], token: str) -> str:
    """The page: data as escaped JSON in a script block, the token in a meta tag, our script and
    style inline and allowed by hash."""
    script, css = _asset("safe_text.js") + _asset("review.js"), _asset("review.css")
    data = embed_json({"run": run_id, "items": items, "safe": SAFE_TEXT})
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_csp(content_security_policy(script, css))}\">"
        f"<meta name=\"niceeval-token\" content=\"{escape(token)}\">"
        f"<title>NiceEval review · run {escape(run_id)}</title><style>{css}</style></head><body>"
        f"<script type=\"application/json\" id=\"review-data\">{data}</script>"
        "<main id=\"app\"><p>Loading…</p></main>"
        f"<script>{script}</script></body></html>"
    )


def _csp(policy: str) -> str:
    # The page posts its labels back to itself: the report's policy, with its own origin allowed.
    return policy.replace("connect-src 'none'", "connect-src 'self'")


__all__ = ["page_html"]
