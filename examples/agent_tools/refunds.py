"""A refund request, checked on what the agent *did*: which tools, with which input, in which order."""

from examples.agent_tools._adapter import adapter
from niceeval_cli.expect import includes, tool_match


@adapter.define_eval(description="A refund looks the order up, then refunds it in full", tags=["agents"])
async def refund_flow(t):
    turn = await t.send("Hi, I want a refund for order A1, the kettle broke.")
    turn.called_tool(tool_match("lookup_order", input={"order_id": "A1"})).label("Looked the order up")
    turn.called_tool(tool_match("refund", input={"order_id": "A1", "amount": 30.0}), count=1).gate().label(
        "Refunded the full amount once"
    )
    turn.not_called_tool("cancel_order").gate().label("Did not cancel the order")
    t.tool_order(["lookup_order", "refund"]).label("Lookup before refund")
    t.max_tool_calls(3).label("At most 3 tool calls")
    t.no_failed_actions().label("No failed tool call")
    t.succeeded().label("Every turn completed")
    t.check(turn.message, includes("refunded")).label("Says it refunded")


@adapter.define_eval(description="A shipping question needs the FAQ, not the order tools", tags=["agents"])
async def shipping_question(t):
    turn = await t.send("How long does shipping take?")
    turn.called_tool(tool_match("search_faq", input={"query": includes("shipping")})).label("Searched the FAQ")
    turn.not_called_tool(tool_match(includes("order"))).label("No order tool")
    t.check(turn.message, includes("2 business days")).label("States the shipping time")
