"""The shortest useful evals: two pass-style checks of the agent, one of them with a judge."""

from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, excludes, includes, pattern


@define_eval(description="Greets the customer by name", tags=["smoke"])
async def greeting(t):
    turn = await t.send("Hi, I'm Ada.")
    t.check(turn.message, includes("Ada")).label("Uses the customer's name")
    t.check(turn.message, excludes("As an AI", case_sensitive=False)).label("No boilerplate")


@define_eval(description="States the refund window", tags=["smoke"], judge=True)
async def refund_window(t):
    turn = await t.send("How long is the refund window?")
    t.check(turn.message, pattern(r"\b30 days\b")).label("Mentions 30 days")
    t.check(
        {"input": turn.input, "output": turn.message},
        closed_qa("Does the answer state the refund window clearly?").at_least(0.8),
    ).gate().label("Clear answer")
