"""The shop behind the support agent: a few orders and the tools the agent may call.

Deterministic and in memory. Each attempt gets its own `Shop`, so a refund in one eval never
leaks into another.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ToolFailed(Exception):
    """A tool refused the call (the agent sees the error and may recover)."""


@dataclass
class Order:
    id: str
    item: str
    paid: float
    status: str = "delivered"


@dataclass
class Shop:
    orders: dict[str, Order] = field(default_factory=lambda: {
        "A1": Order("A1", "kettle", 30.0),
        "B2": Order("B2", "toaster", 45.0, status="shipped"),
    })

    def lookup_order(self, order_id: str) -> dict[str, object]:
        order = self.orders.get(order_id)
        if order is None:
            raise ToolFailed(f"no order {order_id!r}")
        return {"order_id": order.id, "item": order.item, "paid": order.paid, "status": order.status}

    def refund(self, order_id: str, amount: float) -> dict[str, object]:
        order = self.orders[order_id]
        if amount > order.paid:
            raise ToolFailed(f"refund {amount} exceeds the {order.paid} paid")
        order.status = "refunded"
        return {"order_id": order_id, "refunded": amount}

    def cancel_order(self, order_id: str) -> dict[str, object]:
        self.orders[order_id].status = "cancelled"
        return {"order_id": order_id, "status": "cancelled"}

    def search_faq(self, query: str) -> list[str]:
        faq = {
            "shipping": "Orders ship within 2 business days.",
            "refund": "Refunds are possible within 30 days of delivery.",
        }
        return [answer for topic, answer in faq.items() if topic in query.lower()]
