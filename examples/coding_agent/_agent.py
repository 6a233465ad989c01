#!/usr/bin/env python3
"""A scripted stand-in for a coding-agent CLI: it reads the task on stdin and edits the current
directory (the attempt's sandbox workspace), as a real agent would, then prints a short reply.

It fixes the bug in calc.py and writes NOTES.md (install and rollback). Two switches break it,
each given as a flag or as an environment variable (flags also work inside a container):

  --forget-notes  (CODING_AGENT_FORGET_NOTES=1)  fixes the bug but writes no NOTES.md
  --leak-key      (CODING_AGENT_LEAK_KEY=1)      also writes an API key into settings.env
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

NOTES = """# Notes

## Install

    python -m pip install -e .
    python -m pytest -q        # all tests pass

## What changed

`calc.add` subtracted its arguments; it now returns their sum.

## Rollback

Revert the change with `git revert <commit>` (or `git checkout HEAD~1 -- calc.py`), then run
`python -m pytest -q` again to confirm the previous behaviour is back.
"""

# Looks like a real key on purpose: the eval's "No secrets written" gate must catch it.
LEAKED = "OPENAI_API_KEY=sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c\n"


def _switch(flag: bool, variable: str) -> bool:
    return flag or os.environ.get(variable, "") not in ("", "0")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="coding-agent", description=__doc__.splitlines()[0])
    parser.add_argument("--forget-notes", action="store_true")
    parser.add_argument("--leak-key", action="store_true")
    args = parser.parse_args(argv)
    task = sys.stdin.read().strip()
    if not task:
        print("coding-agent: no task on stdin", file=sys.stderr)
        return 2
    done = []
    calc = Path("calc.py")
    if calc.is_file():
        calc.write_text(calc.read_text().replace("return a - b", "return a + b"))
        done.append("fixed calc.add")
    if not _switch(args.forget_notes, "CODING_AGENT_FORGET_NOTES"):
        Path("NOTES.md").write_text(NOTES)
        done.append("wrote NOTES.md")
    if _switch(args.leak_key, "CODING_AGENT_LEAK_KEY"):
        Path("settings.env").write_text(LEAKED)
        done.append("saved settings.env")
    print("Done: " + ", ".join(done) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
