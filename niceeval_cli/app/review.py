"""`niceeval review`: a local page to label a run's assertions one at a time (judge-trust.md §3).

Served on 127.0.0.1 by Starlette + uvicorn, imported only here; the page itself is
reports/review_page.py's. A write must carry the per-session token the page was served with;
without it nothing is written. Only requests naming this machine in their Host header are
answered: a site whose name an attacker points at 127.0.0.1 (DNS rebinding) is its own origin
to the browser, and could otherwise read the page (the run's material and the token) and write.
"""

from __future__ import annotations

import hmac
import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import UsageError

ONLY = ("judge", "failed", "all")
_JUDGES = ("closed_qa", "factuality", "summarizes")
_FAILED = ("mismatched", "below", "errored", "unavailable")
TOKEN_HEADER = "x-niceeval-token"
#: The Host names the page answers to (any port): the address printed, and its usual name.
LOCAL_HOSTS = ("127.0.0.1", "localhost")
_SHAPE = ("expected a JSON object {attempt_id: text, key: text (or null: the whole attempt), value: number, "
          "comment?: text}: nothing was written")


@dataclass(frozen=True)
class ReviewSession:
    """What one `niceeval review` serves: the run, its items and the session's write token."""

    store_file: Path
    run_id: str
    items: list[dict[str, Any]]
    token: str


def load_session(store_file: Path, run_ref: str | None, only: str) -> ReviewSession:
    """The run's assertions to label (`--only judge` by default), with their earlier labels."""
    from ..comparison import shown_eval_id
    from ..store import Store
    from ..store.labels import scale_of

    if only not in ONLY:
        raise UsageError(f"--only {only!r} is not one of {', '.join(ONLY)}")
    with Store.open(store_file, readonly=True) as store:
        run = store.resolve_run(run_ref)
        items: list[dict[str, Any]] = []
        labels: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
        for row in store.labels(store.run_scope(run.id)):
            labels.setdefault((row["attempt_id"], row["assertion_key"]), []).append(
                {k: row[k] for k in ("value", "author", "comment", "created_at")})
        for attempt in store.attempts_for_run(run.id):
            for result in store.assertions_for_attempt(attempt.id):
                if only == "judge" and result.match_name not in _JUDGES:
                    continue
                if only == "failed" and result.state not in _FAILED:
                    continue
                items.append({
                    "attempt_id": attempt.id, "case_id": attempt.case_id,
                    "eval_id": shown_eval_id(attempt.eval_id, attempt.case_id),  # a case's id carries its case
                    "experiment_id": attempt.experiment_id, "key": result.key, "label": result.label,
                    "match": result.match_name, "state": result.state, "measurement": result.measurement,
                    "threshold": result.threshold, "explanation": result.explanation, "material": result.evidence,
                    "scale": list(scale_of(result.match_name, result.match_config)),
                    "labels": labels.get((attempt.id, result.key), []),
                })
    return ReviewSession(Path(store_file), run.id, items, secrets.token_urlsafe(32))


def record_label(session: ReviewSession, body: Any, token: str | None, author: str) -> tuple[int, dict[str, Any]]:
    """One click: (HTTP status, JSON answer). Refused without the session's token."""
    from ..store import LabelInput, Store, StoreError, StoreUnavailable
    from ..store.labels import checked_value

    if token is None or not hmac.compare_digest(token, session.token):
        return 403, {"error": "this page's session token is missing or wrong: nothing was written"}
    # Every field checked before anything is written: a key of the wrong type never becomes a label
    # of the whole attempt, a comment of the wrong type is never dropped from the label it came with.
    if (not isinstance(body, dict) or not isinstance(body.get("attempt_id"), str) or "key" not in body
            or not isinstance(body["key"], (str, type(None)))
            or not isinstance(body.get("comment"), (str, type(None)))):
        return 400, {"error": _SHAPE}
    value = body.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 400, {"error": "value must be a number on the scale"}
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float is on no scale
        number = math.inf
    try:
        with Store.open(session.store_file) as store:
            target = store.exact_label_target(body["attempt_id"], body["key"])
            stored = checked_value(target, number)
            (label_id,) = store.add_labels([LabelInput(target.attempt_id, target.assertion_key, stored, author,
                                                       body.get("comment") or None)])
    except StoreUnavailable as error:  # locked by a run beyond the busy timeout, disk full: try again
        return 503, {"error": str(error)}
    except StoreError as error:
        return 400, {"error": str(error)}
    return 200, {"id": label_id, "value": stored, "author": author}


def make_app(session: ReviewSession, author: str, html: str) -> Any:
    """The Starlette application: the page (`html`, reports/review_page.py), and the one write it accepts."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    async def page(request: Request) -> Response:
        # Never inside another page's frame (a frame's clicks would be that page's to trick): the
        # meta policy cannot say so, only a header can.
        return HTMLResponse(html, headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                                           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
                                           "Content-Security-Policy": "frame-ancestors 'none'"})

    async def label(request: Request) -> Response:
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested too deeply to read
            body = None
        # In a worker thread: a write waiting on a store a run holds must not stop the server
        # answering the page and the other tabs meanwhile.
        status, answer = await run_in_threadpool(record_label, session, body, request.headers.get(TOKEN_HEADER),
                                                 author)
        return JSONResponse(answer, status_code=status)

    return Starlette(routes=[Route("/", page), Route("/labels", label, methods=["POST"])],
                     middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(LOCAL_HOSTS),
                                            www_redirect=False)])


def serve(session: ReviewSession, author: str, html: str, port: int, announce: Any) -> None:
    """Serve until Ctrl-C (uvicorn's own handling ends the loop; then this returns)."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as error:
        sock.close()
        raise UsageError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({error.strerror or error}).") from None
    sock.listen(128)  # listening before the URL is printed: a request made at once waits, never refused
    announce(f"http://127.0.0.1:{sock.getsockname()[1]}/")
    config = uvicorn.Config(make_app(session, author, html), log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled: stopping is the normal end
        pass
    finally:
        sock.close()


__all__ = ["LOCAL_HOSTS", "ONLY", "TOKEN_HEADER", "ReviewSession", "load_session", "make_app", "record_label", "serve"]
