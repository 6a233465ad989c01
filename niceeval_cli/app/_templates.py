"""What `niceeval init` writes: a project that runs as it is (no adapter, no judge key)."""

CONFIG_TEMPLATE = """\
# NiceEval project settings (docs/configuration.md). Run `niceeval run`, then `niceeval view`.

[project]
evals = ["evals"]                # where eval modules live
store = ".niceeval/results.db"   # sealed results (SQLite); add .niceeval/ to .gitignore
attempts = 1
max_concurrency = 4

# Without an [experiments.*] table there is one experiment, `default`, with no adapter: evals
# that check values they compute themselves (like evals/example.py) run as they are.
# To test your application, give an experiment an adapter (module:attr, or a built-in:
# python, command, http, openai-chat):
#
# [experiments.local]
# adapter = "python"
# model = "gpt-4o-mini"
# [experiments.local.options]
# callable = "myapp.chat:answer"

# Judge assertions (closed_qa, factuality, summarizes) need a judge model and a key variable:
#
# [judge]
# model = "gpt-4o-mini"
# api_key_env = "OPENAI_API_KEY"   # the variable's NAME; put the value in .env or the environment
"""

EXAMPLE_TEMPLATE = '''\
"""Example evals: they run as they are (no adapter, no judge key) and pass.

Replace `answer` with a call into your application, or give the experiment an adapter in
niceeval.toml and use `await t.send(...)`.
"""

from niceeval_cli import define_eval, define_score_eval
from niceeval_cli.expect import includes, pattern, similarity


def answer(question: str) -> str:
    """Stands in for the system under test."""
    return "You can return any item within 30 days of delivery for a full refund."


@define_eval(description="The refund window is stated", tags=["example"])
def refund_window(t):
    reply = answer("How long is the refund window?")
    t.check(reply, includes("30 days")).label("Mentions 30 days")
    t.check(reply, pattern(r"\\brefund")).label("Talks about refunds")


@define_score_eval(description="How close the reply is to the reference wording", tags=["example"])
def refund_wording(t):
    reply = answer("How long is the refund window?")
    t.check(reply, includes("30 days")).gate().label("States the window")
    t.check(reply, similarity("Items can be returned within 30 days of delivery for a refund.")).score(10).label(
        "Close to the reference"
    )
'''
