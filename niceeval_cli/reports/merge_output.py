"""`niceeval merge` output: what was copied, and the merged run (a shard group: K of N shards,
its exact denominators, the slots of missing shards as "not run"), plus its JUnit XML."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from .._errors import EXIT_MEANING, ExitCode, UsageError
from ._safe import visible

if TYPE_CHECKING:
    from ..store import PlanSlot, RunRow
    from .data import MergeReport

NOT_RUN_SHOWN = 20
_TABLE_WORDS = {
    "runs": "run(s)", "run_plan": "plan slot(s)", "attempts": "attempt(s)", "assertion_results": "result(s)",
    "turns": "turn(s)", "events": "event(s)", "run_slots": "slot(s)", "judge_inputs": "judge input(s)",
}


def group_header(run: RunRow) -> str:
    """One line saying what a shard group is made of (also `view GROUP`'s)."""
    shards = f"shards merged {run.shards_merged} of {run.shard_count}"
    planned = f"{run.planned_total} planned" if run.planned_total is not None else "plan unknown"
    not_run = f", {run.not_run} not run" if run.not_run else ""
    return f"group {run.id}: {run.group_status} · {shards} · {planned}{not_run}"


def not_run_lines(slots: tuple[PlanSlot, ...] | list[PlanSlot], limit: int = NOT_RUN_SHOWN) -> list[str]:
    """The planned slots nothing filled, listed as "not run" (never passed, failed or undecided)."""
    lines = [f"not run  {s.experiment_id} · {s.eval_id}#{s.ordinal}" for s in slots[:limit]]
    if len(slots) > limit:
        lines.append(f"… and {len(slots) - limit} more not run; `niceeval query --sql` over run_plan lists them")
    return lines


def show(report: MergeReport, console: Console) -> None:
    result = report.result
    copied = ", ".join(f"{n} {_TABLE_WORDS[t]}" for t, n in result.copied.items() if n) or "nothing new"
    skipped = sum(result.skipped.values())
    lines = [f"merged {len(report.sources)} store(s) into {report.target}: copied {copied}"
             + (f"; {skipped} identical row(s) already there, skipped" if skipped else "")
             + (f"; {result.finished} running run(s) now finished" if result.finished else "")]
    run = report.merged
    if run is not None:
        code = run.exit_code
        verdict = f"exit code {code} ({EXIT_MEANING.get(ExitCode(code), '')})" if code is not None else "exit code -"
        if run.is_group:
            lines.append(f"{group_header(run)} · {verdict}")
            lines += not_run_lines(report.not_run)
        else:
            lines.append(f"run {run.id}: {run.status} · {verdict}")
        lines.append(f"details: niceeval view {run.id}" + (f" --store {report.target}" if report.target else ""))
    if result.labels_left:
        lines.append(f"note: {result.labels_left} human label(s) in the sources were not copied (merge copies sealed "
                     "results only): `niceeval label export --store SOURCE > labels.jsonl`, then "
                     f"`niceeval label import labels.jsonl --store {report.target}`")
    for text in lines:
        console.print(Text(visible(text, 400, single_line=True)))


def write_merged_junit(report: MergeReport, path: Path) -> Path:
    """JUnit of the merged run; a missing shard's slots are <skipped> testcases ("not run", junit.py)."""
    from .junit import build, write_tree

    assert report.sealed is not None, "merge_stores(..., junit=True) reads the rows JUnit needs"
    tree = build(report.sealed)
    target = Path(path)
    try:
        write_tree(tree, target)
    except OSError as error:
        raise UsageError(f"--junit {path}: could not write the JUnit XML ({error.strerror or error}); "
                         f"the merge itself is done") from error
    return target
