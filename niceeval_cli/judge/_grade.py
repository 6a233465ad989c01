"""The JudgeService: the default grader (`openai-compatible`); grades JudgeMatches and
preflights judge endpoints, one per run.

It never raises for a grading problem: every outcome is a JudgeGrade whose state is
`measured`, `unavailable` (the evidence could not be obtained) or `errored` (the judge answered
something unusable, or the evaluator itself failed). Everything it returns for storage is
redacted (the key value never appears) and trimmed.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from .._gateway import ResolvedHeaders, resolve_headers
from .._httpx import httpx
from .._redact import redact, safe_json, trim_text
from .._secrets import header_secret_problem, secret_problem_text
from .._states import AssertionState, ErroredReason, UnavailableReason
from ..expect import Fact, Material, NumericMaterial
from ..expect._facts import unavailable_reason  # engine helpers below are not in expect's pinned user API
from ..expect._json import canonical_json, to_jsonable  # the JSON form the prompt and the cache key use
from ..expect._judge import JudgeMatch  # the judge match's definition, which grading reads
from ._client import Backoff, CallOutcome, Endpoint, call, open_endpoint, probe
from ._grader import DEFAULT_GRADER, JudgeGrade, PreflightFailure, register_grader
from ._parse import InvalidResponse, parse_grade, usage_tokens
from ._prompts import request_body

if TYPE_CHECKING:
    from ..config import JudgeSettings

#: Cap on the grading material kept as an assertion's evidence.
EVIDENCE_MAX_BYTES = 64 * 1024
#: Cap on a judge assertion's stored explanation (the judge's reasoning or a failure detail).
EXPLANATION_MAX_BYTES = 64 * 1024


_PreflightKey = tuple[Any, str, str, tuple[tuple[str, str], ...]]


class JudgeService:
    """Grades judge assertions for a whole run through bounded, shared endpoint clients
    (a `Grader`, registered as the default one)."""

    def __init__(
        self, *, transport: httpx.AsyncBaseTransport | None = None, backoff: Backoff | None = None,
    ) -> None:
        self._transport = transport
        self._backoff = backoff or Backoff()
        self._endpoints: dict[tuple[str, int], Endpoint] = {}
        self._preflights: dict[_PreflightKey, asyncio.Future[PreflightFailure | None]] = {}
        self.total_tokens = 0  # judge tokens of every grade made by this service
        self.total_cost_usd: float | None = None  # reported judge cost, None while none was reported

    # ----------------------------------------------------------------- resolution
    def resolve_problem(self, settings: JudgeSettings | None) -> str | None:
        """Why grading cannot even start (no network call is made), or None."""
        if settings is None or not (settings.model or "").strip():
            return UnavailableReason.JUDGE_MODEL_UNRESOLVED
        if not _key(settings):
            return UnavailableReason.JUDGE_KEY_UNRESOLVED
        return None

    def _endpoint(self, settings: JudgeSettings) -> Endpoint:
        size = max(1, int(settings.max_concurrency))
        key = (settings.base_url, size)
        endpoint = self._endpoints.get(key)
        if endpoint is None:
            endpoint = self._endpoints[key] = open_endpoint(settings.base_url, size, self._transport)
        return endpoint

    # ------------------------------------------------------------------ preflight
    async def preflight(self, settings: JudgeSettings) -> PreflightFailure | None:
        """Check the endpoint once per distinct (model, base_url, api_key_env). Returns None when
        nothing was refused, or when `resolve_problem` already explains why no call is made."""
        if self.resolve_problem(settings) is not None:
            return None
        problem = header_secret_problem(_key(settings))
        if problem is not None:
            return PreflightFailure(settings, self._endpoint(settings).url,
                                    secret_problem_text(settings.api_key_env, problem, what="judge key"))
        extra = _headers(settings)
        if extra.missing:
            return PreflightFailure(settings, self._endpoint(settings).url, _missing_headers_text(extra))
        for value in extra.secrets:
            problem = header_secret_problem(value)
            if problem is not None:  # a header secret that cannot be sent: never sent, never shown
                return PreflightFailure(settings, self._endpoint(settings).url,
                                        "a variable named in [judge] headers holds a value that cannot be a "
                                        f"header ({problem})")
        key: _PreflightKey = (settings.model, settings.base_url, settings.api_key_env, settings.headers)
        future = self._preflights.get(key)
        if future is None:
            future = self._preflights[key] = asyncio.ensure_future(self._probe(settings))
        return await asyncio.shield(future)

    async def _probe(self, settings: JudgeSettings) -> PreflightFailure | None:
        endpoint = self._endpoint(settings)
        secret = _key(settings)
        extra = _headers(settings)
        probing = asyncio.ensure_future(probe(endpoint, str(settings.model), secret, settings.timeout_ms / 1000,
                                              tuple(extra.headers.items())))
        await asyncio.sleep(0)  # the probe is on its way: open the other lanes while it waits
        endpoint.open_lanes()
        cause = await probing
        if cause is None:
            return None
        return PreflightFailure(settings, endpoint.url, redact(cause, [secret, *extra.secrets]))

    # -------------------------------------------------------------------- grading
    async def grade(self, match: JudgeMatch, material: object, settings: JudgeSettings) -> JudgeGrade:
        """Grade `material` with `match`'s judge; never raises for a grading problem."""
        secret = _key(settings) if settings is not None else ""
        extra = _headers(settings) if settings is not None else ResolvedHeaders({}, [], {})
        try:
            result = await self._grade(match, material, settings, secret, extra)
        except Exception as exc:  # the evaluator's own failure, kept as `errored`
            detail = redact(f"{type(exc).__name__}: {exc}", [secret, *extra.secrets])
            result = JudgeGrade(AssertionState.ERRORED, None, ErroredReason.JUDGE_EVALUATOR_ERROR,
                                _bounded(f"judge evaluator failed: {detail}"), None, 0, None)
        self.total_tokens += result.tokens
        if result.cost_usd is not None:
            self.total_cost_usd = (self.total_cost_usd or 0.0) + result.cost_usd
        return result

    async def _grade(self, match: JudgeMatch, material: object, settings: JudgeSettings,
                     secret: str, extra: ResolvedHeaders) -> JudgeGrade:
        reason = unavailable_reason(material)
        if reason is None and isinstance(material, Material) and material.state == "partial":
            reason = material.reason or "partial"
        if reason is not None:
            return _unavailable(reason, f"{match.describe()}: the material is unavailable ({reason})")
        value = _material_json(material)
        evidence = safe_json(value, secrets=[secret], max_bytes=EVIDENCE_MAX_BYTES)
        problem = self.resolve_problem(settings)
        if problem is not None:
            return _unavailable(problem, _problem_text(problem, settings), evidence)
        key_problem = header_secret_problem(secret)
        if key_problem is not None:  # the preflight refuses it first; never send or echo it
            return _unavailable(UnavailableReason.JUDGE_KEY_UNRESOLVED,
                                secret_problem_text(settings.api_key_env, key_problem, what="judge key"), evidence)
        if extra.missing:  # the preflight refuses it first; used alone, each grade says so
            return _unavailable(UnavailableReason.JUDGE_KEY_UNRESOLVED, _missing_headers_text(extra), evidence)
        size = len(canonical_json(value).encode("utf-8", "surrogatepass"))  # as its stored input counts it
        if size > match.max_material_bytes:
            return _unavailable(
                UnavailableReason.MATERIAL_CAPACITY_EXCEEDED,
                f"{match.describe()}: the material is {size} bytes of JSON, over "
                f"max_material_bytes={match.max_material_bytes}; nothing was sent to the judge",
                evidence,
            )
        body = request_body(match, value, str(settings.model))
        sampling = {name: getattr(settings, name) for name in ("temperature", "seed")
                    if getattr(settings, name) is not None}
        body.update(sampling)
        outcome = await call(
            self._endpoint(settings), body, secret, timeout_s=settings.timeout_ms / 1000,
            max_retries=settings.max_retries, backoff=self._backoff, extra=tuple(extra.headers.items()),
        )
        secrets = [secret, *extra.secrets]
        audited: dict[str, Any] = {"request": {"model": body["model"], "messages": body["messages"], **sampling},
                                   "response": outcome.body}
        if outcome.cost_usd is not None:
            audited["cost_usd"] = outcome.cost_usd
        audit = safe_json(audited, secrets=secrets, max_bytes=match.max_audit_bytes)
        return _settle(match, outcome, audit, evidence, secrets)

    async def aclose(self) -> None:
        """Close every endpoint client (idempotent)."""
        endpoints, self._endpoints = list(self._endpoints.values()), {}
        for endpoint in endpoints:
            await endpoint.aclose()


def _key(settings: JudgeSettings) -> str:
    return os.environ.get(settings.api_key_env, "")


def _headers(settings: JudgeSettings) -> ResolvedHeaders:
    """`[judge] headers` with their `env:` references read now (never kept past the request)."""
    return resolve_headers(settings.headers)


def _missing_headers_text(extra: ResolvedHeaders) -> str:
    return (f"environment variable(s) unset or empty ({extra.missing_text()} of the judge's headers); "
            "set them in the environment or in .env beside niceeval.toml; no request was sent")


def _material_json(material: object) -> Any:
    if isinstance(material, (Fact, NumericMaterial)):
        return _material_json(material.value)
    if isinstance(material, Material):
        return to_jsonable(list(material.items))
    return to_jsonable(material)


def _problem_text(problem: str, settings: JudgeSettings | None) -> str:
    if problem == UnavailableReason.JUDGE_MODEL_UNRESOLVED:
        return "no judge model is configured ([judge] model, the experiment's judge table or judge={...})"
    env = settings.api_key_env if settings is not None else "?"
    return f"the judge key variable {env} is unset or empty; no request was sent"


def _unavailable(reason: str, explanation: str, evidence: str | None = None) -> JudgeGrade:
    return JudgeGrade(AssertionState.UNAVAILABLE, None, str(reason), _bounded(explanation), None, 0, evidence)


def _bounded(text: str, secrets: str | list[str] = "") -> str:
    """Stored explanation text: redacted first, then cut to EXPLANATION_MAX_BYTES with a marker."""
    return trim_text(redact(text, [secrets] if isinstance(secrets, str) else secrets), EXPLANATION_MAX_BYTES)


def _settle(match: JudgeMatch, outcome: CallOutcome, audit: str, evidence: str, secret: list[str]) -> JudgeGrade:
    # Unreported or impossible usage (absent, negative, past 2**53) counts 0, like no call.
    tokens = (usage_tokens(outcome.body) or 0) if outcome.failure is None else 0
    if outcome.failure is not None:
        return JudgeGrade(AssertionState.UNAVAILABLE, None, str(outcome.failure),
                          _bounded(f"judge call failed: {outcome.detail}", secret), audit, tokens, evidence)
    try:
        parsed = parse_grade(outcome.body, match.choices)
    except InvalidResponse as exc:
        return JudgeGrade(AssertionState.ERRORED, None, str(ErroredReason.JUDGE_INVALID_RESPONSE),
                          _bounded(f"invalid judge response: {exc}", secret), audit, tokens, evidence,
                          cost_usd=outcome.cost_usd)
    measurement = float(match.choices[parsed.choice])
    reasoning = parsed.reasoning or "(the judge gave no reasoning)"
    replaced = sum(0xD800 <= ord(c) <= 0xDFFF for c in reasoning) if not reasoning.isascii() else 0
    return JudgeGrade(AssertionState.MEASURED, measurement, None,
                      _bounded(f"{parsed.choice}: {reasoning}", secret), audit, tokens, evidence, replaced,
                      outcome.cost_usd)


register_grader(DEFAULT_GRADER, JudgeService)
