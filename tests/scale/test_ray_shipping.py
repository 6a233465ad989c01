"""What `--executor ray --ray-address` ships to a cluster on another machine: the project folder
as Ray's own packaging zips it for the `runtime_env` working directory, with NiceEval's excludes.
The evals and the configuration travel; the store, the git folder and every `.env` credentials
file do not (a worker never reads `.env`: the keys in it would only be copied to each node)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from niceeval_cli.runner._ray import WORKING_DIR_EXCLUDES
from tests.support.components import need_ray

#: Ray's packaging, run where every Ray test runs Ray: in a process of its own (Ray is not among
#: the test extras, and importing it costs a pytest worker ~0.3 s).
ZIP_AS_RAY_DOES = """
import json, sys, zipfile
from pathlib import Path
from ray._private.runtime_env.packaging import create_package  # what ray.init(runtime_env=...) uploads
project, package, excludes = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
create_package(project, package, include_gitignore=True, excludes=excludes)
print(json.dumps([name for name in zipfile.ZipFile(package).namelist() if not name.endswith("/")]))
"""


def test_the_shipped_project_holds_the_evals_and_no_store_or_credentials(tmp_path: Path) -> None:
    need_ray()
    project = tmp_path / "project"
    (project / "evals" / "nested").mkdir(parents=True)
    (project / ".niceeval").mkdir()
    (project / ".git").mkdir()
    files = {
        "niceeval.toml": "[project]\n", "evals/agent.py": "# an eval\n", "evals/nested/more.py": "# another\n",
        ".env": "OPENAI_API_KEY=sk-not-a-real-key-0000000000\n", ".env.local": "JUDGE_KEY=secret\n",
        "evals/nested/.env": "TOOL_KEY=secret\n", ".niceeval/results.db": "store", "shard.db": "store",
        ".git/HEAD": "ref: refs/heads/main\n",
    }
    for name, text in files.items():
        (project / name).write_text(text)

    zipped = subprocess.run([sys.executable, "-c", ZIP_AS_RAY_DOES, str(project), str(tmp_path / "package.zip"),
                             json.dumps(list(WORKING_DIR_EXCLUDES))], capture_output=True, text=True, timeout=120)
    assert zipped.returncode == 0, zipped.stderr
    shipped = set(json.loads(zipped.stdout))

    assert {"niceeval.toml", "evals/agent.py", "evals/nested/more.py"} <= shipped
    kept_here = {".env", ".env.local", "evals/nested/.env", ".niceeval/results.db", "shard.db", ".git/HEAD"}
    assert not shipped & kept_here, shipped
