"""Running an adapter's program inside the attempt's sandbox (sandbox.md, "Adapters in a sandbox").

The `command` adapter's argv runs in the workspace: cwd = workdir (its `cwd` option applies to
runs without a sandbox only), for docker through `docker exec`. For a local sandbox, argv words
that name an existing file relative to the directory the command runs in without a sandbox (the
project root, or its `cwd`) are made absolute first, so `python agent.py` still finds the
project's script from the workspace; in a container the program must be in the image.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["host_argv", "run_in_sandbox"]


def host_argv(argv: Sequence[str], where: Path) -> list[str]:
    """`argv` with words that are existing relative paths under `where` made absolute."""
    out = []
    for word in argv:
        candidate = where / word
        if word and not word.startswith("-") and not os.path.isabs(word) and (os.sep in word or "." in word) \
                and candidate.exists():
            out.append(str(candidate.resolve()))
        else:
            out.append(word)
    return out


async def run_in_sandbox(sandbox: Any, argv: Sequence[str], *, message: str, timeout_ms: int,
                         resolved: Sequence[str], env: Mapping[str, str] | None = None) -> Any:
    """Run the adapter's command in `sandbox` (a `ctx.sandbox`), the message on stdin; the
    CommandResult (a timeout kills the command's whole process group, in the container too)."""
    words = list(resolved) if sandbox.kind == "local" else list(argv)
    return await sandbox.run(words, input=message, timeout_ms=timeout_ms, env=env)
