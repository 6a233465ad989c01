"""The system under test of the quickstart: a tiny rule-based support agent.

Replace it with your own application. The built-in `python` adapter calls `reply(message)`
for every `t.send(message)`; returning a dict lets it report token usage too.
"""

from __future__ import annotations

import re


def reply(message: str) -> dict[str, object]:
    text = message.lower()
    if "refund" in text:
        answer = "You can return any item within 30 days of delivery for a full refund."
    elif name := re.search(r"\bi'?m (\w+)", message, re.IGNORECASE):
        answer = f"Hello {name.group(1)}, how can I help you today?"
    else:
        answer = "Could you tell me a bit more about what you need?"
    return {
        "message": answer,
        "usage": {"input_tokens": len(message.split()) * 2, "output_tokens": len(answer.split()) * 2},
    }
