"""A judge key with characters that change when encoded (quotes, backslashes), a line break or
a non-ASCII character never reaches the store or the output in any encoding (issue 9, 8 and 9)."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from tests.support.judge_e2e import KEY_ENV
from tests.support.loopback import Reply

ECHO = """
    import json
    import os

    @define_eval(judge=True)
    def leaky(t):
        key = os.environ["JK"]
        leaked = {"input": "show config", "output": "key=" + key, "nested": {"k": key},
                  "as_json": json.dumps({"k": key}), "as_repr": repr(key)}
        t.check(leaked, closed_qa("Does it leak? marker-echo")).label("echo")
        t.check(leaked, closed_qa("Does it leak? marker-invalid")).label("invalid")
        t.check(leaked, closed_qa("Does it leak? marker-error")).label("error")
        t.check({"k": key}, lambda v: (False, "value was " + repr(v) + " " + json.dumps(v)))

    @define_eval()
    def raises(t):
        raise RuntimeError({"cannot connect with": os.environ["JK"]})
"""

QUOTED_KEY = 'pl"ain\\judge\'secret-4471'


def _encodings(key: str) -> list[str]:
    return [key, json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1], repr(key)[1:-1],
            json.dumps(json.dumps(key))[1:-1], urllib.parse.quote(key), urllib.parse.quote_plus(key)]


def _store_dump(judged) -> str:
    tables = [r["name"] for r in judged.sql("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return "\n".join(json.dumps(judged.sql(f'SELECT * FROM "{t}"'), ensure_ascii=False) for t in tables)


def test_a_key_with_quotes_and_backslashes_is_redacted_in_every_encoding(judged):
    key = QUOTED_KEY
    judged.setup(ECHO)
    judged.server.when("marker-echo", Reply.tool("Y", f"I saw {key} and {json.dumps(key)} and {key!r}"))
    judged.server.when("marker-invalid", Reply.text(f"not a grade, but here is {key!r}"))
    judged.server.when("marker-error", Reply.error(400, f"bad request from {json.dumps(key)}"))

    run = judged.run("--junit", "junit.xml", key=key)
    assert run.exit_code in (1, 5), run.stderr
    run_id = judged.sql("SELECT id FROM runs ORDER BY id DESC LIMIT 1")[0]["id"]
    outputs = [run, judged.project.cli("view", run_id, "--all"),
               judged.project.cli("query", "assertions", "--format", "json")]
    texts = [o.stdout + o.stderr for o in outputs]
    texts.append((judged.project.root / "junit.xml").read_text())
    # the store's raw rows: the JSON text of evidence / audit is stored as is
    texts.append("\n".join(str(v) for r in judged.sql("SELECT * FROM assertion_results") for v in r.values()))
    texts.append("\n".join(str(v) for r in judged.sql("SELECT * FROM attempts") for v in r.values()))
    for text in texts:
        for form in _encodings(key):
            assert form not in text, (form, text[max(0, text.find(form) - 200):text.find(form) + 50])
    assert "[redacted]" in texts[-2]


def _stored_rows(judged) -> list[dict]:
    """Every assertion row exactly as the store file holds it (no reader in between)."""
    import sqlite3

    files = [p for p in (judged.project.root / ".niceeval").iterdir() if p.suffix == ".db"]
    with sqlite3.connect(files[0]) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM assertion_results")]


SIMPLE = """
    @define_eval(judge=True)
    def graded(t):
        t.check(QA, closed_qa("Is it Paris?"))
"""


@pytest.mark.parametrize(("key", "problem"), [
    ("sk-firstline-abcdef0123456789\nsecondline-SECRET", "line break"),
    ("sk-clé-abcdef0123456789-SECRET", "non-ASCII"),
    ("sk-tab\tabcdef0123456789-SECRET", "control character"),
], ids=["newline", "non-ascii", "tab"])
def test_a_key_that_cannot_be_a_header_is_a_setup_error_naming_the_variable(judged, key, problem):
    judged.setup(SIMPLE)

    run = judged.run(key=key)

    assert run.exit_code == 3, run.stdout + run.stderr
    output = run.stdout + run.stderr
    assert KEY_ENV in output and problem in output
    assert "SECRET" not in output and "secondline" not in output and "abcdef0123456789" not in output
    assert "Traceback" not in output
    assert judged.grading == [] and judged.server.requests == []  # nothing was sent with it
    for row in _stored_rows(judged):
        assert "SECRET" not in json.dumps(row)
