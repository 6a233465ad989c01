"""A promptfoo test file run unchanged: each test is a case, each of its assertions a check.

`load_promptfoo` reads the file promptfoo reads; `from_promptfoo` maps each assertion to a match.
Every check is a gate, as every promptfoo assertion must hold (a judge item, too, then decides).
The `javascript` assertion has no NiceEval equivalent: it is `unavailable`
(`unsupported-assertion:javascript`), never a silent pass.
"""

from niceeval_cli import define_eval
from niceeval_cli.datasets import load_promptfoo
from niceeval_cli.expect import from_promptfoo

PROMPT = "Answer briefly: {question}"


@define_eval(description="The promptfoo suite, moved over", tags=["promptfoo"], judge=True,
             cases=load_promptfoo("tests.yaml"))
async def suite(t, case):
    turn = await t.send(PROMPT.format(**case))
    for number, assertion in enumerate(t.case_metadata["assert"], 1):
        shown = assertion.get("value", "")
        t.check(turn.message, from_promptfoo(assertion)).label(f"{number}. {assertion['type']} {shown}".strip()).gate()
