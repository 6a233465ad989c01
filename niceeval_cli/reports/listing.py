"""`niceeval list` (what would run) and `niceeval init` (a project that runs as-is)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..config import CONFIG_FILE_NAME, ProjectConfig, experiment_selects_eval
from ..discovery import DiscoveredEval, discover
from . import _out
from ._render import Line, blank, line, name, pad

# ── list ─────────────────────────────────────────────────────────────────────────────────


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def eval_record(discovered: DiscoveredEval, root: Path) -> dict[str, Any]:
    definition = discovered.definition
    adapter = definition.adapter.name if definition.adapter is not None else None
    return {
        "id": discovered.id,
        "kind": discovered.kind,
        "tags": list(definition.tags),
        "adapter": adapter,  # null: the experiment's adapter (or none) is used
        "file": _relative(discovered.file, root),
        "description": definition.description,
        "attempts": definition.attempts,
        "judge": bool(definition.judge),
    }


def experiment_record(project: ProjectConfig, experiment_id: str, evals: list[DiscoveredEval]) -> dict[str, Any]:
    experiment = project.experiments[experiment_id]
    selected = [e.id for e in evals if experiment_selects_eval(experiment, e.id, e.definition.tags)]
    return {
        "id": experiment.id,
        "description": experiment.description,
        "adapter": experiment.adapter,
        "model": experiment.model,
        "evals": list(experiment.evals) if experiment.evals is not None else None,
        "tags": list(experiment.tags) if experiment.tags is not None else None,
        "attempts": experiment.attempts if experiment.attempts is not None else project.attempts,
        "pass_rule": experiment.pass_rule if experiment.pass_rule is not None else project.pass_rule,
        "selected_evals": selected,
    }


def listing(project: ProjectConfig) -> dict[str, list[dict[str, Any]]]:
    """`{"evals": [...], "experiments": [...]}`: what `list --json` prints."""
    evals = discover(project.eval_roots, project.root)
    return {
        "evals": [eval_record(e, project.root) for e in evals],
        "experiments": [experiment_record(project, eid, evals) for eid in project.experiments],
    }


def show(project: ProjectConfig, *, console: Console, json_out: bool = False) -> None:
    data = listing(project)
    if json_out:
        sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
        return
    evals, experiments = data["evals"], data["experiments"]
    where = ", ".join(_relative(r, project.root) for r in project.eval_roots)
    if _out.is_plain(console):
        _out.emit(console, _plain_lines(evals, experiments, where))
        return
    table = Table(title=f"{len(evals)} eval(s) under {name(where)}", title_justify="left", highlight=False)
    for column in ("id", "kind", "tags", "adapter", "file"):
        table.add_column(column, overflow="fold")
    for e in evals:
        table.add_row(*(Text(_cell(e, c)) for c in ("id", "kind", "tags", "adapter", "file")))
    console.print(table)
    table = Table(title=f"{len(experiments)} experiment(s)", title_justify="left", highlight=False)
    for column in ("id", "adapter", "model", "evals", "description"):
        table.add_column(column, overflow="fold")
    for x in experiments:
        table.add_row(*(Text(_experiment_cell(x, c)) for c in ("id", "adapter", "model", "evals", "description")))
    console.print(table)


def _cell(record: dict[str, Any], column: str) -> str:
    value = record[column]
    if column == "tags":
        return ", ".join(name(t) for t in value) or "—"
    if column == "adapter" and value is None:
        return "(experiment's)"
    return name(value) if value is not None else "—"


def _experiment_cell(record: dict[str, Any], column: str) -> str:
    if column == "evals":
        return f"{len(record['selected_evals'])} selected"
    value = record[column]
    return name(value) if value else "—"


def _plain_lines(evals: list[dict[str, Any]], experiments: list[dict[str, Any]], where: str) -> list[Line]:
    out = [line(f"{len(evals)} eval(s) under {name(where)}:")]
    rows = [[_cell(e, c) for c in ("id", "kind", "tags", "adapter", "file")] for e in evals]
    out += _aligned(["id", "kind", "tags", "adapter", "file"], rows)
    out += [blank(), line(f"{len(experiments)} experiment(s):")]
    rows = [[_experiment_cell(x, c) for c in ("id", "adapter", "model", "evals", "description")]
            for x in experiments]
    out += _aligned(["id", "adapter", "model", "evals", "description"], rows)
    return out


def _aligned(header: list[str], rows: list[list[str]]) -> list[Line]:
    """Columns padded by terminal cells, so CJK ids line up with ASCII ones."""
    widths = [max(cell_len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [line("  ".join(pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip(), indent=2)
            for row in [header, *rows]]


# ── init ─────────────────────────────────────────────────────────────────────────────────

CONFIG_TEMPLATE = """\
# NiceEval project settings (docs/configuration.md). Run `niceeval run`, then `niceeval view`.

[project]
evals = ["evals"]                # where eval modules live
store = ".niceeval/results.db"   # sealed results (SQLite); add .niceeval/ to .gitignore
attempts = 1
max_concurrency = 4

# Without an [experiments.*] table there is one experiment, `default`, with no adapter: evals
# that check values they compute themselves (like evals/example.py) run as they are.
# To test your application, give an experiment an adapter (module:attr, or a built-in:
# python, command, http, openai-chat):
#
# [experiments.local]
# adapter = "python"
# model = "gpt-4o-mini"
# [experiments.local.options]
# callable = "myapp.chat:answer"

# Judge assertions (closed_qa, factuality, summarizes) need a judge model and a key variable:
#
# [judge]
# model = "gpt-4o-mini"
# api_key_env = "OPENAI_API_KEY"   # the variable's NAME; put the value in .env or the environment
"""

EXAMPLE_TEMPLATE = '''\
"""Example evals: they run as they are (no adapter, no judge key) and pass.

Replace `answer` with a call into your application, or give the experiment an adapter in
niceeval.toml and use `await t.send(...)`.
"""

from niceeval_cli import define_eval, define_score_eval
from niceeval_cli.expect import includes, pattern, similarity


def answer(question: str) -> str:
    """Stands in for the system under test."""
    return "You can return any item within 30 days of delivery for a full refund."


@define_eval(description="The refund window is stated", tags=["example"])
def refund_window(t):
    reply = answer("How long is the refund window?")
    t.check(reply, includes("30 days")).label("Mentions 30 days")
    t.check(reply, pattern(r"\\brefund")).label("Talks about refunds")


@define_score_eval(description="How close the reply is to the reference wording", tags=["example"])
def refund_wording(t):
    reply = answer("How long is the refund window?")
    t.check(reply, includes("30 days")).gate().label("States the window")
    t.check(reply, similarity("Items can be returned within 30 days of delivery for a refund.")).score(10).label(
        "Close to the reference"
    )
'''


@dataclass(frozen=True)
class InitFile:
    path: Path
    content: str


def init_files(root: Path) -> list[InitFile]:
    return [
        InitFile(root / CONFIG_FILE_NAME, CONFIG_TEMPLATE),
        InitFile(root / "evals" / "example.py", EXAMPLE_TEMPLATE),
    ]


def init_project(cwd: Path, *, console: Console) -> list[Path]:
    """Write what is missing, never overwrite; say what was written and what was skipped."""
    written: list[Path] = []
    lines: list[Line] = []
    for item in init_files(cwd):
        shown = _relative(item.path, cwd)
        if item.path.exists():
            lines.append(line(("skipped ", "yellow"), f"{name(shown)} (it already exists; left unchanged)"))
            continue
        item.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with item.path.open("x", encoding="utf-8") as handle:  # "x": never replace a file
                handle.write(item.content)
        except FileExistsError:
            lines.append(line(("skipped ", "yellow"), f"{name(shown)} (it already exists; left unchanged)"))
            continue
        written.append(item.path)
        lines.append(line(("wrote   ", "green"), name(shown)))
    lines += [blank(), line("Next: ", ("niceeval run", "bold"), " then ", ("niceeval view", "bold"),
                            " (niceeval list shows what was discovered).")]
    _out.emit(console, lines)
    return written
