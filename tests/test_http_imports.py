"""Wherever HTTP is first used, httpcore comes without its trio backend (`niceeval_cli/_imports.py`):
importing trio (and the `ldconfig` it runs to find libpthread) costs a run ~0.1 s of start-up,
and a docker-sandboxed run paid it on the path of its first attempts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
def test_http_is_first_used_without_trio(use: str, tmp_path: Path) -> None:
    # A stand-in `trio` first on the path, so the check means the same whether or not the real one
    # is installed here: httpcore imports whichever `trio` it can find unless it is hidden.
    (tmp_path / "trio").mkdir()
    (tmp_path / "trio" / "__init__.py").write_text("")
    search = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    code = FIRST_USES[use] + "\nimport json, sys\nprint(json.dumps(['httpx' in sys.modules, 'trio' in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                          env={**os.environ, "PYTHONPATH": search})
    loaded_httpx, loaded_trio = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded_httpx, f"{use}: httpx was not loaded, so this check proves nothing"
    assert not loaded_trio, f"{use}: trio was imported"
