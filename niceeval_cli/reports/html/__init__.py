"""The self-contained HTML report (reports.md): one file, no network, opens from disk.

Jinja2 renders the page with autoescape on; the page's own small script and stylesheet are
inlined and allowed by their hashes in a Content-Security-Policy that forbids loading anything
else. Attempt details travel once as JSON in a `<script type="application/json">` block,
escaped so that no `</script>` (or `<!--`) in the data can end it.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from .._safe import visible
from ..data import ReportData
from . import _json
from ._model import SAFE_TEXT, Page, build_page
from ._words import MARKS, slug

__all__ = ["SAFE_TEXT", "embed_json", "render_chunks", "render_page", "render_report"]

_TEMPLATES = resources.files(__package__) / "templates"
# Lone surrogates cannot be written as UTF-8; in JSON they travel as \\uXXXX escapes instead.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


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


def embed_json(value: Any) -> str:
    """JSON safe inside a `<script type="application/json">` element and as UTF-8."""
    return _json.embed(value)


def content_security_policy(script: str, css: str) -> str:
    """Load nothing; run only this page's own inline script; style only with its own sheet."""
    return (
        "default-src 'none'; "
        f"script-src {_hash(script)}; style-src {_hash(css)}; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; object-src 'none'; "
        "frame-src 'none'; worker-src 'none'; manifest-src 'none'; form-action 'none'; base-uri 'none'"
    )


def render_page(page: Page, *, store: str = "") -> str:
    """The whole page as one text (tests, small runs); `render_chunks` writes it piece by piece."""
    return "".join(render_chunks(page, store=store))


def render_chunks(page: Page, *, store: str = "") -> Iterator[str]:
    """The page as Jinja2 renders it, piece by piece: the attempts' details stream through as
    they are read, so the page is never held whole."""
    script, css = _asset("safe_text.js") + _asset("report.js"), _asset("report.css")
    template = _environment().from_string(_asset("report.html.j2"))
    pieces = template.generate(
        page=page,
        marks=MARKS,
        csp=content_security_policy(script, css),
        css=Markup(css),  # our own files, not data: inserted as written (their hashes are in the CSP)
        script=Markup(script),
        payload=(Markup(chunk) for chunk in page.payload()),
        store=store,
    )
    for piece in pieces:
        yield _SURROGATE.sub("\ufffd", piece)


def render_report(data: ReportData) -> Iterator[str]:
    """The whole report of one run as HTML text, piece by piece (write them as they come)."""
    return render_chunks(build_page(data), store=str(data.store_path))
