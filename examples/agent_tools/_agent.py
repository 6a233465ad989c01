"""A small tool-using support agent with a scripted "model" (no network, deterministic).

`SupportAgent.reply(message)` decides which tools to call from the words of the message, calls
them on the shop, and answers. It returns the reply text and a list of `ToolCall`s — what a real
agent framework would report. The `refund_tool` switch is the broken variant: an agent that calls
`cancel_order` where it should refund.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from examples.agent_tools._shop import Shop, ToolFailed
from niceeval_cli import Message, ToolCall

_ORDER = re.compile(r"\border\s+([A-Za-z]\d+)\b", re.IGNORECASE)


@dataclass
class SupportAgent:
    shop: Shop
    refund_tool: str = "refund"
    history: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)

    def _call(self, name: str, **arguments: Any) -> Any:
        started = time.monotonic() * 1000
        try:
            output = getattr(self.shop, name)(**arguments)
        except ToolFailed as exc:
            self.calls.append(ToolCall(name, input=arguments, status="failed", error=str(exc),
                                       started_ms=started, ended_ms=time.monotonic() * 1000))
            return None
        self.calls.append(ToolCall(name, input=arguments, output=output, started_ms=started,
                                   ended_ms=time.monotonic() * 1000))
        return output

    def reply(self, message: str) -> tuple[str, list[ToolCall], list[Message]]:
        self.calls = []
        self.history.append(message)
        text = message.lower()
        found = _ORDER.search(message)
        order_id = found.group(1) if found else self._remembered_order()
        if order_id is not None and ("refund" in text or "status" in text or "where" in text):
            order = self._call("lookup_order", order_id=order_id)
            if order is None and order_id != order_id.upper():  # recover: ids are upper-case
                order_id = order_id.upper()
                order = self._call("lookup_order", order_id=order_id)
            if order is None:
                answer = f"I could not find order {order_id}."
            elif "refund" in text:
                if self.refund_tool == "refund":
                    self._call("refund", order_id=order_id, amount=order["paid"])
                    answer = f"I have refunded {order['paid']:.2f} for your {order['item']} (order {order_id})."
                else:
                    self._call(self.refund_tool, order_id=order_id)
                    answer = f"Order {order_id} has been taken care of."
            else:
                answer = f"Your {order['item']} (order {order_id}) is {order['status']}."
        else:
            hits = self._call("search_faq", query=message)
            answer = " ".join(hits) if hits else "Could you tell me your order number?"
        return answer, self.calls, [Message("user", message), Message("assistant", answer)]

    def _remembered_order(self) -> str | None:
        for earlier in reversed(self.history[:-1]):
            found = _ORDER.search(earlier)
            if found:
                return found.group(1)
        return None
