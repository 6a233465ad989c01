"""How fast `niceeval report` writes a large run, and how the page behaves in headless Chromium.

Run: python benchmarks/report_large.py [ATTEMPTS] [RESULTS_PER_ATTEMPT]   (default 10 000 x 10)
Target (reports.md): 10 000 attempts / 100 000 assertion results → the report is written in a
few seconds (wall clock of the whole CLI process), and the page stays responsive: its top is
on screen in a fraction of a second while the rest streams in, a filter answers in well under
100 ms, and a passed attempt opens instantly (details rendered on demand from the JSON
embedded once).

The store is built like benchmarks/view_large.py's (bulk inserts, one run, 4 experiments, a
realistic share of failures). The browser part needs Debian's chromium and Playwright; it is
skipped with a note when either is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a checkout, uninstalled
sys.path.insert(0, str(Path(__file__).resolve().parent))

from view_large import build

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def write_report(store: Path, out: Path) -> float:
    env = {**os.environ, "NO_COLOR": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "niceeval_cli.cli", "report", "--store", str(store), "--out", str(out)],
        env=env, capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"report exited {done.returncode}: {done.stderr}")
    return elapsed


def browse(report: Path, profile: Path) -> dict[str, float] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("browser: skipped (pip install playwright)")
        return None
    chromium = os.environ.get("NICEEVAL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).is_file():
        print("browser: skipped (apt-get install chromium)")
        return None
    figures: dict[str, float] = {}
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1200, "height": 900},
        )
        page = context.new_page()
        started = time.perf_counter()
        page.goto(report.as_uri(), wait_until="load")
        figures["page load (navigation to load event)"] = time.perf_counter() - started
        figures["first contentful paint (header and first rows on screen)"] = page.evaluate(
            "() => performance.getEntriesByName('first-contentful-paint')[0].startTime / 1000")
        figures["open attempts rendered at load"] = page.evaluate(
            "document.querySelectorAll('#attempts li[data-rendered]').length")
        page.wait_for_timeout(50)
        started = time.perf_counter()
        page.wait_for_function("() => document.getElementById('attempts').dataset.complete", timeout=60_000)
        figures["every row built, open ones rendered (after load)"] = time.perf_counter() - started
        figures["state filter: hide passed (in page)"] = page.evaluate("""() => {
            const box = document.querySelector('input[name=state][value=passed]');
            const t0 = performance.now(); box.click(); return (performance.now() - t0) / 1000; }""")
        figures["search filter: one keystroke (in page)"] = page.evaluate("""() => {
            const input = document.getElementById('filter-search'); input.value = 'case_0001';
            const t0 = performance.now(); input.dispatchEvent(new Event('input', {bubbles: true}));
            return (performance.now() - t0) / 1000; }""")
        figures["open one passed attempt (in page)"] = page.evaluate("""() => {
            const input = document.getElementById('filter-search'); input.value = '';
            input.dispatchEvent(new Event('input', {bubbles: true}));
            const box = document.querySelector('input[name=state][value=passed]'); box.click();
            const li = document.querySelector('#attempts li[data-state=passed]:not([data-rendered])');
            const t0 = performance.now(); li.firstChild.open = true;
            li.firstChild.dispatchEvent(new Event('toggle'));
            return (performance.now() - t0) / 1000; }""")
        context.close()
    return figures


def main(attempts: int = 10_000, per_attempt: int = 10) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = folder / "results.db"
        started = time.perf_counter()
        build(store, attempts, per_attempt)
        print(f"built {attempts:,} attempts x {per_attempt} results in {time.perf_counter() - started:.1f}s")
        out = folder / "report.html"
        figures = {"write report (whole CLI process)": min(write_report(store, out) for _ in range(3))}
        figures["report size (MB)"] = out.stat().st_size / 1e6
        browsed = browse(out, folder / "profile")
        figures.update(browsed or {})
        if hasattr(os, "getloadavg"):
            print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores while measuring)")
        for name, value in figures.items():
            unit = "" if "size" in name or "rendered at load" in name else " s"
            print(f"{name:<58} {value:.3f}{unit}" if unit else f"{name:<58} {value:g}")
        return figures


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
