"""The system under test of the datasets example: a shop's policy bot and its price calculator.

`reply(message)` is called by the built-in `python` adapter for every `t.send(message)`;
`order_total` is plain code that `totals.py` checks directly, row by row.
"""

from __future__ import annotations

_POLICIES = (
    (("gift card",), "Gift cards cannot be refunded, but they never expire."),
    (("damaged", "broken"), "We replace damaged items for free: send us a photo."),
    (("return", "refund"), "You can return any item within 30 days of delivery for a full refund."),
    (("ship", "deliver", "arrive"), "Orders arrive in 3 to 5 business days."),
    (("warranty", "guarantee"), "Every appliance has a 2 year warranty."),
)

PRICES = {"kettle": 40.0, "mug": 8.5, "teapot": 25.0}
COUPONS = {"": 0.0, "WELCOME10": 0.10, "HALF": 0.50}


def reply(message: str) -> str:
    text = message.lower()
    for words, answer in _POLICIES:
        if any(word in text for word in words):
            return answer
    return "Could you tell me a bit more about what you need?"


def order_total(item: str, quantity: int, coupon: str) -> float:
    """The price of `quantity` items after the coupon, rounded to cents."""
    return round(PRICES[item] * quantity * (1 - COUPONS[coupon]), 2)
