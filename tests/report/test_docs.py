"""docs/reports.md: every `sh` block runs as shown, in order, in an empty folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "reports.md"


def sh_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)


@pytest.mark.slow
def test_every_shell_block_of_the_reports_page_runs(tmp_path: Path) -> None:
    blocks = sh_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, command in (("niceeval", f'"{sys.executable}" -m niceeval_cli.cli'), ("python", f'"{sys.executable}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    script = "set -e\n" + "\n".join(blocks)
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    demo = tmp_path / "report-demo"
    assert len(list((demo / ".niceeval" / "reports").glob("*.html"))) >= 2
    assert (demo / "eval-report.html").is_file()
    assert "Regressed (2)" in done.stdout
    assert "exit code: 1" in done.stdout
