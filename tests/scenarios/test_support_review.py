"""The seed's support-review scenario (seeds/000, authoring.md), without its judge item:
participation earns 5, one delivery is a gate, completion earns `max(0, 1 - seconds/180) × 50`
(an unavailable completion stays unavailable: not rankable, never 0), usage and runtime gates.

Each experiment in niceeval.toml drives the simulated support app into one situation."""

from __future__ import annotations

import pytest

SUPPORT_REVIEW = '''
"""A support-review adapter as the seed writes it, over a simulated support application."""

from dataclasses import dataclass

from niceeval_cli import Fact, Material, NumericMaterial, define_adapter
from niceeval_cli.expect import (
    Capture, at_least, at_most, count_where, define_context_match, define_material_match, equals,
    filter_where, map_each, map_value,
)


@dataclass(frozen=True)
class Speech:
    actor_id: str
    text: str
    delivered: bool
    model_origin: str  # "verified" | "unknown"


@dataclass(frozen=True)
class SupportFacts:
    speeches: Material
    completion: Fact


def actor_match(actor_id):
    return map_value("actorMatch", lambda speech: speech.actor_id, equals(actor_id))


def speech_material(match):
    return define_material_match(
        name="actor-speeches",
        read=lambda facts: facts.speeches,
        match=match,
        capture=Capture(max_items=1024, max_bytes=512 * 1024, max_nodes=65536, max_depth=32),
    )


def create_support_review(observe):
    adapter = define_adapter(
        name="support-review",
        create=observe,
        assertions=lambda check: {
            "said": lambda match: check(speech_material(match)),
            "speech_delivery": lambda selector, aggregate: check(define_context_match(
                name="speech-delivery",
                read=lambda facts: Fact.available(facts.speeches),
                match=filter_where(selector, map_each(lambda speech: speech.delivered, aggregate)),
            )),
        },
    )

    @adapter.define_score_eval(description="Support speech quality and task completion efficiency")
    def support_review(t):
        # Participation earns points; at least one delivery is a separate business gate.
        t.said(actor_match("agent")).score(5).label("Participation")
        t.speech_delivery(actor_match("agent"), count_where(equals(True), at_least(1))) \\
            .gate().label("At least one delivery")

        # Unknown retains its weight and is not a zero for non-completion.
        completion = t.facts.completion
        if completion.state == "unavailable":
            ratio = NumericMaterial.unavailable(completion.reason)
        elif completion.value["completed"]:
            ratio = max(0, 1 - completion.value["business_seconds"] / 180)
        else:
            ratio = 0
        t.score(ratio, weight=50).label("Completion duration")

        t.check(t.usage.total_tokens, at_most(10_000)).gate().label("Usage limit")
        t.check(t.elapsed_ms, at_most(30_000)).gate().label("Runtime limit")

    return adapter, support_review


async def observe_simulated_app(ctx):
    """Run the simulated app until the task ends or the observation deadline passes."""
    situation = ctx.experiment.options["situation"]
    agent_delivered = situation != "undelivered"
    speeches = [
        Speech("customer", "My parcel never arrived.", True, "unknown"),
        Speech("agent", "Sorry to hear that, let me check.", agent_delivered, "verified"),
        Speech("agent", "A replacement ships today.", agent_delivered, "verified"),
    ]
    if situation == "silent-agent":
        speeches = speeches[:1]
    material = Material.complete(speeches)
    if situation == "speech-log-partial":
        material = Material.partial(speeches[:1], "speech-log-truncated")
    seconds = ctx.experiment.options.get("seconds", 36)
    if situation == "unobserved":
        completion = Fact.unavailable("observation-deadline-passed")
    elif situation == "unfinished":
        completion = Fact.available({"completed": False, "observation_end_id": "obs-9"})
    else:
        completion = Fact.available({"completed": True, "event_id": "ev-1", "business_seconds": seconds})
    if situation != "usage-unreported":
        ctx.record_usage(input_tokens=ctx.experiment.options.get("input_tokens", 1200), output_tokens=300)
    return SupportFacts(speeches=material, completion=completion)
'''

EVAL_MODULE = """
from support_review import create_support_review, observe_simulated_app

adapter, support_review = create_support_review(observe_simulated_app)
"""

SITUATIONS = {
    "resolved": "",
    "slow": "seconds = 270",
    "exactly-180s": "seconds = 180",
    "unfinished": "",
    "unobserved": "",
    "undelivered": "",
    "silent-agent": "",
    "speech-log-partial": "",
    "usage-unreported": "",
    "usage-over-limit": "input_tokens = 20000",
}


@pytest.fixture(scope="module")
def review(tmp_path_factory, forget_project):
    """One run over every situation; returns {situation: (attempt, {label: result})} and the run."""

    from tests.support.project import Project

    project = Project(tmp_path_factory.mktemp("support") / "proj", in_process=True)
    toml = "".join(
        f'[experiments."{name}".options]\nsituation = "{name}"\n{extra}\n' for name, extra in SITUATIONS.items()
    )
    project.write("niceeval.toml", toml)
    project.write("support_review.py", SUPPORT_REVIEW)
    project.write("evals/support/review.py", EVAL_MODULE)
    run = project.run()
    attempts = {a["experiment_id"]: a for a in project.attempts()}
    results: dict[str, dict[str, dict]] = {}
    for row in project.assertions():
        results.setdefault(row["experiment_id"], {})[row["label"]] = row
    summary = project.run("--dry")  # plan only: every slot reused
    forget_project(project)
    return run, attempts, results, summary


def test_the_eval_id_follows_the_module_path(review):
    _, attempts, _, _ = review
    assert {a["eval_id"] for a in attempts.values()} == {"support/review"}
    assert set(attempts) == set(SITUATIONS)


def test_resolved_support_scores_participation_plus_completion_ratio(review):
    _, attempts, results, _ = review
    attempt, rows = attempts["resolved"], results["resolved"]
    assert (attempt["state"], attempt["gate"]) == ("scored", "passed")
    assert attempt["score"] == 45  # 5 + (1 - 36/180) × 50
    assert attempt["max_score"] == 55
    assert attempt["unavailable_weight"] == 0
    assert rows["Participation"]["contribution"] == 5
    assert rows["Participation"]["role"] == "score"
    assert rows["At least one delivery"]["role"] == "gate"
    assert rows["At least one delivery"]["state"] == "matched"
    completion = rows["Completion duration"]
    assert (completion["state"], completion["measurement"], completion["contribution"]) == ("measured", 0.8, 40)
    assert rows["Usage limit"]["state"] == "matched"
    assert rows["Runtime limit"]["state"] == "matched"
    assert (attempt["input_tokens"], attempt["output_tokens"]) == (1200, 300)


@pytest.mark.parametrize("situation", ["slow", "exactly-180s", "unfinished"])
def test_a_slow_or_unfinished_completion_is_a_real_zero(review, situation):
    _, attempts, results, _ = review
    attempt, completion = attempts[situation], results[situation]["Completion duration"]
    assert completion["state"] == "measured"
    assert completion["measurement"] == 0
    assert completion["contribution"] == 0
    assert (attempt["state"], attempt["score"], attempt["max_score"]) == ("scored", 5, 55)


def test_an_unavailable_completion_keeps_its_weight_and_is_never_zero(review):
    _, attempts, results, _ = review
    attempt, completion = attempts["unobserved"], results["unobserved"]["Completion duration"]
    assert (completion["state"], completion["reason"]) == ("unavailable", "observation-deadline-passed")
    assert completion["contribution"] is None
    assert completion["weight"] == 50
    assert attempt["state"] == "unrankable"
    assert "observation-deadline-passed" in attempt["reason"]
    assert attempt["score"] == 5  # earned so far, not a complete score
    assert attempt["max_score"] == 55
    assert attempt["unavailable_weight"] == 50
    assert attempt["gate"] == "passed"


def test_undelivered_speech_fails_the_gate_but_keeps_earned_points(review):
    _, attempts, results, _ = review
    attempt, rows = attempts["undelivered"], results["undelivered"]
    assert rows["Participation"]["state"] == "matched"  # all speech counts, delivered or not
    assert rows["At least one delivery"]["state"] == "mismatched"
    assert (attempt["state"], attempt["gate"], attempt["score"]) == ("scored", "failed", 45)


def test_a_silent_agent_earns_nothing_and_fails_the_delivery_gate(review):
    _, attempts, results, _ = review
    attempt, rows = attempts["silent-agent"], results["silent-agent"]
    assert rows["Participation"]["state"] == "mismatched"
    assert rows["Participation"]["contribution"] == 0
    assert rows["At least one delivery"]["state"] == "mismatched"
    assert (attempt["state"], attempt["gate"], attempt["score"]) == ("scored", "failed", 40)


def test_a_partial_speech_log_leaves_participation_and_delivery_unknown(review):
    _, attempts, results, _ = review
    attempt, rows = attempts["speech-log-partial"], results["speech-log-partial"]
    assert (rows["Participation"]["state"], rows["Participation"]["reason"]) == ("unavailable", "speech-log-truncated")
    assert rows["At least one delivery"]["state"] == "unavailable"
    assert attempt["state"] == "unrankable"
    assert attempt["gate"] == "unavailable"
    assert attempt["unavailable_weight"] == 5


def test_unreported_usage_makes_the_usage_gate_unavailable(review):
    _, attempts, results, _ = review
    attempt, usage = attempts["usage-unreported"], results["usage-unreported"]["Usage limit"]
    assert (usage["state"], usage["reason"]) == ("unavailable", "usage-unreported")
    assert (attempt["state"], attempt["gate"], attempt["score"]) == ("scored", "unavailable", 45)
    assert attempt["input_tokens"] is None


def test_usage_over_the_limit_fails_its_gate(review):
    _, attempts, results, _ = review
    assert results["usage-over-limit"]["Usage limit"]["state"] == "mismatched"
    assert attempts["usage-over-limit"]["gate"] == "failed"
    assert attempts["usage-over-limit"]["score"] == 45


def test_the_run_exits_1_for_the_failed_gates(review):
    run, _, _, _ = review
    assert run.exit_code == 1


def test_the_summary_never_shows_an_unavailable_completion_as_a_complete_score(review):
    run, _, _, _ = review
    unobserved = [line for line in run.stdout.splitlines() if "unobserved" in line]
    assert unobserved
    assert any("not rankable" in line and "50" in line for line in unobserved), unobserved
    assert not any("5/55" in line or "0/55" in line for line in unobserved)


def test_assertions_point_at_the_adapter_module_that_defines_the_test(review):
    _, _, results, _ = review
    row = results["resolved"]["Participation"]
    assert row["source_file"].endswith("support_review.py")
    assert isinstance(row["source_line"], int)


def test_a_second_run_reuses_everything_decided(review):
    _, _, _, dry = review
    assert dry.exit_code == 0
    reused = [line for line in dry.stdout.splitlines() if line.startswith("reuse")]
    executing = [line for line in dry.stdout.splitlines() if line.startswith("execute")]
    # unrankable and gate-unavailable attempts are never adopted
    assert len(executing) == 3
    assert all(s in " ".join(executing) for s in ("unobserved", "speech-log-partial", "usage-unreported"))
    assert len(reused) == len(SITUATIONS) - 3
