"""sqlite-utils is imported without the optional extras it would pull in (numpy, pandas):
NiceEval stores none of their values, and pandas alone costs hundreds of ms. Creating a store or
opening one at the current schema does not import sqlite-utils at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_store_imports_neither_numpy_nor_pandas_and_user_code_still_can(tmp_path):
    for name in ("numpy", "pandas"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            f"import os\nopen(os.path.join({str(tmp_path)!r}, {name!r} + '.imported'), 'w').close()\n"
        )
    code = (
        "import sys\n"
        "from niceeval_cli.store import Store\n"
        "Store.open('new.db').close()\n"
        "assert 'sqlite_utils' not in sys.modules\n"  # a new store is made from its statements alone
        "from niceeval_cli.store.readonly_sql import run_readonly\n"
        "from pathlib import Path\n"
        "run_readonly(Path('new.db'), 'SELECT 1')\n"  # --sql (and a migration) use sqlite-utils
        "import sqlite_utils.db\n"
        "assert 'numpy' not in sys.modules and 'pandas' not in sys.modules\n"
        "import numpy, pandas\n"  # the user's own code may import them afterwards
        "print(sqlite_utils.db.np, sqlite_utils.db.pd)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
        env={"PYTHONPATH": f"{ROOT}:{tmp_path}", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "None"]
    assert (tmp_path / "numpy.imported").exists() and (tmp_path / "pandas.imported").exists()


def test_a_store_at_the_current_schema_opens_without_sqlite_utils(tmp_path):
    """A re-run, `view` or `query` on an existing store: sqlite-utils and what it imports (click,
    pluggy, dateutil) are start-up time for nothing."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    create = "from niceeval_cli.store import Store\nStore.open('s.db').close()\n"
    reopen = (
        "import sys\n"
        "from niceeval_cli.store import Store\n"
        "for readonly in (False, True):\n"
        "    with Store.open('s.db', readonly=readonly) as store:\n"
        "        store.query('runs')\n"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'sqlite_utils', 'click', 'pluggy', 'dateutil'}))\n"
    )
    for code in (create, reopen):
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
