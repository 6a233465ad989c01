"""`niceeval run` live progress: per experiment counts, cheap per event, TTY only."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from niceeval_cli._states import AttemptState, GateState
from niceeval_cli.reports.progress import REFRESH_PER_SECOND, LiveProgress
from niceeval_cli.reports.run_output import LineEvents, _events_for
from niceeval_cli.runner import RunOutcome, SetupFailure
from tests.support.view_builders import tty_console


@dataclass(frozen=True)
class Slot:
    """What the progress display reads of a PlannedSlot."""

    experiment: Any
    eval: Any
    ordinal: int = 0
    reuse_attempt_id: str | None = None
    reuse_state: str | None = None
    reuse_gate: str | None = None

    @property
    def execute(self) -> bool:
        return self.reuse_attempt_id is None


def slot(experiment: str, eval_id: str, **reuse: Any) -> Slot:
    return Slot(SimpleNamespace(id=experiment), SimpleNamespace(id=eval_id), **reuse)


def sealed(state: str, gate: str | None = None) -> Any:
    return SimpleNamespace(state=AttemptState(state), gate=GateState(gate) if gate else None)


def final_frame(buffer: Any) -> str:
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buffer.getvalue())
    return text.replace("\r", "\n")


def test_each_experiment_shows_passed_failed_errored_scored_counts() -> None:
    console, buffer = tty_console(140)
    slots = [slot("models/a", f"e{n}") for n in range(4)] + [slot("models/b", "s1"), slot("models/b", "s2")]
    progress = LiveProgress(console)
    progress.planned("RUN", slots)
    for s, state in zip(slots, ["passed", "failed", "errored", "passed", "scored", "unrankable"], strict=True):
        progress.started("RUN", s)  # type: ignore[arg-type]
        progress.sealed("RUN", s, sealed(state, "none" if state in ("scored", "unrankable") else None), [])  # type: ignore[arg-type]
    progress.finished(RunOutcome("RUN", "finished", 1))
    frame = final_frame(buffer)
    assert "models/a" in frame and "4/4" in frame
    assert "2 passed, 1 failed, 1 errored" in frame and "0 scored" not in frame  # zero counts left out
    assert "1 scored, 1 unrankable" in frame
    assert "0:00:0" in frame  # elapsed time


def test_reused_slots_count_at_once_and_setup_failures_are_not_dispatched() -> None:
    console, buffer = tty_console(160)
    slots = [slot("x", "a", reuse_attempt_id="OLD", reuse_state="passed"), slot("x", "b"), slot("x", "j")]
    progress = LiveProgress(console)
    progress.planned("RUN", slots)
    progress.setup_failed("RUN", [SetupFailure("x", ("j",), "http://judge/v1", "m", "401 Unauthorized")])
    progress.sealed("RUN", slots[1], sealed("passed"), [])  # type: ignore[arg-type]
    progress.close()
    progress.close()  # idempotent
    frame = final_frame(buffer)
    assert "2/2" in frame
    assert "2 passed" in frame and "1 reused" in frame and "1 not dispatched" in frame
    assert "setup error: judge preflight failed for x" in frame


def test_events_are_cheap_and_redraws_are_limited_by_rich_refresh_rate() -> None:
    console, _ = tty_console(120)
    slots = [slot("exp", f"e{n}") for n in range(10_000)]
    progress = LiveProgress(console)
    assert REFRESH_PER_SECOND <= 10
    assert progress.progress.live.refresh_per_second == REFRESH_PER_SECOND
    progress.planned("RUN", slots)
    began = time.perf_counter()
    for s in slots:
        progress.sealed("RUN", s, sealed("passed"), [])  # type: ignore[arg-type]
    elapsed = time.perf_counter() - began
    progress.close()
    assert elapsed < 1.0, f"10 000 sealed events took {elapsed:.2f}s"


def test_experiment_ids_are_not_read_as_rich_markup() -> None:
    console, buffer = tty_console(120)
    progress = LiveProgress(console)
    progress.planned("RUN", [slot("[bold red]x[/]\x1b[2J", "e")])
    progress.close()
    frame = final_frame(buffer)
    assert "[bold red]x[/]\\" in frame  # shown as typed (and escaped), then cut at the name width


def test_live_progress_only_in_a_terminal_else_one_line_per_attempt() -> None:
    tty, _ = tty_console()
    assert isinstance(_events_for(tty, json_out=False), LiveProgress)
    from tests.support.view_builders import plain_console

    piped, _ = plain_console()
    assert isinstance(_events_for(piped, json_out=False), LineEvents)


def test_the_progress_line_fits_80_columns_whatever_the_counts() -> None:
    console, buffer = tty_console(80)
    slots = [slot("models/a-very-long-experiment-name", f"e{n}") for n in range(1300)]
    progress = LiveProgress(console)
    progress.planned("RUN", slots)
    states = ["passed"] * 1188 + ["failed"] * 12 + ["errored"] * 50 + ["scored"] * 50
    for s, state in zip(slots, states, strict=False):
        progress.sealed("RUN", s, sealed(state, "failed" if state == "scored" else None), [])  # type: ignore[arg-type]
    progress.finished(RunOutcome("RUN", "finished", 1))
    lines = [line for line in final_frame(buffer).splitlines() if line.strip()]
    assert lines and max(len(line.rstrip()) for line in lines) <= 80
    last = lines[-1]
    assert "1188 ok 12 fail 50 err 50 gate✗" in last  # abbreviated to fit, nothing cut
    assert "…" not in last.split("━")[-1]


def test_an_experiment_not_started_shows_waiting_without_a_spinner_or_clock() -> None:
    console, buffer = tty_console(100)
    progress = LiveProgress(console)
    progress.planned("RUN", [slot("first", "e"), slot("second", "e")])
    progress.started("RUN", slot("first", "e"))  # type: ignore[arg-type]
    progress.close()
    lines = final_frame(buffer).splitlines()
    second = [line for line in lines if "second" in line][-1]
    first = [line for line in lines if "first" in line][-1]
    assert "waiting" in second and "0:00:0" not in second
    assert "waiting" not in first and "0:00:0" in first


class _CountingFile:
    def __init__(self) -> None:
        self.text = ""
        self.flushes = 0

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        self.flushes += 1


def _attempt_record(state: str) -> Any:
    return SimpleNamespace(state=AttemptState(state), gate=None, reason=None, score=None, max_score=None,
                           kind="pass", partial_score=None, unavailable_weight=None)


def test_piped_lines_are_flushed_at_most_every_tenth_of_a_second_and_at_the_end() -> None:
    out = _CountingFile()
    events = LineEvents(SimpleNamespace(file=out))  # type: ignore[arg-type]
    for i in range(500):
        events.sealed("run", slot("exp", f"evals/a::e{i}"), _attempt_record("passed"), [])  # type: ignore[arg-type]
    assert out.text.count("\n") == 500 and "evals/a::e499#0" in out.text
    assert out.flushes <= 2  # 500 lines in far less than 0.2 s
    time.sleep(LineEvents.FLUSH_EVERY_S)
    events.sealed("run", slot("exp", "evals/a::late"), _attempt_record("failed"), [])  # type: ignore[arg-type]
    flushed_after_pause = out.flushes
    events.finished(None)  # type: ignore[arg-type]
    assert flushed_after_pause >= 1 and out.flushes == flushed_after_pause + 1
