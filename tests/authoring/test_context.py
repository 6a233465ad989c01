"""The test context `t` (authoring.md): facts, usage, elapsed time, the experiment, groups."""

from __future__ import annotations

EXPERIMENT_TOML = """
[experiments.local]
model = "model-x"
[experiments.local.options]
speed = 2
name = "fast"
"""

USAGE_ADAPTER = """
from niceeval_cli import Turn, Usage, define_adapter

def create(ctx):
    if ctx.experiment.options.get("report"):
        ctx.record_usage(input_tokens=3, output_tokens=4)
    return None

async def send(ctx, message, **options):
    return Turn(input=message, message="ok", usage=Usage(input_tokens=10, output_tokens=20))

adapter = define_adapter(name="usage-app", create=create, send=send)
"""


def test_usage_is_unavailable_usage_unreported_when_the_adapter_reports_none(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import at_most

        @define_score_eval()
        def usage_gate(t):
            t.check(t.usage.total_tokens, at_most(10_000)).gate().label("Usage limit")
            t.check(t.usage.input_tokens, at_most(10_000)).label("input")
            t.check(t.usage.output_tokens, at_most(10_000)).label("output")
    """)
    for label in ("Usage limit", "input", "output"):
        row = sealed.by_label(label)
        assert (row["state"], row["reason"]) == ("unavailable", "usage-unreported"), row
    assert sealed.attempt["gate"] == "unavailable"
    assert sealed.attempt["input_tokens"] is None
    assert sealed.attempt["output_tokens"] is None
    assert sealed.run.exit_code == 5


def test_usage_recorded_by_create_is_visible_as_ints(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from usage_app import adapter

        @adapter.define_score_eval()
        def usage_reported(t):
            t.check(t.usage.total_tokens, equals(7)).gate().label("total")
            t.check(t.usage.input_tokens, equals(3)).label("input")
            t.check(t.usage.output_tokens, equals(4)).label("output")
        """,
        toml="[experiments.local.options]\nreport = true\n",
        files={"usage_app.py": USAGE_ADAPTER},
    )
    assert [sealed.by_label(x)["state"] for x in ("total", "input", "output")] == ["matched"] * 3
    assert (sealed.attempt["input_tokens"], sealed.attempt["output_tokens"]) == (3, 4)
    assert sealed.attempt["gate"] == "passed"


def test_turn_usage_adds_to_t_usage(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from usage_app import adapter

        @adapter.define_eval()
        async def turns(t):
            await t.send("one")
            t.check(t.usage.total_tokens, equals(37)).label("after one turn")
            await t.send("two")
            t.check(t.usage.total_tokens, equals(67)).label("after two turns")
        """,
        toml="[experiments.local.options]\nreport = true\n",
        files={"usage_app.py": USAGE_ADAPTER},
    )
    assert sealed.by_label("after one turn")["state"] == "matched"
    assert sealed.by_label("after two turns")["state"] == "matched"
    assert (sealed.attempt["input_tokens"], sealed.attempt["output_tokens"]) == (23, 44)


def test_elapsed_ms_is_read_at_access(run_one):
    sealed = run_one("""
        import asyncio
        from niceeval_cli import define_eval
        from niceeval_cli.expect import at_least, at_most, is_true

        @define_eval()
        async def timing(t):
            first = t.elapsed_ms
            await asyncio.sleep(0.06)
            second = t.elapsed_ms
            t.check(first, at_most(1_000)).label("starts near zero")
            t.check(second - first, at_least(50)).label("advances")
            t.check(isinstance(second, (int, float)), is_true()).label("a number")
            t.check(t.elapsed_ms, at_most(30_000)).gate().label("Runtime limit")
    """)
    assert [r["state"] for r in sealed.results] == ["matched"] * 4
    assert sealed.attempt["state"] == "passed"


def test_experiment_exposes_id_model_and_options_read_only(run_one):
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals, is_true

        @define_eval()
        def experiment(t):
            t.check(t.experiment.id, equals("local")).label("id")
            t.check(t.experiment.model, equals("model-x")).label("model")
            t.check(t.experiment.options["speed"], equals(2)).label("speed")
            t.check(t.experiment.options["name"], equals("fast")).label("name")
            try:
                t.experiment.options["speed"] = 3
                options_frozen = False
            except TypeError:
                options_frozen = True
            t.check(options_frozen, is_true()).label("options are read-only")
            try:
                t.experiment.id = "other"
                id_frozen = False
            except AttributeError:
                id_frozen = True
            t.check(id_frozen, is_true()).label("experiment is read-only")
        """,
        toml=EXPERIMENT_TOML,
    )
    assert {r["label"]: r["state"] for r in sealed.results} == {
        "id": "matched",
        "model": "matched",
        "speed": "matched",
        "name": "matched",
        "options are read-only": "matched",
        "experiment is read-only": "matched",
    }


def test_facts_is_none_without_an_adapter(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import is_true

        @define_eval()
        def no_facts(t):
            t.check(t.facts is None, is_true()).label("no facts")
    """)
    assert sealed.by_label("no facts")["state"] == "matched"


def test_facts_differ_per_attempt(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("app.py", """
        from niceeval_cli import define_adapter

        async def create(ctx):
            return {"eval_id": ctx.eval_id, "ordinal": ctx.attempt}

        adapter = define_adapter(name="facts-app", create=create)
    """)
    project.write("evals/e.py", """
        from niceeval_cli.expect import equals
        from app import adapter

        @adapter.define_eval(attempts=2)
        def facts(t):
            t.check(t.facts["eval_id"], equals("e")).label("eval id")
            t.check(t.facts["ordinal"], equals(0)).label("first attempt")
    """)
    assert project.run().exit_code == 0  # pass@2: ordinal 0 passes
    rows = project.assertions()
    by_attempt = {(r["attempt_ordinal"], r["label"]): r["state"] for r in rows}
    assert by_attempt == {
        (0, "eval id"): "matched",
        (0, "first attempt"): "matched",
        (1, "eval id"): "matched",
        (1, "first attempt"): "mismatched",
    }


def test_group_prefixes_the_entries_registered_inside(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def grouped(t):
            t.check(1, equals(1)).label("outside before")
            with t.group("Checkout"):
                t.check(1, equals(1)).label("inside")
            t.check(1, equals(1)).label("outside after")
    """)
    assert sealed.by_label("inside")["group_name"] == "Checkout"
    assert sealed.by_label("outside before")["group_name"] is None
    assert sealed.by_label("outside after")["group_name"] is None


def test_subject_is_read_at_the_call(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def read_at_call(t):
            items = ["a"]
            t.check(items, equals(["a"])).label("snapshot")
            items.append("b")
    """)
    row = sealed.by_label("snapshot")
    assert row["state"] == "matched"
    assert row["evidence"] == ["a"]  # query --format json: a JSON value
