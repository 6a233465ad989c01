"""`niceeval run` at the repository root, on a fresh machine: no judge key, no network."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.support.examples import ExamplesProject, Run, copy_examples

POLICY_CASES = ("return-window", "refund-late", "shipping-time", "shipping-abroad", "warranty", "damaged",
                "gift-card", "unclear")
FIX_LINE = "judge items are unavailable (judge-key-unresolved): set the API key variable"


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ExamplesProject, ExamplesProject, Run]]:
    """One default run of a private copy of the examples (a whole examples run is seconds of CPU):
    the project it ran in, a copy of that project and its store for the checks that only read it,
    and the run. The check of a second run runs again where the first ran: a reused attempt is
    told by its fingerprint, which sees where the project is (in a copy it would run again)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        ran_in = copy_examples(tmp_path_factory.mktemp("examples"), monkeypatch)
        run = ran_in.run()
        read = tmp_path_factory.mktemp("examples-read") / "repo"
        shutil.copytree(ran_in.root, read)
        yield ran_in, ExamplesProject(read, monkeypatch), run


@pytest.fixture(scope="module")
def default_run(first_run: tuple[ExamplesProject, ExamplesProject, Run]) -> tuple[ExamplesProject, Run]:
    """The first run, to read: (the copy, the run)."""
    return first_run[1], first_run[2]


def test_the_default_run_needs_no_network_and_exits_1_because_two_switches_fail_their_gates(
        default_run: tuple[ExamplesProject, Run]) -> None:
    examples, run = default_run
    assert run.exit_code == 1, run.output
    assert FIX_LINE in run.output

    states = {(a["experiment_id"], a["eval_id"]): (a["state"], a["gate"]) for a in examples.query("attempts")}
    assert states == {
        ("quickstart", "quickstart/basics/greeting"): ("passed", None),
        ("quickstart", "quickstart/basics/refund_window"): ("errored", None),
        ("judged", "quickstart/basics/greeting"): ("passed", None),
        ("judged", "quickstart/basics/refund_window"): ("errored", None),
        ("support", "support/review"): ("unrankable", "passed"),
        ("support/unobserved-completion", "support/review"): ("unrankable", "passed"),
        ("npc_world", "npc_world/raid"): ("scored", "passed"),
        ("npc_world/fog", "npc_world/raid"): ("scored", "unavailable"),
        ("directions/success", "directions/scenario"): ("unrankable", "passed"),
        ("directions/unheard", "directions/scenario"): ("unrankable", "failed"),
        ("directions/player-moves", "directions/scenario"): ("unrankable", "failed"),
        ("directions/uncorrelated", "directions/scenario"): ("unrankable", "unavailable"),
        **{("datasets", f"datasets/policy[{case}]"): ("passed", None) for case in POLICY_CASES},
        **{("datasets", f"datasets/totals[o-{n}]"): ("passed", None) for n in range(1, 6)},
        ("agent_tools", "agent_tools/recovery"): ("scored", "passed"),
        ("agent_tools", "agent_tools/refunds/refund_flow"): ("passed", None),
        ("agent_tools", "agent_tools/refunds/shipping_question"): ("passed", None),
        ("agent_tools", "agent_tools/sessions"): ("passed", None),
        ("agent_tools/broken", "agent_tools/recovery"): ("scored", "passed"),
        ("agent_tools/broken", "agent_tools/refunds/refund_flow"): ("failed", None),
        ("agent_tools/broken", "agent_tools/refunds/shipping_question"): ("passed", None),
        ("agent_tools/broken", "agent_tools/sessions"): ("failed", None),
        ("coding_agent", "coding_agent/task"): ("errored", None),
        ("coding_agent/forgets-notes", "coding_agent/task"): ("failed", None),
        ("coding_agent/leaks-key", "coding_agent/task"): ("failed", None),
        ("from_promptfoo", "from_promptfoo/suite[capital of France]"): ("passed", None),
        ("from_promptfoo", "from_promptfoo/suite[arithmetic]"): ("errored", None),  # javascript: unsupported
        ("from_promptfoo", "from_promptfoo/suite[structured answer]"): ("errored", None),  # llm-rubric, no key
    }


def test_without_a_key_every_judge_item_is_unavailable_and_keeps_its_weight(
        default_run: tuple[ExamplesProject, Run]) -> None:
    examples, _run = default_run
    judged = [r for r in examples.query("assertions") if r["match_name"] == "closed_qa"]
    # quickstart ×2 experiments, support ×2, directions ×3 (not uncorrelated), coding_agent ×2 (not forgets-notes),
    # from_promptfoo's llm-rubric
    assert len(judged) == 2 + 1 + 1 + 2 * 3 + 2 * 2 + 1
    assert {(r["state"], r["reason"], r["contribution"]) for r in judged} == {
        ("unavailable", "judge-key-unresolved", None)
    }
    assert {r["judge_tokens"] or 0 for r in judged} == {0}  # no request was sent
    local = [r for r in judged if r["experiment_id"] == "judged"]
    assert "LOCAL_JUDGE_API_KEY" in local[0]["explanation"]

    support = examples.attempt("support")
    assert (support["score"], support["max_score"], support["unavailable_weight"]) == (42.5, 100, 45)
    success = examples.attempt("directions/success")
    assert (success["score"], success["max_score"], success["unavailable_weight"]) == (5, 10, 5)


def test_a_second_run_reuses_the_decided_attempts_and_reruns_the_undecided_ones(
        first_run: tuple[ExamplesProject, ExamplesProject, Run]) -> None:
    examples = first_run[0]
    again = examples.run()
    assert again.exit_code == 1, again.output
    relations = {(a["experiment_id"], a["eval_id"]): a["relation"] for a in examples.query("attempts")}
    assert relations[("npc_world", "npc_world/raid")] == "reference"  # scored, gate passed: reused
    assert relations[("quickstart", "quickstart/basics/greeting")] == "reference"
    assert relations[("support", "support/review")] == "origin"  # unrankable: never reused
