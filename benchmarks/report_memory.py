"""What `niceeval report` holds in memory for a run whose texts are huge (issue 23, item 17).

Run: python benchmarks/report_memory.py [ATTEMPTS] [--browser]   (default 1 000 attempts, ~170 MB)

The store is one run whose every text is as long as NiceEval stores (20 000 characters a reply,
long evidence and tool-call inputs and outputs, all distinct): the kind of store that made the
report peak at ~7x its size (a 178 MB store → 1.27 GB, a 175 MB page). It prints the store's
size, the report CLI's peak RSS (its own VmHWM, interpreter start-up included), its wall time,
the page's size, and with --browser how long headless Chromium takes to the `load` event.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a checkout, uninstalled

from niceeval_cli._ids import new_id
from niceeval_cli.store import Store
from niceeval_cli.store.schema import (
    ASSERTION_COLUMNS,
    ATTEMPT_COLUMNS,
    EVENT_COLUMNS,
    INSERT_ASSERTION,
    INSERT_ATTEMPT,
    INSERT_SLOT,
    TURN_COLUMNS,
    insert_sql,
)

RESULTS = 10
TURNS = 4
REPLY = 20_000  # characters: what the store keeps of one text at most (agents.md)
EVIDENCE = 4_000
TOOL_IO = 6_000
_PREFIX = new_id()[:10]
_counter = itertools.count()


def _id() -> str:
    return f"{_PREFIX}{next(_counter):016X}"


def _text(n: int) -> str:
    return os.urandom(n // 2).hex()


def build(path: Path, attempts: int) -> str:
    Store.open(path).close()
    run_id = new_id()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous = OFF")
    with conn:
        conn.execute(
            "INSERT INTO runs (id, started_at, ended_at, status, argv, niceeval_version, exit_code, config_file, "
            "experiments) VALUES (?, ?, NULL, 'running', '[\"run\"]', 'bench', NULL, NULL, '[\"a\",\"b\"]')",
            (run_id, "2025-01-01T00:00:00.000Z"),
        )
    insert_turn, insert_event = insert_sql("turns", TURN_COLUMNS), insert_sql("events", EVENT_COLUMNS)
    for start in range(0, attempts, 200):
        with conn:
            for n in range(start, min(attempts, start + 200)):
                attempt_id = _id()
                failed = n % 10 == 0
                attempt = {c: None for c in ATTEMPT_COLUMNS} | {
                    "id": attempt_id, "run_id": run_id, "experiment_id": "ab"[n % 2], "eval_id": f"suite/e{n // 2:05d}",
                    "ordinal": 0, "kind": "pass", "state": "failed" if failed else "passed", "fingerprint": "f" * 64,
                    "fingerprint_parts": '{"model":"m"}', "started_at": "2025-01-01T00:00:00.000Z",
                    "ended_at": "2025-01-01T00:00:01.000Z", "duration_ms": 1000.0, "judge_tokens": 0,
                    "error": _text(REPLY) if failed else None,
                }
                conn.execute(INSERT_ATTEMPT, tuple(attempt.values()))
                for i in range(RESULTS):
                    bad = failed and i == 0
                    result = {c: None for c in ASSERTION_COLUMNS} | {
                        "id": _id(), "attempt_id": attempt_id, "ordinal": i, "key": f"k{i}", "label": f"check {i}",
                        "role": "gate", "state": "mismatched" if bad else "matched",
                        "explanation": _text(REPLY) if bad else None, "match_name": "includes",
                        "match_config": '{"text":"x"}', "evidence": '"' + _text(EVIDENCE) + '"',
                        "source_file": "evals/big.py", "source_line": 10 + i, "or_stop": 0, "match_kind": "boolean",
                    }
                    conn.execute(INSERT_ASSERTION, tuple(result.values()))
                for t in range(TURNS):
                    conn.execute(insert_turn, (attempt_id, "s0", t, "question " + str(t), _text(REPLY), "completed",
                                               '["messages","tool_calls"]', 10, 5, None, 12.0, None))
                    for seq in range(2):
                        conn.execute(insert_event, (attempt_id, t, seq, "tool_call", "lookup", None,
                                                    '"' + _text(TOOL_IO) + '"', '"' + _text(TOOL_IO) + '"', "ok", None))
                conn.execute(INSERT_SLOT, (run_id, "ab"[n % 2], f"suite/e{n // 2:05d}", 0, attempt_id, "origin",
                                           "new", "any"))
    with conn:
        conn.execute("UPDATE runs SET status = 'finished', ended_at = ?, exit_code = 1 WHERE id = ?",
                     ("2025-01-01T00:10:00.000Z", run_id))
    conn.close()
    return run_id


_WRAPPER = (
    "import sys\n"
    "sys.argv = ['niceeval', *sys.argv[1:]]\n"
    "from niceeval_cli.cli import main\n"
    "try:\n    main()\n"
    "except SystemExit as e:\n    code = e.code\n"
    "else:\n    code = 0\n"
    "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')).split()[1]\n"
    "sys.stderr.write(f'\\n__RSS__ {hwm}\\n')\n"
    "sys.exit(code)\n"
)


def report(store: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of `niceeval report --store STORE --out OUT`."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _WRAPPER, "report", "--store", str(store), "--out", str(out)],
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"report exited {done.returncode}: {done.stderr}")
    rss = next(int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("__RSS__ "))
    return wall, rss / 1024


def browse(page_path: Path, profile: Path) -> float | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = os.environ.get("NICEEVAL_CHROMIUM") or "/usr/bin/chromium"
    if not Path(chromium).is_file():
        return None
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=chromium, headless=True, args=["--headless", "--no-sandbox"])
        page = context.new_page()
        started = time.perf_counter()
        page.goto(page_path.as_uri(), wait_until="load", timeout=300_000)
        page.wait_for_function("() => document.getElementById('attempts').dataset.complete", timeout=300_000)
        took = time.perf_counter() - started
        context.close()
    return took


def main(attempts: int = 1_000, browser: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = folder / "results.db"
        started = time.perf_counter()
        build(store, attempts)
        size = store.stat().st_size / 2**20
        print(f"built {attempts:,} attempts ({size:.0f} MiB store) in {time.perf_counter() - started:.1f} s")
        out = folder / "report.html"
        wall, rss = report(store, out)
        print(f"{'niceeval report: wall clock':<44} {wall:.1f} s")
        print(f"{'niceeval report: peak RSS (VmHWM)':<44} {rss:.0f} MiB ({rss / size:.2f}x the store)")
        print(f"{'report file':<44} {out.stat().st_size / 2**20:.1f} MiB")
        if browser:
            took = browse(out, folder / "profile")
            print(f"{'chromium: load and every row built':<44} " + (f"{took:.1f} s" if took else "skipped"))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(*(int(a) for a in args[:1]), browser="--browser" in sys.argv)
