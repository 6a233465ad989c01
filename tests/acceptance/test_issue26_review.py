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
REBOUND_RULE = "--host-resolver-rules=MAP rebound.test 127.0.0.1"
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
    """One headless Chromium for the module's page checks; each opens a page of its own. The name
    `rebound.test` resolves to 127.0.0.1 in it, as a DNS-rebinding attacker's name would."""
    with chromium_context(tmp_path_factory.mktemp("profile"), extra_args=(REBOUND_RULE,)) as context:
        yield context


@contextlib.contextmanager
def _serving(proj: Project, *args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, Any]]:
    """`niceeval review ARGS` started, its URL (the first line it prints) and the process; stopped at the end."""
    server = proj.popen("review", *args, env=env)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        yield url.group(0), server
    finally:
        stop(server, signal.SIGKILL)


@pytest.fixture
def reviewed(judged: Path, tmp_path: Path) -> Iterator[tuple[Project, str, object]]:
    shutil.copytree(judged, tmp_path / "proj")
    proj = Project(tmp_path / "proj")
    with _serving(proj, "--author", "Ada", env=ENV) as (url, server):
        yield proj, url, server


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


def _post(url: str, body: bytes, token: str, host: str | None = None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "X-NiceEval-Token": token, **({"Host": host} if host else {})}
    request = urllib.request.Request(url + "labels", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _token(url: str) -> str:
    page = urllib.request.urlopen(url, timeout=10).read().decode()
    return re.search(r'name="niceeval-token" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize(("body", "says"), [
    ('{{"attempt_id": "{a}", "key": 5, "value": 1}}', "key: text"),  # never the whole attempt instead
    ('{{"attempt_id": "{a}", "value": 1}}', "key: text"),
    ('{{"attempt_id": "{a}", "key": "capital", "value": 1, "comment": 12}}', "comment?: text"),  # never dropped
    ('{{"attempt_id": "{a}", "key": "capital", "value": 1' + "9" * 400 + '}}', "not on the scale"),
    ('{{"attempt_id": "{a}", "key": "capital", "value": 1, "comment": "x\\ud800"}}', "not valid Unicode"),
    ("[" * 100_000 + "]" * 100_000, "expected a JSON object"),
    ('{{"attempt_id": "{a}", "key": "nokey", "value": 1}}', "'nokey'"),
], ids=["key-number", "key-missing", "comment-number", "value-huge", "lone-surrogate", "deep", "unknown-key"])
def test_a_write_with_a_bad_field_is_a_clear_400_and_writes_nothing(reviewed, body, says):
    proj, url, _server = reviewed
    attempt = proj.sql("SELECT id FROM attempts")[0]["id"]
    status, answer = _post(url, body.format(a=attempt).encode(), _token(url))
    assert status == 400 and says in json.loads(answer)["error"], (status, answer)
    assert _labels(proj) == []
    good = json.dumps({"attempt_id": attempt, "key": "capital", "value": 1}).encode()
    assert _post(url, good, _token(url))[0] == 200  # the server goes on answering
    assert [r["assertion_key"] for r in _labels(proj)] == ["capital"]


def test_a_request_naming_another_host_is_refused_so_a_rebound_name_reads_and_writes_nothing(reviewed):
    """DNS rebinding: a site whose name now points at 127.0.0.1 is, to the browser, its own origin."""
    proj, url, _server = reviewed
    port = url.rsplit(":", 1)[1].rstrip("/")
    attempt = proj.sql("SELECT id FROM attempts")[0]["id"]
    token = _token(url)
    page = urllib.request.Request(url, headers={"Host": f"attacker.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(page, timeout=10)
    assert refused.value.code == 400 and token not in refused.value.read().decode()
    body = json.dumps({"attempt_id": attempt, "key": "capital", "value": 1}).encode()
    assert _post(url, body, token, host=f"attacker.example:{port}")[0] == 400
    assert _labels(proj) == []
    local = urllib.request.Request(url, headers={"Host": f"localhost:{port}"})  # the usual name still works
    assert urllib.request.urlopen(local, timeout=10).status == 200


@pytest.mark.slow
def test_a_rebound_name_in_the_browser_shows_no_page_and_posts_nothing(reviewed, browser):
    """The real attack in Chromium: `rebound.test` resolves to 127.0.0.1; its page would read the token
    and post a label (same origin, so no preflight)."""
    proj, url, _server = reviewed
    port = url.rsplit(":", 1)[1].rstrip("/")
    with contextlib.closing(browser.new_page()) as page:
        page.goto(f"http://rebound.test:{port}/")
        assert page.locator(".scale button").count() == 0 and "capital" not in page.content()
        status = page.evaluate("""() => fetch('/labels', {method: 'POST', headers: {'Content-Type': 'application/json',
            'X-NiceEval-Token': 'read-from-the-page'}, body: '{}'}).then(r => r.status)""")
        assert status == 400
    assert _labels(proj) == []


@pytest.mark.slow
def test_controls_and_bidi_overrides_in_a_comment_and_author_show_escaped_as_in_the_report(judged, tmp_path, browser):
    shutil.copytree(judged, tmp_path / "proj")
    proj = Project(tmp_path / "proj")
    serving = _serving(proj, "--author", "Ada\u202eevil", env=ENV)
    with serving as (url, _), contextlib.closing(browser.new_page()) as page:
        page.goto(url)
        page.wait_for_selector(".scale button")
        page.fill("#comment", "names \u202eParis\u0007")
        page.click(".scale button[data-value='0']")
        page.wait_for_function("() => document.querySelector('h2').textContent.startsWith('facts')")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => document.querySelector('h2').textContent.startsWith('capital')")
        shown = page.inner_text("main")
        assert "0 by Ada\\u202eevil: names \\u202eParis\\x07" in shown, shown
        assert "\u202e" not in shown and "\u0007" not in shown
    assert _labels(proj)[0]["comment"] == "names \u202eParis\u0007"  # stored exactly as typed


def test_an_empty_author_is_refused_before_the_page_is_served(judged, tmp_path):
    shutil.copytree(judged, tmp_path / "proj")
    done = Project(tmp_path / "proj").cli("review", "--author", "  ", env=ENV, timeout=60)
    assert done.returncode == 2 and "--author is empty" in done.stderr, done.stdout + done.stderr


@pytest.mark.slow
def test_a_case_shows_its_id_once_in_the_eval_id(tmp_path, browser):
    proj = Project(tmp_path / "proj")
    proj.write("evals/cased.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(cases={"r-017": 1})
        def refunds(t, case):
            t.check(case, equals(2)).label("two")
    ''')
    assert proj.run().returncode == 1
    with _serving(proj, "--only", "all", "--author", "Ada") as (url, _), contextlib.closing(browser.new_page()) as page:
        page.goto(url)
        page.wait_for_selector(".scale button")
        meta = page.inner_text("p.meta")
        assert "cased[r-017] · @" in meta and meta.count("r-017") == 1, meta


def test_a_write_waiting_on_a_busy_store_leaves_the_page_answering_and_lands_once_the_store_is_free(reviewed):
    """A run holds the store's write lock: the label waits for it, the server keeps answering meanwhile."""
    import sqlite3
    import threading
    import time

    proj, url, _server = reviewed
    attempt = proj.sql("SELECT id FROM attempts")[0]["id"]
    token = _token(url)
    answers: list[tuple[int, str]] = []
    lock = sqlite3.connect(proj.store, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")
        body = json.dumps({"attempt_id": attempt, "key": "capital", "value": 0}).encode()
        writer = threading.Thread(target=lambda: answers.append(_post(url, body, token)))
        writer.start()
        time.sleep(0.5)  # the write is waiting on the lock now
        started = time.monotonic()
        assert urllib.request.urlopen(url, timeout=30).status == 200
        assert time.monotonic() - started < 3  # it did not wait for the write (up to the 10 s busy timeout)
        lock.execute("ROLLBACK")
        writer.join(timeout=30)
    finally:
        lock.close()
    assert answers and answers[0][0] == 200, answers
    assert [r["assertion_key"] for r in _labels(proj)] == ["capital"]


@pytest.mark.slow
def test_the_page_does_not_open_inside_another_pages_frame(reviewed, browser):
    """Framed, its buttons could be clicked by a page laid over it (clickjacking)."""
    _proj, url, _server = reviewed
    with contextlib.closing(browser.new_page()) as page:
        page.set_content(f'<iframe src="{url}" width="900" height="700"></iframe>')
        page.wait_for_timeout(1000)
        (frame,) = [f for f in page.frames if f is not page.main_frame]
        assert frame.query_selector(".scale button") is None, frame.url
