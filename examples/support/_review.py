"""The seed's support-review library, in Python: facts, domain matches, the adapter and its eval.

`create_support_review(observe)` takes the function that observes one support conversation of
your application and returns the adapter (with the `said` and `speech_delivery` assertions) and
the score-style evaluation. `review.py` plugs in the simulated application of `_app.py`.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from niceeval_cli import Adapter, EvalDefinition, Fact, Material, NumericMaterial, define_adapter
from niceeval_cli.expect import (
    BooleanMatch,
    Capture,
    at_least,
    at_most,
    count_where,
    define_context_match,
    define_material_match,
    equals,
    filter_where,
    map_each,
    map_value,
)


@dataclass(frozen=True)
class Speech:
    actor_id: str
    text: str
    delivered: bool
    model_origin: Literal["verified", "unknown"]


@dataclass(frozen=True)
class Completed:
    event_id: str
    business_seconds: float
    completed: Literal[True] = True


@dataclass(frozen=True)
class NotCompleted:
    observation_end_id: str
    completed: Literal[False] = False


Completion = Completed | NotCompleted


@dataclass(frozen=True)
class SupportFacts:
    speeches: Material[Speech]
    completion: Fact[Completion]


def actor_match(actor_id: str) -> BooleanMatch:
    return map_value("actor_match", lambda speech: speech.actor_id, equals(actor_id))


def speech_material(match: BooleanMatch) -> Any:
    return define_material_match(
        name="actor-speeches",
        read=lambda facts: facts.speeches,
        match=match,
        capture=Capture(max_items=1024, max_bytes=512 * 1024, max_nodes=65536, max_depth=32),
    )


class SupportReview(NamedTuple):
    adapter: Adapter
    evaluation: EvalDefinition


def _version(observe: Callable[..., Any]) -> str:
    """This library's source plus the observer's module: editing either reruns the eval."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    source = inspect.getsourcefile(observe)
    if source:
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()[:12]


def create_support_review(observe: Callable[..., Any]) -> SupportReview:
    def assertions(check: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
        def said(match: BooleanMatch) -> Any:
            return check(speech_material(match))

        def speech_delivery(selector: BooleanMatch, aggregate: BooleanMatch) -> Any:
            return check(define_context_match(
                name="speech-delivery",
                read=lambda facts: Fact.available(facts.speeches),
                match=filter_where(selector, map_each(lambda speech: speech.delivered, aggregate)),
            ))

        return {"said": said, "speech_delivery": speech_delivery}

    adapter = define_adapter(name="support-review", create=observe, assertions=assertions,
                             version=_version(observe))

    @adapter.define_score_eval(description="Support speech quality and task completion efficiency", judge=True)
    def evaluation(t: Any) -> None:
        # Participation earns points; at least one delivery is a separate business gate.
        t.said(actor_match("agent")).score(5).label("Participation")
        t.speech_delivery(actor_match("agent"), count_where(equals(True), at_least(1))) \
            .gate().label("At least one delivery")

        # Assess all speech; do not filter by delivery or model origin.
        t.closed_qa(speech_material(actor_match("agent")), "Is every utterance natural, complete, and clear?",
                    max_material_bytes=256 * 1024, max_audit_bytes=1024 * 1024) \
            .score(45).label("Expression quality")

        # Keep the formula visible; unknown retains its weight and is not a zero for non-completion.
        completion = t.facts.completion
        ratio: float | NumericMaterial
        if completion.state == "unavailable":
            ratio = NumericMaterial.unavailable(completion.reason)
        elif completion.value.completed:
            ratio = max(0, 1 - completion.value.business_seconds / 180)
        else:
            ratio = 0
        t.score(ratio, weight=50).label("Completion duration")

        usage = t.usage
        t.check(usage.total_tokens, at_most(10_000)).gate().label("Usage limit")
        t.check(t.elapsed_ms, at_most(30_000)).gate().label("Runtime limit")

    return SupportReview(adapter, evaluation)
