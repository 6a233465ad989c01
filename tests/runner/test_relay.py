"""The run's one relay (issue 24.5): every event reaches every listener in order, as pytest calls
a hook on each plugin; a listener whose reader went away is dropped and the others go on."""

from __future__ import annotations

from niceeval_cli.runner import EventRelay, RunListener


class Heard(RunListener):
    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        self.name, self.log = name, log

    def planned(self, run_id, slots):
        self.log.append((self.name, "planned"))

    def started(self, run_id, slot):
        self.log.append((self.name, "started"))

    def finished(self, outcome):
        self.log.append((self.name, "finished"))


class GoneReader(Heard):
    def started(self, run_id, slot):
        raise BrokenPipeError


def test_each_event_reaches_every_listener_in_the_order_they_were_given() -> None:
    log: list[tuple[str, str]] = []
    relay = EventRelay(Heard("a", log), Heard("b", log))
    relay.planned("run", [])
    relay.setup_failed("run", [])  # a hook a listener does not implement is the base's no-op
    relay.finished(None)  # type: ignore[arg-type]
    assert log == [("a", "planned"), ("b", "planned"), ("a", "finished"), ("b", "finished")]


def test_a_listener_whose_reader_went_away_is_dropped_and_the_others_go_on(monkeypatch) -> None:
    import niceeval_cli.runner._events as events

    silenced: list[bool] = []
    monkeypatch.setattr(events, "reader_went_away", lambda: silenced.append(True))
    log: list[tuple[str, str]] = []
    gone = GoneReader("gone", log)
    relay = EventRelay(gone, Heard("b", log))
    relay.started("run", None)  # type: ignore[arg-type]
    relay.started("run", None)  # type: ignore[arg-type]
    relay.finished(None)  # type: ignore[arg-type]
    assert log == [("b", "started"), ("b", "started"), ("b", "finished")]
    assert silenced == [True]  # stdout pointed at /dev/null once, when the reader went away
    assert gone not in relay.listeners


def test_a_listener_implements_only_the_hooks_it_wants() -> None:
    got: list[object] = []

    class OnlyReported:  # the summary and the JUnit file hear nothing but the app's read of the run
        def reported(self, report):
            got.append(report)

    relay = EventRelay(OnlyReported(), RunListener())
    relay.planned("run", [])
    relay.started("run", None)  # type: ignore[arg-type]
    relay.finished(None)  # type: ignore[arg-type]
    relay.reported("the report")
    assert got == ["the report"]


def test_the_runner_lets_go_of_the_discovered_evals_handed_over_at_its_release_point(project, monkeypatch):
    """A 20 000-eval run's discovery records go with its slots, not after the run's end; a caller
    that keeps its request (to run it again) keeps them."""
    from niceeval_cli.config import load_config
    from niceeval_cli.discovery import discover
    from niceeval_cli.runner import RunRequest, run

    project.write("niceeval.toml", "[project]\n")
    project.write("evals/two.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def a(t):
            pass

        @define_eval()
        def b(t):
            pass
    """)
    monkeypatch.chdir(project.root)
    config = load_config(project.root / "niceeval.toml")
    seen: list[int] = []

    class Planned(RunListener):
        def planned(self, run_id, slots):
            seen.append(len(slots))

    handed = RunRequest(project=config, evals=discover(config.eval_roots, config.root), hand_over_evals=True)
    assert run(handed, Planned()).exit_code == 0
    assert list(handed.evals) == [] and seen == [2]
    kept = RunRequest(project=config, evals=discover(config.eval_roots, config.root))
    assert run(kept, Planned()).exit_code == 0
    assert [d.id for d in kept.evals] == ["two/a", "two/b"]
