"""Four support answers graded by one `closed_qa` judge: the example of trusting a judge
(examples/README.md, "trust"; docs/judge.md, "Trusting your judge")."""

from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, is_true

CRITERION = "Does the answer fully answer the customer's question?"


def _grade(t, question: str, answer: str) -> None:
    t.check(bool(answer.strip()), is_true()).label("answered")
    t.check({"input": question, "output": answer}, closed_qa(CRITERION).at_least(1)).gate().label("full answer")


@define_eval(description="Refund window", judge=True)
def refund_window(t):
    _grade(t, "How long is the refund window?",
           "You can return any item within 30 days of delivery for a full refund.")


@define_eval(description="Shipping time", judge=True)
def shipping_time(t):
    _grade(t, "How long does shipping take?", "3-5 days.")


@define_eval(description="Opening hours", judge=True)
def opening_hours(t):
    _grade(t, "When is the store open?",
           "Monday to Saturday from 9:00 to 18:00; the store is closed on Sundays and public holidays.")


@define_eval(description="Warranty", judge=True)
def warranty(t):
    _grade(t, "Is there a warranty on the headphones?", "Yes.")
