"""Small real agents of each framework, driven by offline test models, whose tools log each call.

Each builder returns (result, log): the framework's own result object and the calls its tool
functions recorded themselves, in order, as (tool name, arguments, outcome)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

Log = list[tuple[str, dict[str, Any], str]]


def pydantic_ai_run(prompt: str = "refund order 7") -> tuple[Any, Log]:
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    log: Log = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answered = sum(1 for m in messages if m.kind == "response")
        script = [
            [ToolCallPart("lookup", {"order": 7}, tool_call_id="c1")],
            [ToolCallPart("refund", '{"order": 7}', tool_call_id="c2")],
            [ToolCallPart("refund", '{"order": 7}', tool_call_id="c3")],
        ]
        if answered < len(script):
            return ModelResponse(parts=script[answered])
        return ModelResponse(parts=[TextPart("Refunded order 7.")])

    agent = Agent(FunctionModel(model))
    tries = {"refund": 0}

    @agent.tool_plain
    def lookup(order: int) -> dict[str, Any]:
        log.append(("lookup", {"order": order}, "completed"))
        return {"order": order, "status": "delivered"}

    @agent.tool_plain
    def refund(order: int) -> str:
        tries["refund"] += 1
        if tries["refund"] == 1:
            log.append(("refund", {"order": order}, "failed"))
            raise ModelRetry("payment service busy")
        log.append(("refund", {"order": order}, "completed"))
        return "ok"

    return agent.run_sync(prompt), log


def openai_agents_run(prompt: str = "refund order 7") -> tuple[Any, Log]:
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    log: Log = []

    @function_tool
    def lookup(order: int) -> dict[str, Any]:
        log.append(("lookup", {"order": order}, "completed"))
        return {"order": order}

    @function_tool
    def refund(order: int) -> str:
        log.append(("refund", {"order": order}, "failed"))
        raise RuntimeError("payment service down")

    set_tracing_disabled(True)  # the SDK's tracing would export to its vendor: nothing leaves the machine
    model = _scripted_agents_model([("lookup", '{"order": 7}'), ("refund", '{"order": 7}')],
                                   "Refund failed for order 7.", lambda turn: (10 * turn, 3))
    agent = Agent(name="support", model=model, tools=[lookup, refund])
    return asyncio.run(Runner.run(agent, prompt)), log


def langgraph_run(prompt: str = "refund order 7") -> tuple[Any, Log]:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode, create_react_agent

    log: Log = []

    class ToolFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @tool
    def lookup(order: int) -> dict[str, Any]:
        """Look an order up."""
        log.append(("lookup", {"order": order}, "completed"))
        return {"order": order}

    @tool
    def refund(order: int) -> str:
        """Refund an order."""
        log.append(("refund", {"order": order}, "failed"))
        raise ValueError("payment down")

    replies = iter([
        AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"order": 7}, "id": "c1"},
                                          {"name": "refund", "args": {"order": 7}, "id": "c2"}],
                  usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13},
                  response_metadata={"model_name": "fake-1"}),
        AIMessage(content="Refund failed for order 7.",
                  usage_metadata={"input_tokens": 20, "output_tokens": 5, "total_tokens": 25}),
    ])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(ToolFake(messages=replies), ToolNode([lookup, refund], handle_tool_errors=True))
    result = agent.invoke({"messages": [("user", prompt)]})
    # ToolNode runs one message's tool calls concurrently (threads), so the order the tools logged
    # themselves in is the scheduler's; the calls' own order is the message's (lookup, then refund).
    asked = ["lookup", "refund"]
    return result, sorted(log, key=lambda entry: asked.index(entry[0]))


def pydantic_ai_early_end_run() -> tuple[Any, Log]:
    """The model calls the output tool and, beside it, `refund`: with `end_strategy="early"`
    pydantic-ai takes the output as the final result and never runs `refund`."""
    from pydantic import BaseModel
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    class Answer(BaseModel):
        text: str

    log: Log = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        output_tool = info.output_tools[0].name
        return ModelResponse(parts=[ToolCallPart(output_tool, {"text": "done"}, tool_call_id="o1"),
                                    ToolCallPart("refund", {"order": 7}, tool_call_id="r1")])

    agent = Agent(FunctionModel(model), output_type=Answer, end_strategy="early")

    @agent.tool_plain
    def refund(order: int) -> str:
        log.append(("refund", {"order": order}, "completed"))
        return "ok"

    return agent.run_sync("refund order 7"), log


def openai_agents_rejected_and_timed_out_run(reject: bool = True) -> tuple[Any, Log]:
    """The model calls `refund` (which needs approval, and is rejected) and `slow` (which takes
    longer than its `timeout`); then it answers. Neither tool function ends. `reject=False`: the
    first run's result, stopped for the approval."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    log: Log = []

    @function_tool(needs_approval=True)
    def refund(order: int) -> str:
        log.append(("refund", {"order": order}, "completed"))
        return "refunded"

    @function_tool(timeout=0.1)
    async def slow() -> str:
        await asyncio.sleep(10)
        log.append(("slow", {}, "completed"))
        return "late"

    set_tracing_disabled(True)
    model = _scripted_agents_model([("refund", '{"order": 7}'), ("slow", "{}")], "Nothing refunded.",
                                   lambda turn: (5, 2))
    agent = Agent(name="support", model=model, tools=[refund, slow])

    async def run() -> Any:
        first = await Runner.run(agent, "refund order 7")
        if not reject:
            return first
        state = first.to_state()
        for interruption in first.interruptions:
            state.reject(interruption)
        return await Runner.run(agent, state)

    return asyncio.run(run()), log


def langgraph_interrupted_run() -> tuple[Any, Log]:
    """A ReAct graph whose `refund` tool asks a human first (`interrupt()`): `invoke` returns the
    state stopped there, `__interrupt__` in it; the tool never got past the question."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent
    from langgraph.types import interrupt

    log: Log = []

    class ToolFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @tool
    def refund(order: int) -> str:
        """Refund an order, once a human approved it."""
        interrupt({"approve refund of": order})
        log.append(("refund", {"order": order}, "completed"))
        return "refunded"

    replies = iter([AIMessage(content="", tool_calls=[{"name": "refund", "args": {"order": 7}, "id": "c1"}]),
                    AIMessage(content="Refunded.")])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(ToolFake(messages=replies), ToolNode([refund]), checkpointer=MemorySaver())
    return agent.invoke({"messages": [("user", "refund order 7")]}, {"configurable": {"thread_id": "t1"}}), log


def langgraph_one_id_twice_run() -> tuple[Any, Log]:
    """The model gives two calls of one message the same id (`c1`): ToolNode runs both and answers
    each with a ToolMessage of that id, in the calls' order."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode, create_react_agent

    log: Log = []

    class ToolFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @tool
    def lookup(order: int) -> str:
        """Look an order up."""
        log.append(("lookup", {"order": order}, "completed"))
        return f"order {order} found"

    replies = iter([AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"order": 7}, "id": "c1"},
                                                      {"name": "lookup", "args": {"order": 8}, "id": "c1"}]),
                    AIMessage(content="Both found.")])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(ToolFake(messages=replies), ToolNode([lookup]))
    return agent.invoke({"messages": [("user", "look up 7 and 8")]}), log


def _scripted_agents_model(calls: list[tuple[str, str]], answer: str,
                           usage: Callable[[int], tuple[int, int]]) -> Any:
    """An OpenAI Agents SDK model of the test's own (no network, a fixed script): its first
    response calls `calls` ((tool name, JSON arguments), as c1, c2, …), every later one answers
    `answer`; `usage(turn)` is each response's (input, output) tokens."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class Scripted(Model):
        def __init__(self) -> None:
            self.turns = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.turns += 1
            if self.turns == 1:
                output: list[Any] = [
                    ResponseFunctionToolCall(type="function_call", name=name, arguments=arguments,
                                             call_id=f"c{at}", id=f"fc{at}", status="completed")
                    for at, (name, arguments) in enumerate(calls, start=1)
                ]
            else:
                output = [ResponseOutputMessage(type="message", id="m1", role="assistant", status="completed",
                                                content=[ResponseOutputText(type="output_text", annotations=[],
                                                                            text=answer)])]
            tokens_in, tokens_out = usage(self.turns)
            return ModelResponse(output=output, usage=Usage(requests=1, input_tokens=tokens_in,
                                                            output_tokens=tokens_out), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Scripted()
