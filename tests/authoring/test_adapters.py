"""Adapters (authoring.md, "Adapters"): create/send/assertions, `t.<name>`, adapter errors,
`no-adapter`, and unavailable Facts in matches vs in test code."""

from __future__ import annotations

import pytest

from niceeval_cli import AuthoringError, define_adapter
from niceeval_cli.authoring import RESERVED_NAMES

SUPPORT_APP = """
from niceeval_cli import Fact, Material, Turn, define_adapter
from niceeval_cli.expect import define_material_match, equals, map_value


def speech_material(match):
    return define_material_match(name="actor-speeches", read=lambda facts: facts["speeches"], match=match)


async def observe(ctx):
    return {
        "speeches": Material.complete([{"actor": "agent", "text": "hello"}]),
        "hp": Fact.unavailable("hp-sensor-offline"),
    }


def echo(ctx, message, **options):
    return f"echo: {message}"


adapter = define_adapter(
    name="support-review",
    create=observe,
    send=echo,
    assertions=lambda check: {
        "said": lambda match: check(speech_material(match)),
        "actor_said": lambda actor: check(
            speech_material(map_value("actor", lambda s: s["actor"], equals(actor)))
        ),
    },
)
"""


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_define_adapter_rejects_assertion_names_that_clash_with_the_context(name):
    with pytest.raises(AuthoringError) as raised:
        define_adapter(name="clashing", assertions=lambda check: {name: lambda: check(None)})
    assert name in str(raised.value)
    assert "clashing" in str(raised.value)


def test_reserved_names_are_the_contexts_own_members():
    assert {
        "check", "score", "send", "facts", "usage", "elapsed_ms", "experiment", "group",
        "closed_qa", "factuality", "summarizes",
    } <= set(RESERVED_NAMES)


def test_adapter_assertions_are_attributes_of_t_and_record_the_eval_call_site(run_one, line_of):
    src = """
        from niceeval_cli.expect import equals, map_value
        from support_app import adapter

        @adapter.define_score_eval()
        def review(t):
            t.said(map_value("actor", lambda s: s["actor"], equals("agent"))).score(5).label("Participation")
            t.actor_said("customer").label("Customer spoke")
    """
    sealed = run_one(src, files={"support_app.py": SUPPORT_APP})
    participation = sealed.by_label("Participation")
    assert participation["state"] == "matched"
    assert participation["contribution"] == 5
    assert participation["source_file"].endswith("evals/e.py")
    assert participation["source_line"] == line_of(src, '.label("Participation")')
    customer = sealed.by_label("Customer spoke")
    assert customer["state"] == "mismatched"
    assert customer["source_file"].endswith("evals/e.py")
    assert customer["source_line"] == line_of(src, '.label("Customer spoke")')
    assert (sealed.attempt["state"], sealed.attempt["score"], sealed.attempt["max_score"]) == ("scored", 5, 5)


def test_plain_define_eval_uses_the_adapter_its_experiment_names(run_one):
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def via_config(t):
            turn = await t.send("hi")
            t.check(turn.message, equals("echo: hi")).label("reply")
        """,
        toml='[experiments.local]\nadapter = "support_app:adapter"\n',
        files={"support_app.py": SUPPORT_APP},
    )
    assert sealed.by_label("reply")["state"] == "matched"
    assert sealed.attempt["experiment_id"] == "local"


def test_unknown_t_attribute_is_an_authoring_error_naming_the_adapter_and_its_names(run_one, line_of):
    src = """
        from support_app import adapter

        @adapter.define_eval()
        def typo(t):
            t.sayd("hello")  # offending
    """
    sealed = run_one(src, files={"support_app.py": SUPPORT_APP})
    attempt = sealed.attempt
    assert (attempt["state"], attempt["reason"]) == ("errored", "authoring-error")
    assert "sayd" in attempt["error"]
    assert "support-review" in attempt["error"]
    assert "said" in attempt["error"] and "actor_said" in attempt["error"]
    assert f"e.py:{line_of(src, '# offending')}" in attempt["error"]


def test_send_returning_text_is_wrapped_as_a_turn(run_one):
    sealed = run_one(
        """
        from niceeval_cli import Turn
        from niceeval_cli.expect import equals, is_true
        from support_app import adapter

        @adapter.define_eval()
        async def wrapped(t):
            turn = await t.send("How long is the refund window?")
            t.check(isinstance(turn, Turn), is_true()).label("a Turn")
            t.check(turn.input, equals("How long is the refund window?")).label("input")
            t.check(turn.message, equals("echo: How long is the refund window?")).label("message")
            t.check(turn.data is None and turn.usage is None, is_true()).label("no data or usage")
        """,
        files={"support_app.py": SUPPORT_APP},
    )
    assert [r["state"] for r in sealed.results] == ["matched"] * 4
    assert sealed.attempt["state"] == "passed"


def test_send_without_any_adapter_is_errored_no_adapter_naming_the_experiment(run_one):
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def needs_adapter(t):
            t.check(1, equals(1)).label("before")
            await t.send("hello")
            t.check(1, equals(1)).label("after")
        """,
        toml='[experiments.bare]\nmodel = "m"\n',
    )
    attempt = sealed.attempt
    assert (attempt["state"], attempt["reason"]) == ("errored", "no-adapter")
    assert "bare" in attempt["error"]
    assert "adapter" in attempt["error"]
    assert sealed.labels == ["before"]
    assert sealed.run.exit_code == 5


def test_eval_without_adapter_checks_its_own_values(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def self_contained(t):
            t.check(sum([1, 2, 3]), equals(6)).label("sum")
    """)
    assert sealed.attempt["state"] == "passed"
    assert sealed.run.exit_code == 0


@pytest.mark.parametrize("kind", ["define_eval", "define_score_eval"])
def test_exception_in_create_is_adapter_error_never_failed(run_one, kind):
    sealed = run_one(
        f"""
        from niceeval_cli.expect import equals
        from broken_app import adapter

        @adapter.{kind}()
        def broken(t):
            t.check(1, equals(2)).label("would fail")
        """,
        files={"broken_app.py": """
            from niceeval_cli import define_adapter

            def create(ctx):
                raise ConnectionError("app did not start on port 8080")

            adapter = define_adapter(name="broken", create=create)
        """},
    )
    attempt = sealed.attempt
    assert (attempt["state"], attempt["reason"]) == ("errored", "adapter-error")
    assert "app did not start on port 8080" in attempt["error"]
    assert sealed.results == []
    assert sealed.run.exit_code == 5


def test_exception_in_send_is_adapter_error_and_keeps_earlier_results(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from flaky_app import adapter

        @adapter.define_eval()
        async def flaky(t):
            t.check(1, equals(2)).label("mismatch before the turn")
            await t.send("hello")
            t.check(1, equals(1)).label("after")
        """,
        files={"flaky_app.py": """
            from niceeval_cli import define_adapter

            async def send(ctx, message, **options):
                raise TimeoutError("upstream model did not answer")

            adapter = define_adapter(name="flaky", send=send)
        """},
    )
    attempt = sealed.attempt
    assert (attempt["state"], attempt["reason"]) == ("errored", "adapter-error")
    assert "upstream model did not answer" in attempt["error"]
    assert sealed.labels == ["mismatch before the turn"]
    assert sealed.by_label("mismatch before the turn")["state"] == "mismatched"


@pytest.mark.parametrize("raised", ["SystemExit(3)", "KeyboardInterrupt()", "GeneratorExit()"])
def test_a_base_exception_in_send_is_adapter_error_as_in_create(run_one, raised):
    """docs/authoring.md: an exception raised by `create` or `send` is `adapter-error`; one that is
    not an `Exception` left `send` unwrapped and read `exception`."""
    sealed = run_one(
        """
        from flaky_app import adapter

        @adapter.define_eval()
        async def flaky(t):
            await t.send("hello")
        """,
        files={"flaky_app.py": f"""
            from niceeval_cli import define_adapter

            async def send(ctx, message, **options):
                raise {raised}

            adapter = define_adapter(name="flaky", send=send)
        """},
    )
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "adapter-error")
    assert raised.split("(")[0] in sealed.attempt["error"]


def test_fact_unavailable_inside_a_match_makes_the_assertion_unavailable(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals, map_value
        from support_app import adapter

        @adapter.define_eval()
        def hp(t):
            t.check(t.facts, map_value("hp", lambda f: f["hp"].value, equals(0))).label("hp is zero")
            t.check(t.facts["hp"], equals(0)).label("hp fact directly")
        """,
        files={"support_app.py": SUPPORT_APP},
    )
    for label in ("hp is zero", "hp fact directly"):
        row = sealed.by_label(label)
        assert (row["state"], row["reason"]) == ("unavailable", "hp-sensor-offline"), row
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "evidence-unavailable")


def test_fact_unavailable_in_test_code_makes_the_attempt_errored_with_its_message(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from support_app import adapter

        @adapter.define_score_eval()
        def hp(t):
            t.check(1, equals(1)).score(2).label("earned")
            hp = t.facts["hp"].value
            t.check(hp, equals(0)).score(3).label("never registered")
        """,
        files={"support_app.py": SUPPORT_APP},
    )
    attempt = sealed.attempt
    assert attempt["state"] == "errored"
    assert attempt["reason"] not in ("authoring-error", "adapter-error")
    assert "hp-sensor-offline" in attempt["error"]
    assert sealed.labels == ["earned"]
    assert attempt["partial_score"] == 2


def test_create_receives_eval_id_ordinal_experiment_and_deadline(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals, is_true
        from ctx_app import adapter

        @adapter.define_eval(timeout_ms=5000)
        def context(t):
            t.check(t.facts["eval_id"], equals("e")).label("eval id")
            t.check(t.facts["attempt"], equals(0)).label("ordinal")
            t.check(t.facts["experiment"], equals("local")).label("experiment")
            t.check(t.facts["model"], equals("m-1")).label("model")
            t.check(t.facts["options"], equals({"speed": 2})).label("options")
            t.check(t.facts["deadline_in"], is_true()).label("deadline ahead")
        """,
        toml='[experiments.local]\nmodel = "m-1"\n[experiments.local.options]\nspeed = 2\n',
        files={"ctx_app.py": """
            import time
            from niceeval_cli import define_adapter

            def create(ctx):
                ctx.logger.info("observing")
                return {
                    "eval_id": ctx.eval_id,
                    "attempt": ctx.attempt,
                    "experiment": ctx.experiment.id,
                    "model": ctx.experiment.model,
                    "options": dict(ctx.experiment.options),
                    "deadline_in": ctx.deadline is not None and 0 < ctx.deadline - time.monotonic() <= 5,
                }

            adapter = define_adapter(name="ctx", create=create)
        """},
    )
    assert {r["label"]: r["state"] for r in sealed.results} == dict.fromkeys(
        ["eval id", "ordinal", "experiment", "model", "options", "deadline ahead"], "matched"
    )


SIGNUP_APP = """
from niceeval_cli import define_adapter
from niceeval_cli.expect import map_value

adapter = define_adapter(
    name="signup",
    create=lambda ctx: {"registrations": 3},
    assertions=lambda check: {
        "{name}": lambda match: check(map_value("registrations", lambda f: f["registrations"], match)),
    },
)
"""


def test_an_accepted_assertion_name_is_reachable_even_if_the_context_has_an_internal_member(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from signup_app import adapter

        @adapter.define_eval()
        def signups(t):
            t.registrations(equals(3)).label("three signups")
        """,
        files={"signup_app.py": SIGNUP_APP.replace("{name}", "registrations")},
    )
    assert sealed.by_label("three signups")["state"] == "matched"


def test_define_adapter_rejects_assertion_names_t_cannot_offer():
    from niceeval_cli import AuthoringError, define_adapter

    for name in ("_registrations", "check", "not an identifier"):
        with pytest.raises(AuthoringError, match="assertion names"):
            define_adapter(name="signups", assertions=lambda check, n=name: {n: lambda match: check(match)})


def test_send_passes_options_through_to_the_adapter(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from options_app import adapter

        @adapter.define_eval()
        async def options(t):
            turn = await t.send("hi", temperature=0, persona="pirate")
            t.check(turn.message, equals("hi|persona=pirate,temperature=0")).label("options")
        """,
        files={"options_app.py": """
            from niceeval_cli import define_adapter

            async def send(ctx, message, **options):
                return message + "|" + ",".join(f"{k}={v}" for k, v in sorted(options.items()))

            adapter = define_adapter(name="options", send=send)
        """},
    )
    assert sealed.by_label("options")["state"] == "matched"


def test_send_on_an_adapter_without_send_makes_the_attempt_errored(run_one):
    sealed = run_one(
        """
        from niceeval_cli import define_adapter

        adapter = define_adapter(name="observer-only", create=lambda ctx: {"seen": True})

        @adapter.define_eval()
        async def talk(t):
            await t.send("hello")
        """,
    )
    assert sealed.attempt["state"] == "errored"
    assert "observer-only" in sealed.attempt["error"]
    assert "send" in sealed.attempt["error"]
