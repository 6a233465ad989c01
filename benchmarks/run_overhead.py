"""Runner overhead: N trivial attempts (10 assertions each) through the real runner and store.

    python benchmarks/run_overhead.py [--attempts 2000] [--assertions 10] [--concurrency 4]

Prints attempts/s, assertions/s, per-attempt overhead and peak RSS. Target on a 2-core machine:
≥ 500 attempts/s including sealing to SQLite, and flat memory as N grows (compare N and 5N).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval
def trivial(t):
    for i in range({n}):
        t.check(i, equals(i)).label(f"check {{i}}")
"""


def peak_rss_mib() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 if sys.platform != "darwin" else rss / (1024 * 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attempts", type=int, default=2000)
    parser.add_argument("--assertions", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()

    from niceeval_cli.config import RunOverrides, load_config
    from niceeval_cli.discovery import discover
    from niceeval_cli.runner import RunRequest, run
    from niceeval_cli.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "evals").mkdir()
        (root / "evals" / "trivial.py").write_text(textwrap.dedent(EVAL.format(n=args.assertions)))
        (root / "niceeval.toml").write_text("[project]\nevals = [\"evals\"]\n")
        project = load_config(root / "niceeval.toml")
        evals = discover(project.eval_roots, project.root)
        request = RunRequest(
            project=project,
            evals=evals,
            overrides=RunOverrides(attempts=args.attempts, max_concurrency=args.concurrency),
        )
        rss_before = peak_rss_mib()
        started = time.perf_counter()
        outcome = run(request)
        wall = time.perf_counter() - started
        with Store.open(project.store, readonly=True) as store:
            _, rows = store.sql("SELECT count(*) AS n FROM assertion_results")
        stored = rows[0][0]
    n = args.attempts
    print(f"attempts:            {n} ({outcome.counts})")
    print(f"assertions stored:   {stored}")
    print(f"wall time:           {wall:.3f} s")
    print(f"attempts/s:          {n / wall:,.0f}")
    print(f"assertions/s:        {stored / wall:,.0f}")
    print(f"overhead/attempt:    {wall / n * 1000:.3f} ms")
    print(f"peak RSS:            {peak_rss_mib():.1f} MiB (before run: {rss_before:.1f} MiB)")


if __name__ == "__main__":
    main()
