"""Sessions and scoped assertions through the real CLI (agents.md, "Sessions")."""

from __future__ import annotations

from tests.support.agents import as_json

AGENT = '''
from niceeval_cli import Message, ToolCall, Turn, define_adapter

async def send(ctx, message, **options):
    history = ctx.session.state.setdefault("history", [])
    history.append(message)
    calls = [ToolCall(name, input={"q": message}) for name in options.get("tools", [])]
    text = f"{ctx.session.id}|{ctx.session.name}|{len(history)}"
    return Turn(input=message, message=text, events=[Message("assistant", text), *calls],
                status=options.get("status", "completed"))

adapter = define_adapter(name="agent", send=send, observes=("messages", "tool_calls"))
text_only = define_adapter(name="text", send=lambda ctx, message: "plain")
'''


def _rows(sealed):
    return {r["label"]: r for r in sealed.results}


def test_sessions_keep_their_own_state_and_turns(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from agent import adapter

        @adapter.define_eval()
        async def two_sessions(t):
            a = await t.send("one")
            s = t.new_session("billing")
            b = await s.send("two")
            c = await t.send("three")
            d = await s.send("four")
            t.check(a.message, equals("default|None|1")).label("a")
            t.check(b.message, equals("billing|billing|1")).label("b")
            t.check(c.message, equals("default|None|2")).label("c")
            t.check(d.message, equals("billing|billing|2")).label("d")
            t.check([x.input for x in t.turns], equals(["one", "two", "three", "four"])).label("t.turns")
            t.check([x.input for x in s.turns], equals(["two", "four"])).label("s.turns")
            t.check([x.ordinal for x in t.turns], equals([0, 1, 2, 3])).label("ordinals")
        """,
        files={"agent.py": AGENT},
    )
    assert {label: r["state"] for label, r in _rows(sealed).items()} == dict.fromkeys(
        ["a", "b", "c", "d", "t.turns", "s.turns", "ordinals"], "matched"
    ), sealed.results


def test_two_unnamed_sessions_get_distinct_ids(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import equals
        from agent import adapter

        @adapter.define_eval()
        async def ids(t):
            s1, s2 = t.new_session(), t.new_session()
            ids = {t.new_session("x").id, t.new_session("x").id, s1.id, s2.id, "default"}
            t.check(len(ids), equals(5)).label("ids")
        """,
        files={"agent.py": AGENT},
    )
    assert sealed.by_label("ids")["state"] == "matched"


def test_scoped_assertions_on_turn_session_and_t_see_their_own_scope(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import tool_match
        from agent import adapter

        @adapter.define_eval()
        async def scopes(t):
            first = await t.send("find", tools=["search"])
            s = t.new_session()
            await s.send("pay", tools=["refund", "refund"])
            first.called_tool("search").label("turn: search")
            first.not_called_tool("refund").label("turn: no refund")
            s.called_tool("refund", count=2).label("session: 2 refunds")
            s.not_called_tool("search").label("session: no search")
            t.called_tool(tool_match("refund", input={"q": "pay"}), count=1).label("t: exactly 1 refund")
            t.tool_order(["search", "refund"]).label("t: order")
            t.max_tool_calls(3).label("t: max 3")
            t.no_failed_actions().label("t: no failures")
            t.succeeded().label("t: succeeded")
        """,
        files={"agent.py": AGENT},
    )
    rows = _rows(sealed)
    states = {label: r["state"] for label, r in rows.items()}
    assert states == {
        "turn: search": "matched", "turn: no refund": "matched", "session: 2 refunds": "matched",
        "session: no search": "matched", "t: exactly 1 refund": "mismatched", "t: order": "matched",
        "t: max 3": "matched", "t: no failures": "matched", "t: succeeded": "matched",
    }
    assert rows["t: exactly 1 refund"]["explanation"] == (
        "expected exactly 1 call of tool_match('refund', input={'q': 'pay'}), counted 2: #2, #3"
    )
    assert sealed.attempt["state"] == "failed"


def test_a_scope_is_its_turns_at_the_call(run_one):
    sealed = run_one(
        """
        from agent import adapter

        @adapter.define_eval()
        async def moment(t):
            t.succeeded().label("before any turn")
            await t.send("x", tools=["a"])
            t.not_called_tool("b").label("after one")
            await t.send("y", tools=["b"])
        """,
        files={"agent.py": AGENT},
    )
    assert sealed.by_label("before any turn")["state"] == "mismatched"
    assert sealed.by_label("after one")["state"] == "matched"


def test_a_waiting_turn_makes_succeeded_mismatched(run_one):
    sealed = run_one(
        """
        from agent import adapter

        @adapter.define_eval()
        async def waits(t):
            turn = await t.send("x", status="waiting")
            turn.succeeded().label("turn")
        """,
        files={"agent.py": AGENT},
    )
    row = sealed.by_label("turn")
    assert row["state"] == "mismatched" and "turn 0 waiting" in row["explanation"]


def test_text_only_adapter_tool_assertions_are_unavailable_tool_calls_unobserved(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import count_where, at_least, tool_match
        from agent import text_only

        @text_only.define_eval()
        async def text(t):
            turn = await t.send("x")
            t.not_called_tool("refund").gate().label("no refund")
            t.check(turn.tool_calls, count_where(tool_match("refund"), at_least(1))).label("material")
            t.succeeded().label("succeeded")
        """,
        files={"agent.py": AGENT},
    )
    for label in ("no refund", "material"):
        row = sealed.by_label(label)
        assert (row["state"], row["reason"]) == ("unavailable", "tool-calls-unobserved"), row
    assert sealed.by_label("succeeded")["state"] == "matched"
    assert sealed.attempt["state"] == "errored"
    assert sealed.run.exit_code == 5
    assert "tool assertions are unavailable (tool-calls-unobserved)" in sealed.run.stdout


def test_a_bad_argument_to_a_scoped_assertion_is_an_authoring_error(run_one):
    sealed = run_one(
        """
        from agent import adapter

        @adapter.define_eval()
        async def bad(t):
            await t.send("x")
            t.called_tool(42)
        """,
        files={"agent.py": AGENT},
    )
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "authoring-error")
    assert "evals/e.py:6" in sealed.attempt["error"] and "called_tool" in sealed.attempt["error"]


def test_agent_assertion_evidence_lists_the_scope_tool_calls(run_one):
    sealed = run_one(
        """
        from agent import adapter

        @adapter.define_eval()
        async def ev(t):
            await t.send("x", tools=["a", "b"])
            t.max_tool_calls(1).label("max")
        """,
        files={"agent.py": AGENT},
    )
    evidence = as_json(sealed.by_label("max")["evidence"])
    assert [c["name"] for c in evidence["tool_calls"]] == ["a", "b"]
    assert evidence["pointed"] == [[0, 2]]  # seq 0 is the assistant message


def test_each_session_sees_one_stable_ctx_and_create_sees_the_default_session(run_one):
    sealed = run_one(
        """
        from niceeval_cli import define_adapter
        from niceeval_cli.expect import equals

        seen = []

        def create(ctx):
            return ctx.session.id

        def send(ctx, message):
            seen.append((ctx.session.id, id(ctx)))
            return message

        adapter = define_adapter(name="ids", create=create, send=send)

        @adapter.define_eval()
        async def stable(t):
            s = t.new_session()
            for _ in range(2):
                await t.send("a")
                await s.send("b")
            ids = {}
            for session, ctx_id in seen:
                ids.setdefault(session, set()).add(ctx_id)
            t.check(t.facts, equals("default")).label("create")
            t.check(sorted(len(v) for v in ids.values()), equals([1, 1])).label("one ctx per session")
            t.check(len({next(iter(v)) for v in ids.values()}), equals(2)).label("distinct")
        """,
    )
    assert {r["label"]: r["state"] for r in sealed.results} == dict.fromkeys(
        ["create", "one ctx per session", "distinct"], "matched")


def test_evidence_of_a_checked_turn_holds_its_fields_only(run_one):
    sealed = run_one(
        """
        from niceeval_cli.expect import is_defined
        from agent import adapter

        @adapter.define_eval()
        async def whole(t):
            turn = await t.send("x", tools=["a"])
            t.check(turn, is_defined()).label("turn")
        """,
        files={"agent.py": AGENT},
    )
    evidence = as_json(sealed.by_label("turn")["evidence"])
    assert set(evidence) == {"input", "message", "events", "status", "data", "usage", "elapsed_ms", "observed"}
