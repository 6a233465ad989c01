"""Wherever HTTP is first used, httpx and httpcore come without the optional parts NiceEval never
uses (`niceeval_cli/_httpx.py`): httpcore's trio backend (trio runs `ldconfig` to find libpthread)
and httpx's command-line client (click, pygments, rich's syntax) — together ~0.2 s of start-up,
which a docker-sandboxed run paid on the path of its first attempts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

OPTIONAL = ("click", "trio")
FIRST_USES = {
    "the lanes": "import niceeval_cli._lanes",
    "the wire": "import niceeval_cli._wire",
    "the judge": "import niceeval_cli.judge",
    "the http adapter": "import niceeval_cli.adapters._http",
    # A docker sandbox's first call over the daemon's socket (it fails harmlessly without a daemon).
    "the docker socket": "from niceeval_cli.sandbox import _engine\n"
                         "try:\n    _engine.request('/nonexistent/docker.sock', 'GET', '/_ping', timeout=1)\n"
                         "except OSError:\n    pass",
}


@pytest.mark.parametrize("use", sorted(FIRST_USES))
def test_http_is_first_used_without_the_optional_extras(use: str, tmp_path: Path) -> None:
    # Stand-ins first on the path, so the check means the same whether or not the real ones are
    # installed here: httpcore and httpx import whichever `trio` / `click` they find unless hidden.
    for name in OPTIONAL:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    search = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    code = FIRST_USES[use] + ("\nimport json, sys\nprint(json.dumps(['httpx' in sys.modules, "
                              f"sorted(set({OPTIONAL!r}) & set(sys.modules))]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                          env={**os.environ, "PYTHONPATH": search})
    loaded_httpx, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded_httpx, f"{use}: httpx was not loaded, so this check proves nothing"
    assert loaded == [], f"{use}: imported {loaded}"
