"""The adapter between NiceEval and the support agent.

Each session of an attempt is its own conversation: its agent (with its history and its own
copy of the shop) lives in `ctx.session.state`. The adapter reports every tool call and message
the agent made, so it declares `observes=("messages", "tool_calls")` — only then can "this tool
was not called" be decided rather than unavailable.
"""

from __future__ import annotations

from typing import Any

from examples.agent_tools._agent import SupportAgent
from examples.agent_tools._shop import Shop
from niceeval_cli import Turn, Usage, define_adapter


async def send(ctx: Any, message: str) -> Turn:
    state = ctx.session.state
    if "agent" not in state:
        state["agent"] = SupportAgent(Shop(), refund_tool=ctx.experiment.options.get("refund_tool", "refund"))
    answer, calls, messages = state["agent"].reply(message)
    usage = Usage(input_tokens=4 * len(message.split()) + 40 * len(calls), output_tokens=2 * len(answer.split()))
    return Turn(input=message, message=answer, events=[messages[0], *calls, messages[1]], usage=usage)


adapter = define_adapter(name="support-agent", send=send, observes=("messages", "tool_calls"))
