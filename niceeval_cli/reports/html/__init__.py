"""The self-contained HTML report (reports.md): one file, no network, opens from disk.

Jinja2 renders the page with autoescape on; the page's own small script and stylesheet are
inlined and allowed by their hashes in a Content-Security-Policy that forbids loading anything
else. Attempt details travel once as JSON in a `<script type="application/json">` block,
escaped so that no `</script>` (or `<!--`) in the data can end it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from ...app.report import ReportData
from .._safe import visible
from ._model import Page, build_page
from ._words import MARKS, slug

__all__ = ["embed_json", "render_page", "render_report"]

_TEMPLATES = resources.files(__package__) / "templates"
# Lone surrogates cannot be written as UTF-8; in JSON they travel as \\uXXXX escapes instead.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def _shown(value: Any) -> Any:
    """Every `{{ value }}` of the page as the terminal shows it: controls and bidi overrides escaped
    (`\\u202e`), so a case id cannot display reversed. Our own markup (Markup) is left as written."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value, None)
    return value


@lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True), trim_blocks=False,
                      finalize=_shown)
    env.policies["json.dumps_kwargs"] = {"sort_keys": False}
    env.filters["slug"] = slug  # a word's CSS class / filter value, as the attempts' `state_slug`
    return env


@cache
def _asset(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _json_escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    return _JSON_ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _finite(value: Any) -> Any:
    """NaN and infinities are not JSON: they travel as text ("nan", "inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def embed_json(value: Any) -> str:
    """JSON safe inside a `<script type="application/json">` element and as UTF-8."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    except ValueError:  # a non-finite float somewhere: rare, so only then walk the whole value
        text = json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), default=str)
    return _JSON_UNSAFE.sub(_json_escape, text)


def content_security_policy(script: str, css: str) -> str:
    """Load nothing; run only this page's own inline script; style only with its own sheet."""
    return (
        "default-src 'none'; "
        f"script-src {_hash(script)}; style-src {_hash(css)}; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; object-src 'none'; "
        "frame-src 'none'; worker-src 'none'; manifest-src 'none'; form-action 'none'; base-uri 'none'"
    )


def render_page(page: Page, *, store: str = "") -> str:
    script, css = _asset("report.js"), _asset("report.css")
    template = _environment().from_string(_asset("report.html.j2"))
    html = template.render(
        page=page,
        marks=MARKS,
        csp=content_security_policy(script, css),
        css=Markup(css),  # our own files, not data: inserted as written (their hashes are in the CSP)
        script=Markup(script),
        payload=Markup(embed_json(page.payload)),
        store=store,
    )
    return _SURROGATE.sub("\ufffd", html)


def render_report(data: ReportData) -> str:
    """The whole report of one run as HTML text."""
    return render_page(build_page(data), store=str(data.store_path))
