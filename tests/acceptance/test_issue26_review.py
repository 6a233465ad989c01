"""Issue 26 item 4 (judge-trust.md §3): `niceeval review`, a local labelling page.

The real `niceeval review` in a subprocess, a real loopback judge for the run, the page driven in
headless Chromium (Playwright): a click makes a label row, keys work, a write without the page's
token is refused and writes nothing, hostile text stays text, Ctrl-C ends it with exit 0."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import chromium_context
from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project, stop, wait_for

ENV = {"JK": "sk-test-reviewKey0123456789abcdef"}
HOSTILE = "<img src=x onerror=alert(1)></script><b>bold</b>"

EVALS = f'''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals, factuality


@define_eval(judge=True)
def capital(t):
    qa = {{"input": "What is the capital of France?", "output": {HOSTILE!r}}}
    t.check(qa, closed_qa("Does it name the capital?").at_least(1)).label("capital")
    t.check(qa, factuality("Paris is the capital of France.")).label("facts")
    t.check("x", equals("x")).label("exact")
'''


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The judged run every check reviews, made once (each check reviews a copy of its own)."""
    proj = Project(tmp_path_factory.mktemp("review") / "proj")
    with JudgeServer() as judge:
        judge.when("Paris is the capital", Reply.tool("A", "a subset " + HOSTILE))
        proj.write("niceeval.toml", f'''
            [judge]
            model = "judge-m"
            base_url = "{judge.base_url}"
            api_key_env = "JK"
        ''')
        proj.write("evals/e.py", EVALS)
        assert proj.run(env=ENV).returncode in (0, 1)
    return proj.root


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module's page checks; each opens a page of its own."""
    with chromium_context(tmp_path_factory.mktemp("profile")) as context:
        yield context


@pytest.fixture
def reviewed(judged: Path, tmp_path: Path) -> Iterator[tuple[Project, str, object]]:
    shutil.copytree(judged, tmp_path / "proj")
    proj = Project(tmp_path / "proj")
    server = proj.popen("review", "--author", "Ada", env=ENV)
    lines: list[str] = []
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        lines.append(line)
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        yield proj, url.group(0), server
    finally:
        stop(server, signal.SIGKILL)


def _labels(proj: Project) -> list[dict[str, object]]:
    return proj.sql("SELECT assertion_key, value, author, comment FROM labels ORDER BY created_at, id")


@pytest.mark.slow
def test_a_click_on_the_page_stores_one_label_and_keys_work_too(reviewed, browser):
    proj, url, server = reviewed
    with contextlib.closing(browser.new_page()) as page:
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(url) else None)
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(url)
        page.wait_for_selector(".scale button")
        assert "capital" in page.inner_text("h2")
        assert HOSTILE in page.inner_text("main")  # shown as text, never as markup
        assert page.locator("main img").count() == 0 and page.locator("main b").count() == 0
        page.fill("#comment", "names Paris")
        page.click(".scale button[data-value='0']")
        wait_for(lambda: len(_labels(proj)) == 1, timeout=20)
        assert _labels(proj) == [{"assertion_key": "capital", "value": 0.0, "author": "Ada", "comment": "names Paris"}]
        # The page moved on to the next judge assertion (factuality); key 2 picks its third value, 0.6.
        page.wait_for_function("() => document.querySelector('h2').textContent.startsWith('facts')")
        page.keyboard.press("2")
        wait_for(lambda: len(_labels(proj)) == 2, timeout=20)
        assert _labels(proj)[1]["assertion_key"] == "facts" and _labels(proj)[1]["value"] == 0.6
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => document.querySelector('h2').textContent.startsWith('capital')")
        assert "0 by Ada: names Paris" in page.inner_text("main")  # its earlier label, shown
        assert outside == [] and dialogs == []
    server.send_signal(signal.SIGINT)
    assert server.wait(timeout=30) == 0


@pytest.mark.slow
def test_a_label_saved_after_the_reader_moved_away_leaves_them_where_they_went(reviewed, browser):
    """The reply to a label arrives late (held here): the page moves on only from the item labelled."""
    proj, url, server = reviewed
    with contextlib.closing(browser.new_page()) as page:
        held: list[object] = []
        page.route("**/labels", lambda route: held.append(route))
        page.goto(url)
        page.wait_for_selector(".scale button")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => document.querySelector('h2').textContent.startsWith('facts')")
        page.keyboard.press("2")  # labels facts; its reply is held
        wait_for(lambda: page.wait_for_timeout(50) or len(held) == 1, timeout=20)
        page.keyboard.press("ArrowLeft")  # the reader goes back before the reply arrives
        page.wait_for_function("() => document.querySelector('h2').textContent.startsWith('capital')")
        held[0].continue_()  # type: ignore[attr-defined]
        wait_for(lambda: page.wait_for_timeout(50) or "saved 0.6" in page.inner_text("#status"), timeout=20)
        assert page.inner_text("h2").startswith("capital")
        assert [r["value"] for r in _labels(proj)] == [0.6]
    server.send_signal(signal.SIGINT)
    assert server.wait(timeout=30) == 0


def test_a_write_without_the_page_token_is_refused_and_writes_nothing(reviewed):
    proj, url, _server = reviewed
    attempt = proj.sql("SELECT id FROM attempts")[0]["id"]
    body = json.dumps({"attempt_id": attempt, "key": "capital", "value": 1}).encode()
    for headers in ({"Content-Type": "application/json"},
                    {"Content-Type": "application/json", "X-NiceEval-Token": "guessed"}):
        request = urllib.request.Request(url + "labels", data=body, headers=headers, method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 403
    assert _labels(proj) == []
    page = urllib.request.urlopen(url, timeout=10).read().decode()
    token = re.search(r'name="niceeval-token" content="([^"]+)"', page).group(1)
    ok = urllib.request.Request(url + "labels", data=body, method="POST",
                                headers={"Content-Type": "application/json", "X-NiceEval-Token": token})
    assert json.loads(urllib.request.urlopen(ok, timeout=10).read())["value"] == 1.0
    assert [r["value"] for r in _labels(proj)] == [1.0]
    assert "default-src 'none'" in page and "http://" not in page.split("</head>")[0].replace(url, "")
