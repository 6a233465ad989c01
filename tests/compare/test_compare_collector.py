"""`compare` builds its answer with the cyclic collector off, then freezes it (`_collector.building`).

Folding two runs of 100 000 attempts, pairing and testing them makes no cycles worth collecting,
yet the collector walked the young objects some 40 times meanwhile (≈ 0.1 s, benchmarks/README.md,
issue 25 item 8). Checked in a fresh interpreter: freezing is for the whole process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """\
import gc, json
from niceeval_cli import _collector
seen = {}
with _collector.building():  # a library caller (no console script): its collector is its own
    seen["library_enabled"] = gc.isenabled()
_collector.start()
frozen = gc.get_freeze_count()
collections = []
gc.callbacks.append(lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)
with _collector.building():
    seen["enabled"] = gc.isenabled()
    kept = [[i] for i in range(100_000)]  # young containers: above any threshold
    seen["collections"] = len(collections)
seen["after_enabled"] = gc.isenabled()
seen["frozen_more"] = gc.get_freeze_count() - frozen
print(json.dumps(seen))
"""


def test_the_comparison_is_built_with_the_collector_off_and_then_frozen() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["library_enabled"] is True
    assert seen["enabled"] is False and seen["collections"] == 0
    assert seen["after_enabled"] is True
    assert seen["frozen_more"] >= 100_000

