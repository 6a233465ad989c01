"""Two customers at once: each session is its own conversation with the same agent."""

from examples.agent_tools._adapter import adapter
from niceeval_cli.expect import equals, excludes, includes


@adapter.define_eval(description="Two sessions stay apart; a follow-up remembers its own order", tags=["agents"])
async def two_customers(t):
    alice = t.new_session("alice")
    bob = t.new_session("bob")
    await alice.send("Please refund order A1.")
    await bob.send("What is the status of order B2?")
    follow_up = await bob.send("And where is it now?")  # no order number: bob's own history says B2
    alice.called_tool("refund").label("Alice was refunded")
    bob.not_called_tool("refund").gate().label("Bob was not refunded")
    t.check(follow_up.message, includes("B2")).label("Bob's follow-up is about B2")
    t.check(follow_up.message, excludes("A1")).label("Bob never hears about A1")
    t.check([turn.session.name for turn in t.turns], equals(["alice", "bob", "bob"])).label("Three turns, in order")
