"""One eval over the questions of a JSON Lines file: each line is a case, named by its "id"."""

from niceeval_cli import define_eval
from niceeval_cli.datasets import load_jsonl
from niceeval_cli.expect import includes


@define_eval(description="Answers with the shop's policy", tags=["datasets"], cases=load_jsonl("questions.jsonl"))
async def policy(t, case):
    turn = await t.send(case["question"])
    t.check(turn.message, includes(case["expected"])).label("States the policy")
