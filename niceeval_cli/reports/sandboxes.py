"""`niceeval sandbox list|prune` output: a SandboxListing (app/) as lines or JSON."""

from __future__ import annotations

from rich.console import Console

from .data import SandboxListing
from .formats import print_json
from .terminal import emit as _out
from .terminal.lines import Line, line
from .viewmodels.text import name

_ABOUT = ("experiment", "eval", "ordinal", "run", "attempt")


def show(listing: SandboxListing, *, console: Console, removed: bool = False, json_out: bool = False) -> None:
    if json_out:
        print_json(listing.as_json())
        return
    items = listing.sandboxes
    lines: list[Line] = []
    if not items and not listing.left:
        lines.append(line("no sandboxes removed" if removed else "no sandboxes left by NiceEval on this machine"))
    for item in items:
        about = " ".join(f"{key} {name(item.about[key])}" for key in _ABOUT if item.about.get(key))
        status = "removed" if removed else item.status
        lines.append(line(f"{status:<8} {item.kind:<6} {item.location}" + (f"  ({about})" if about else "")))
    for item, pids in listing.left:
        lines.append(line(
            f"left     {item.kind:<6} {item.location}  (in use: process {', '.join(map(str, pids))} works inside "
            "it and was not started by NiceEval; leave the folder and prune again)"
        ))
    if not removed and any(item.status != "in-use" for item in items):
        lines.append(line("`niceeval sandbox prune` removes the kept and orphaned ones (never one in use)."))
    _out.emit(console, lines)
