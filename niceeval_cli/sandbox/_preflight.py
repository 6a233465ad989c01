"""Before dispatch: can every declared sandbox be made here? (sandbox.md: a missing image or an
unreachable daemon is a setup error, exit 3, naming the image or socket and the fix.)"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from .._registry import SANDBOXES
from .._sandbox_spec import SandboxSpec
from ._workspace import SandboxSetupError

__all__ = ["preflight_sandboxes"]


async def preflight_sandboxes(uses: Iterable[tuple[SandboxSpec, str]]) -> dict[tuple[str, str | None], str | None]:
    """Check each distinct (kind, image, template) once; `uses` pairs a resolved spec with who
    uses it ("experiment 'docker'"). Raises one SandboxSetupError listing every problem; returns
    the image identity per (kind, image) for the fingerprint."""
    users: dict[tuple[str, str | None, str | None], list[str]] = {}
    specs: dict[tuple[str, str | None, str | None], SandboxSpec] = {}
    for spec, user in uses:
        key = (spec.kind or "local", spec.image, spec.template)
        specs.setdefault(key, spec)
        if user not in users.setdefault(key, []):
            users[key].append(user)
    keys = list(specs)
    problems = await asyncio.gather(*(SANDBOXES.get(key[0]).check(specs[key]) for key in keys))
    found = [(key, problem) for key, problem in zip(keys, problems, strict=True) if problem]
    if found:
        lines = []
        for key, problem in found:
            who = ", ".join(users[key][:3]) + (f" and {len(users[key]) - 3} more" if len(users[key]) > 3 else "")
            lines.append(f"{key[0]} sandbox: {problem} (used by {who})")
        raise SandboxSetupError("; ".join(lines) + ". Nothing was dispatched.")
    return {(key[0], key[1]): SANDBOXES.get(key[0]).identity(specs[key]) for key in keys}
