"""A simulated support application: one chat between a customer and the support agent.

It stands in for your real application. `observe(ctx)` runs one conversation (or reads it back
from your logs) and returns `SupportFacts`: every speech with whether it was delivered and
whether its model origin is verified, plus the completion event (or why it is unknown).

Switches (the experiment's `[experiments.<id>.options]`):
- `resolution`: "resolved" (default), "abandoned" (the customer left: completion 0) or
  "unobserved" (the event stream was cut: completion unavailable, never 0);
- `business_seconds`: how long the resolution took in business time (default 45);
- `chat_widget`: "online" (default) or "offline" (nothing the agent says is delivered);
- `report_usage`: true (default) or false (the app does not report token usage).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from examples.support._review import Completed, NotCompleted, Speech, SupportFacts
from niceeval_cli import AdapterContext, Fact, Material


class Switches(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    resolution: Literal["resolved", "abandoned", "unobserved"] = "resolved"
    business_seconds: float = Field(default=45, ge=0)
    chat_widget: Literal["online", "offline"] = "online"
    report_usage: bool = True


# (actor, text, model-generated?) — the agent's last line comes from a canned macro.
SCRIPT: tuple[tuple[str, str, bool], ...] = (
    ("customer", "Hi, I was charged twice for order #4821.", False),
    ("agent", "I'm sorry about that. I can see two charges of $39.00 on order #4821, so I've refunded the "
              "duplicate one. You'll see it on your statement within 3 to 5 business days.", True),
    ("customer", "Great, thanks. Will I get an email about it?", False),
    ("agent", "Yes, a confirmation email is on its way to the address on your account.", True),
    ("agent", "Is there anything else I can help you with today?", False),
)


def run_conversation(switches: Switches) -> tuple[list[Speech], Fact[Completed | NotCompleted], tuple[int, int]]:
    speeches = []
    tokens_in = tokens_out = 0
    customer_left = False
    for actor, text, generated in SCRIPT:
        if actor == "agent" and generated:
            tokens_in, tokens_out = tokens_in + 900, tokens_out + 60
        # The customer closes the chat right after their last message: the macro never arrives.
        delivered = not customer_left and (actor == "customer" or switches.chat_widget == "online")
        speeches.append(Speech(actor, text, delivered, "verified" if generated else "unknown"))
        if actor == "customer" and text.startswith("Great"):
            customer_left = True
    completion: Fact[Completed | NotCompleted]
    if switches.resolution == "resolved":
        completion = Fact.available(Completed("evt-resolved-4821", switches.business_seconds))
    elif switches.resolution == "abandoned":
        completion = Fact.available(NotCompleted("obs-end-4821"))
    else:
        completion = Fact.unavailable("completion-event-missing")
    return speeches, completion, (tokens_in, tokens_out)


async def observe(ctx: AdapterContext) -> SupportFacts:
    switches = Switches.model_validate(dict(ctx.experiment.options))
    speeches, completion, (tokens_in, tokens_out) = run_conversation(switches)
    if switches.report_usage:
        ctx.record_usage(input_tokens=tokens_in, output_tokens=tokens_out)
    return SupportFacts(speeches=Material.complete(speeches), completion=completion)
