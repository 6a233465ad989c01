"""The runner's group commit (runner/_sealer.py) over a real store file: attempts finishing
together share one transaction, and one that cannot be written costs nobody else."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from niceeval_cli._states import AssertionState, AttemptState
from niceeval_cli.runner._sealer import Sealer
from tests.support.records import SealedStore as Project


def _commits(project: Project) -> list[str]:
    seen: list[str] = []
    project.store._conn.set_trace_callback(lambda sql: seen.append(sql) if sql == "COMMIT" else None)
    return seen


def _sealed_ids(project: Project, run_id: str) -> set[str]:
    return {a.id for a in project.reader().attempts_for_run(run_id)}


def test_attempts_finishing_in_one_turn_share_one_commit(project: Project) -> None:
    run_id = project.begin_run()
    attempts = [project.attempt(run_id, eval_id=f"evals/a::e{i}") for i in range(5)]
    commits = _commits(project)

    async def main() -> None:
        sealer = Sealer(project.store)
        await asyncio.gather(*(
            sealer.seal(a, [project.result(a, 0, AssertionState.MATCHED)], project.slot(a)) for a in attempts
        ))

    asyncio.run(main())
    assert len(commits) == 1
    assert _sealed_ids(project, run_id) == {a.id for a in attempts}


def test_one_attempt_that_cannot_be_sealed_leaves_the_others_sealed(project: Project) -> None:
    run_id = project.begin_run()
    good = [project.attempt(run_id, eval_id=f"evals/a::e{i}") for i in range(3)]
    bad = project.attempt(run_id, eval_id="evals/a::bad")
    stranger = project.result(good[0], 0)  # belongs to another attempt

    async def main() -> list[BaseException | None]:
        sealer = Sealer(project.store)
        futures = [sealer.seal(a, [project.result(a, 0)], project.slot(a)) for a in good[:2]]
        futures.append(sealer.seal(bad, [stranger], project.slot(bad)))
        futures.append(sealer.seal(good[2], [project.result(good[2], 0)], project.slot(good[2])))
        return list(await asyncio.gather(*futures, return_exceptions=True))

    outcomes = asyncio.run(main())
    assert outcomes[:2] == [None, None] and outcomes[3] is None
    assert isinstance(outcomes[2], ValueError) and "belongs to" in str(outcomes[2])
    assert _sealed_ids(project, run_id) == {a.id for a in good}


def test_text_sqlite_refuses_is_cleaned_for_that_attempt_alone(project: Project) -> None:
    run_id = project.begin_run()
    plain = project.attempt(run_id, eval_id="evals/a::plain")
    hostile = project.attempt(run_id, eval_id="evals/a::hostile", state=AttemptState.FAILED, reason="bad \udcff text")

    async def main() -> None:
        sealer = Sealer(project.store)
        await asyncio.gather(sealer.seal(plain, [], project.slot(plain)),
                             sealer.seal(hostile, [], project.slot(hostile)))

    asyncio.run(main())
    stored = {a.id: a for a in project.reader().attempts_for_run(run_id)}
    assert set(stored) == {plain.id, hostile.id}
    assert stored[hostile.id].reason == "bad \ufffd text"
    assert stored[plain.id].reason is None


@pytest.mark.parametrize("count", [1, 300])
def test_every_attempt_is_sealed_before_its_future_is_done(project: Project, count: int) -> None:
    run_id = project.begin_run()
    attempts = [replace(project.attempt(run_id, eval_id=f"evals/a::e{i}")) for i in range(count)]

    async def main() -> None:
        sealer = Sealer(project.store)
        for future in [sealer.seal(a, [], project.slot(a)) for a in attempts]:
            await future
            assert future.done() and future.exception() is None

    asyncio.run(main())
    assert len(_sealed_ids(project, run_id)) == count


def test_a_store_that_cannot_be_written_fails_the_whole_batch_at_once(project: Project, monkeypatch) -> None:
    """Locked past the busy timeout or out of disk: every attempt of the batch gets that error
    (exit 6 for the run) and none is retried one by one, each waiting out the timeout again."""
    from niceeval_cli.store.errors import StoreUnavailable

    run_id = project.begin_run()
    attempts = [project.attempt(run_id, eval_id=f"evals/a::e{i}") for i in range(4)]
    tries: list[str] = []

    def unavailable(*_args: object) -> None:
        tries.append("write")
        raise StoreUnavailable("the results store is locked")

    monkeypatch.setattr(project.store, "seal_attempts", unavailable)
    monkeypatch.setattr(project.store, "seal_attempt", unavailable)

    async def main() -> list[BaseException | None]:
        sealer = Sealer(project.store)
        return list(await asyncio.gather(*(sealer.seal(a, [], project.slot(a)) for a in attempts),
                                         return_exceptions=True))

    outcomes = asyncio.run(main())
    assert all(isinstance(o, StoreUnavailable) for o in outcomes) and tries == ["write"]
    assert _sealed_ids(project, run_id) == set()
