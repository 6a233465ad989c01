"""Score-style: an agent that recovers from a failed tool call still completes, but loses a point."""

from examples.agent_tools._adapter import adapter


@adapter.define_score_eval(description="A lower-case order id: the first lookup fails, the agent retries")
async def lookup_recovery(t):
    await t.send("Where is order b2?")
    t.succeeded().gate().label("Completed")
    t.called_tool("lookup_order", count=2).score(1).label("Retried the lookup once")
    t.no_failed_actions().score(1).label("No failed tool call")  # the recovered failure still counts
    t.max_tool_calls(2).score(1).label("At most 2 tool calls")
