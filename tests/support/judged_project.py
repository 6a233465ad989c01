"""A judged project for the regrade checks (issue 26) and the stored-folds checks (issue 25):
one eval calling a loopback system under test, graded by a loopback judge whose models answer
differently, so a regrade with another model changes verdicts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tests.support.loopback import JudgeServer, Loopback, Reply
from tests.support.project import Project

__all__ = ["ENV", "EVALS", "Judges", "answering_sut", "latest_run", "running_judges", "write_judged_project"]

ENV = {"JK": "sk-test-regradeKey0123456789abcdef"}
EVALS = '''
import pathlib
import urllib.request

from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals

SUT = "{sut}"
RAN = pathlib.Path(__file__).with_name("ran.log")


@define_eval(judge=True)
async def capital(t):
    with RAN.open("a") as log:  # eval code ran: regrade must never add a line
        log.write("capital\\n")
    answer = urllib.request.urlopen(SUT + "/answer").read().decode()
    t.check(answer, equals("Paris.")).label("exact")
    await t.check({{"input": "What is the capital of France?", "output": answer}},
                  closed_qa("Does it name the capital?").at_least(1)).gate().label("capital").or_stop()
    t.check({{"input": "Is it polite?", "output": answer}}, closed_qa("Is the answer polite?")).label("polite")
'''


class Judges:
    """The loopback judge: model `judge-a` says Y to everything, `judge-b` says N to the capital
    question; `counts()` is the grading requests per model."""

    def __init__(self) -> None:
        self.server = JudgeServer().start()
        self.server.default = Reply.tool("Y", "judge-a agrees")
        self.server.when("judge-b", Reply.tool("N", "judge-b disagrees"))

    def counts(self) -> dict[str, int]:
        seen: dict[str, int] = {}
        for request in self.server.grading_requests:
            model = str(request.json["model"])  # type: ignore[index]
            seen[model] = seen.get(model, 0) + 1
        return seen


def write_judged_project(proj: Project, judges: Judges, sut: Loopback, *, attempts: int = 2,
                         extra: str = "") -> None:
    proj.write("niceeval.toml", f'''
        [project]
        attempts = {attempts}

        [judge]
        model = "judge-a"
        base_url = "{judges.server.base_url}"
        api_key_env = "JK"
        max_retries = 0
        {extra}
    ''')
    proj.write("evals/capital.py", EVALS.format(sut=sut.url))


def latest_run(proj: Project) -> dict[str, object]:
    return proj.sql("SELECT * FROM runs ORDER BY started_at DESC, id DESC LIMIT 1")[0]


@contextlib.contextmanager
def running_judges() -> Iterator[Judges]:
    made = Judges()
    try:
        yield made
    finally:
        made.server.stop()


@contextlib.contextmanager
def answering_sut() -> Iterator[Loopback]:
    """The system under test: answers "Paris." to every request."""
    server = Loopback(lambda method, path, body: (200, b"Paris.", "text/plain"))
    try:
        yield server
    finally:
        server.stop()
