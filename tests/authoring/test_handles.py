"""Handles (authoring.md, "Handles"): each registration returns a handle that configures that
one entry; misuse is an authoring error raised at the call, sealing the Attempt `errored`."""

from __future__ import annotations

import pytest

AUTHORING_ERROR = "authoring-error"


def assert_authoring_error(sealed, line: int) -> None:
    attempt = sealed.attempt
    assert attempt["state"] == "errored"
    assert attempt["reason"] == AUTHORING_ERROR
    assert f"e.py:{line}" in attempt["error"]


# ── chaining ──────────────────────────────────────────────────────────────────────────────


def test_handles_chain_in_any_order(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def chained(t):
            t.check(1, equals(1)).score(5).label("score then label")
            t.check(1, equals(1)).label("label then score").score(2)
            t.check(1, equals(1)).gate().label("gate then label")
            t.check(1, equals(1)).label("label then gate").gate()
            t.check(1, equals(1)).gate().score(3).label("gate then score")
            t.check(1, equals(1)).key("k-1").label("key then label")
            t.check(1, equals(1)).label("label then key").key("k-2")
    """)
    roles = {r["label"]: r["role"] for r in sealed.results}
    assert roles == {
        "score then label": "score",
        "label then score": "score",
        "gate then label": "gate",
        "label then gate": "gate",
        "gate then score": "gate+score",
        "key then label": "record",
        "label then key": "record",
    }
    assert sealed.by_label("key then label")["key"] == "k-1"
    assert sealed.by_label("label then key")["key"] == "k-2"
    assert sealed.attempt["score"] == 10
    assert sealed.attempt["max_score"] == 10
    assert sealed.attempt["gate"] == "passed"


def test_unconfigured_check_is_a_record_and_handles_return_themselves(run_one):
    sealed = run_one("""
        from niceeval_cli import AssertionHandle, define_eval
        from niceeval_cli.expect import equals, is_true

        @define_eval()
        def plain(t):
            handle = t.check(2, equals(2))
            same = handle.label("plain").key("plain-key")
            t.check(isinstance(handle, AssertionHandle) and same is handle, is_true()).label("chain")
    """)
    assert sealed.by_label("plain")["role"] == "record"
    assert sealed.by_label("plain")["state"] == "matched"
    assert sealed.by_label("chain")["state"] == "matched"


def test_a_thresholded_measurement_can_gate(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import similarity

        @define_eval()
        def gated(t):
            t.check("abcd", similarity("abcd").at_least(0.8)).gate().label("close enough")
    """)
    row = sealed.by_label("close enough")
    assert (row["role"], row["state"], row["measurement"], row["threshold"]) == ("gate", "met", 1.0, 0.8)
    assert sealed.attempt["state"] == "passed"


# ── authoring errors ──────────────────────────────────────────────────────────────────────


def test_gate_on_a_measurement_without_threshold_is_an_authoring_error(run_one, line_of):
    src = """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals, similarity

        @define_eval()
        def ungated(t):
            t.check(1, equals(1)).label("before")
            t.check("abc", similarity("abd")).gate()  # offending
            t.check(1, equals(1)).label("after")
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))
    assert "before" in sealed.labels
    assert "after" not in sealed.labels


def test_score_in_a_pass_style_eval_is_an_authoring_error(run_one, line_of):
    src = """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def pass_style(t):
            t.check(1, equals(1)).label("before")
            t.check(1, equals(1)).score(5)  # offending
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))
    assert sealed.by_label("before")["state"] == "matched"


@pytest.mark.parametrize("method", ["label", "key"])
@pytest.mark.parametrize("second", ["same", "other"])
def test_label_or_key_set_twice_is_an_authoring_error_even_with_the_same_value(run_one, line_of, method, second):
    src = f"""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def twice(t):
            t.check(1, equals(1)).label("kept")
            t.check(1, equals(1)).{method}("same").{method}("{second}")  # offending
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))
    assert sealed.by_label("kept")["state"] == "matched"


def test_or_stop_on_an_unthresholded_measurement_is_an_authoring_error(run_one, line_of):
    src = """
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import similarity

        @define_score_eval()
        async def nothing_to_stop_on(t):
            await t.check("abc", similarity("abc")).or_stop()  # offending
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))


@pytest.mark.parametrize("call", [".gate()", ".score(2)", ".or_stop()"])
def test_direct_score_handle_allows_only_label_and_key(run_one, line_of, call):
    awaited = "await " if call == ".or_stop()" else ""
    src = f"""
        from niceeval_cli import define_score_eval

        @define_score_eval()
        async def direct(t):
            t.score(0.5, weight=2).label("allowed").key("allowed-key")
            {awaited}t.score(1.0, weight=3){call}  # offending
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))
    allowed = sealed.by_label("allowed")
    assert allowed["key"] == "allowed-key"
    assert allowed["contribution"] == 1.0


@pytest.mark.parametrize("weight", ["-1", "float('inf')", "float('nan')"])
def test_score_weight_must_be_finite_and_not_negative(run_one, line_of, weight):
    src = f"""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def bad_weight(t):
            t.check(1, equals(1)).score({weight})  # offending
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))


# ── keys ──────────────────────────────────────────────────────────────────────────────────


def test_keys_are_stable_across_runs_and_distinct_per_entry(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def keyed(t):
            t.check(1, equals(1)).label("Mentions refund")
            t.check(1, equals(1)).label("Mentions window")
            t.check(1, equals(1))
            t.check(1, equals(1))
            t.check(1, equals(1)).label("ignored for the key").key("explicit")
    """)
    assert project.run().exit_code == 0
    assert project.run("--rerun-all").exit_code == 0
    first, second = (
        [r["key"] for r in sorted(project.assertions("--run", run_id), key=lambda r: r["ordinal"])]
        for run_id in [row["id"] for row in sorted(project.query("runs"), key=lambda r: r["started_at"])]
    )
    assert first == second
    assert len(set(first)) == 5
    assert first[4] == "explicit"
    assert all(first)


# ── what decides ──────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("subject", "state"),
    [
        ('"abcd", similarity("wxyz").at_least(0.9)', "below"),
        ('Fact.unavailable("gone"), similarity("x")', "unavailable"),
    ],
)
def test_an_ungated_measurement_is_recorded_only_in_a_pass_eval(run_one, subject, state):
    sealed = run_one(f"""
        from niceeval_cli import Fact, define_eval
        from niceeval_cli.expect import equals, similarity

        @define_eval()
        def recorded(t):
            t.check({subject}).label("measurement")
            t.check(1, equals(1)).label("boolean")
    """)
    row = sealed.by_label("measurement")
    assert (row["role"], row["state"]) == ("record", state)
    assert sealed.attempt["state"] == "passed"


def test_every_boolean_assertion_decides_a_pass_eval_without_gate(run_one):
    sealed = run_one("""
        from niceeval_cli import Fact, define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def booleans(t):
            t.check(Fact.unavailable("gone"), equals(1)).label("unknown")
    """)
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "evidence-unavailable")


def test_an_unavailable_record_does_not_make_a_score_eval_unrankable(run_one):
    sealed = run_one("""
        from niceeval_cli import Fact, define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def scored(t):
            t.check(1, equals(1)).score(2).label("earned")
            t.check(Fact.unavailable("gone"), equals(1)).label("record only")
    """)
    assert (sealed.attempt["state"], sealed.attempt["score"], sealed.attempt["gate"]) == ("scored", 2, "none")
