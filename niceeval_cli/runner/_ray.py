"""The Ray executor (scale.md): attempts run as Ray tasks on a cluster; the driver seals them.

The driver plans, preflights and seals as ever (one writer); this executor only moves a
`SlotSpec` to a worker and a `SealedAttempt` back. Workers are async Ray actors (one per node),
each running many attempts at once as coroutines, like the in-process executor — the
attempts of an agent eval wait on I/O, so a process per attempt would only cost memory. The
driver's concurrency bound (`max_concurrency`) is what limits attempts in flight, cluster-wide.

A worker re-imports the eval module by path (`execute_spec`): on this machine's cluster the
project is read where it lies (a shared path); on a remote cluster Ray ships the project folder
(`runtime_env` working_dir) and the worker rebases the spec's paths onto it.

A worker or node lost mid-attempt seals that attempt `errored`, reason `executor-lost`; it is
run again only with `--retry-lost` (an attempt may have side effects). Cancelling (Ctrl-C)
cancels the Ray task; the worker's attempt then ends `errored (interrupted)` as in-process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import ipaddress
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._errors import SetupError, UsageError
from .._states import AttemptReason
from ._attempt import errored_attempt
from ._executor import ExecutorContext, SealedAttempt, register_executor
from ._spec import SlotSpec

RAY_INSTALL = 'pip install "niceeval-cli[ray]"'
#: What never travels to a remote cluster with the project folder.
WORKING_DIR_EXCLUDES = [".niceeval/", ".git/", "*.db", "*.db-wal", "*.db-shm", "__pycache__/", ".venv/"]
#: Cancelled attempts report back this fast, or are sealed `interrupted` without their records.
CANCEL_GRACE_S = 5.0
#: With --retry-lost, a lost attempt is run again at most this many times.
RETRIES_WHEN_LOST = 2


def _check(options: Mapping[str, Any]) -> None:
    try:
        missing = importlib.util.find_spec("ray") is None
    except (ImportError, ValueError):
        missing = True
    if missing:
        raise UsageError(
            f"--executor ray needs Ray, which is not installed; install it with: {RAY_INSTALL} "
            "(or run without --executor ray / [run] executor = \"ray\")"
        )


def is_local_address(address: str | None) -> bool:
    """True when the cluster is on this machine (the project is read in place, nothing shipped)."""
    if address in (None, "", "auto", "local"):
        return True
    parsed = urlsplit(address if "://" in str(address) else f"ray://{address}")
    host = parsed.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _rebased(spec: SlotSpec) -> SlotSpec:
    """On a remote node the driver's project path does not exist: the shipped copy is the cwd."""
    root = Path(spec.project_root)
    if root.is_dir():
        return spec
    here = Path.cwd()
    try:
        relative = Path(spec.eval_file).relative_to(root)
    except ValueError:
        return spec
    return dataclasses.replace(spec, project_root=str(here), eval_file=str(here / relative))


class _Resolved:
    """A worker's live objects, resolved once per eval and per experiment (a Ray worker process
    has thousands of modules loaded: finding an eval module among them per attempt would cost
    more than a trivial attempt)."""

    def __init__(self) -> None:
        self._modules: dict[str, Any] = {}
        self._definitions: dict[tuple[str, str], Any] = {}
        self._adapters: dict[tuple[str, str], Any] = {}

    def handles(self, spec: SlotSpec, grader: Any) -> Any:
        from types import MappingProxyType

        from ..adapters import load_adapter
        from ..authoring import EvalDefinition
        from ._spec import LiveHandles, import_eval_module

        where = (spec.eval_file, spec.eval_attr)
        definition = self._definitions.get(where)
        if definition is None:
            module = self._modules.get(spec.eval_file)
            if module is None:
                module = self._modules[spec.eval_file] = import_eval_module(Path(spec.eval_file),
                                                                            Path(spec.project_root))
            definition = getattr(module, spec.eval_attr, None)
            if not isinstance(definition, EvalDefinition):
                raise LookupError(f"{spec.eval_file} has no eval {spec.eval_attr!r} (for {spec.eval_id})")
            self._definitions[where] = definition
        adapter = definition.adapter
        if adapter is None and spec.adapter_ref is not None:
            key = (spec.experiment_id, spec.adapter_ref)
            adapter = self._adapters.get(key)
            if adapter is None:
                adapter = self._adapters[key] = load_adapter(spec.adapter_ref, spec.options, spec.experiment_id)
        return LiveHandles(definition, adapter, spec.slot_settings(), grader, MappingProxyType(dict(spec.options)))


async def _execute_remote(spec: SlotSpec, secrets: Sequence[str], resolved: _Resolved) -> SealedAttempt:
    """A worker's job: the attempt, with a judge service of its own when the slot uses one."""
    from ._attempt import execute_attempt
    from ._judge_glue import judge_grader

    spec = _rebased(spec)
    settings = spec.slot_settings().judge
    judge = None
    if settings is not None:
        from ..judge import JudgeService

        judge = JudgeService()
    try:
        live = resolved.handles(spec, judge_grader(judge, settings))
        return await execute_attempt(spec, live, project_root=Path(spec.project_root), secrets=secrets)
    finally:
        if judge is not None:
            await judge.aclose()


class _Worker:
    """The actor body (made a Ray actor class lazily, so importing this module never imports Ray)."""

    def __init__(self, python_path: Sequence[str], cwd: str | None, max_concurrency: int = 32) -> None:
        self._threads = max(32, max_concurrency + 4)  # plain-function adapters run in threads, as in-process
        self._pool: Any = None
        for entry in reversed(python_path):
            if entry not in sys.path:
                sys.path.insert(0, entry)
        if cwd is not None and os.path.isdir(cwd):
            os.chdir(cwd)  # on this machine: where the driver runs, so paths read as they do in-process
        self._resolved = _Resolved()

    async def run(self, spec: SlotSpec, secrets: Sequence[str]) -> SealedAttempt:
        if self._pool is None:  # the actor's loop: give it as many threads as the driver would have
            import concurrent.futures

            self._pool = concurrent.futures.ThreadPoolExecutor(self._threads, thread_name_prefix="niceeval-worker")
            asyncio.get_running_loop().set_default_executor(self._pool)
        return await _execute_remote(spec, secrets, self._resolved)

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


class RayExecutor:
    """Submits each attempt to one of the workers (the least busy), one worker per alive node."""

    def __init__(self, context: ExecutorContext) -> None:
        self.context = context
        self.address: str | None = context.options.get("ray_address") or None
        self.retry_lost = bool(context.options.get("retry_lost"))
        self._workers: list[Any] = []
        self._busy: list[int] = []
        self._actor: Any = None
        self._args: tuple[Any, ...] = ()
        self._started_ray = False
        if context.options.get("dispatchable", 1):  # nothing to execute (all reused): no cluster needed
            self._connect()

    # ── connecting ───────────────────────────────────────────────────────────────────────

    def _connect(self) -> None:
        import ray

        root = str(self.context.project_root)
        local = is_local_address(self.address)
        package_root = str(Path(__file__).resolve().parents[2])  # the folder holding niceeval_cli
        runtime_env: dict[str, Any]
        if local:  # the workers read the project where it lies, and run this very niceeval_cli
            search = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
            runtime_env = {"env_vars": {"PYTHONPATH": search}}
        else:  # Ray ships the project folder; niceeval-cli must be installed on the cluster
            runtime_env = {"working_dir": root, "excludes": WORKING_DIR_EXCLUDES}
        if not ray.is_initialized():
            try:
                ray.init(
                    address=self.address if self.address not in (None, "", "local") else None,
                    runtime_env=runtime_env,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    configure_logging=False,
                )
            except Exception as exc:
                where = f"the Ray cluster at {self.address}" if self.address else "a local Ray cluster"
                raise SetupError(
                    f"--executor ray: could not connect to {where} ({type(exc).__name__}: {exc}); check "
                    "--ray-address (or [run] ray_address; `ray status` on the head node prints its address)"
                ) from None
            self._started_ray = True
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._actor = ray.remote(_Worker)
        self._args = ([package_root, root] if local else [], os.getcwd() if local else None,
                      max(1, self.context.max_concurrency))
        alive = [str(n["NodeID"]) for n in ray.nodes() if n.get("Alive")]
        # One worker per node, pinned there; a lost one is replaced by a worker anywhere (`_replace`).
        self._workers = [self._new_worker(NodeAffinitySchedulingStrategy(node, soft=False)) for node in alive]
        if not self._workers:
            self._workers = [self._new_worker("DEFAULT")]
        self._busy = [0] * len(self._workers)

    def _new_worker(self, strategy: Any) -> Any:
        return self._actor.options(
            num_cpus=0,
            max_concurrency=max(1, self.context.max_concurrency),
            max_restarts=0,  # a lost worker is replaced by the driver, its attempts sealed executor-lost
            scheduling_strategy=strategy,
        ).remote(*self._args)

    def _replace(self, index: int, lost: Any) -> None:
        """The worker at `index` died (or its node did): later attempts go to a fresh one."""
        if self._workers[index] is not lost:
            return  # another attempt lost on the same worker replaced it already
        import ray

        try:
            ray.kill(lost, no_restart=True)
        except Exception:  # pragma: no cover - already gone
            pass
        self._workers[index] = self._new_worker("DEFAULT")

    # ── submitting ───────────────────────────────────────────────────────────────────────

    async def submit(self, spec: SlotSpec) -> SealedAttempt:
        import ray
        from ray import exceptions as rex

        lost = (rex.RayActorError, rex.WorkerCrashedError, rex.NodeDiedError, rex.ObjectLostError,
                rex.OwnerDiedError)
        tries = 1 + (RETRIES_WHEN_LOST if self.retry_lost else 0)
        cause: BaseException | None = None
        for _ in range(tries):
            if not self._workers:
                self._connect()
            index = min(range(len(self._workers)), key=self._busy.__getitem__)
            self._busy[index] += 1
            worker = self._workers[index]
            ref = worker.run.remote(spec, list(self.context.secrets))
            try:
                return await _awaited(ref)
            except asyncio.CancelledError:
                return await self._cancelled(ray, ref, spec)
            except lost as exc:
                cause = exc
                self._replace(index, worker)
            except rex.RayTaskError as exc:  # our own code failed in the worker: the driver seals it errored
                raise exc.as_instanceof_cause() from None
            finally:
                self._busy[index] -= 1
        retried = f" (tried {tries} times: --retry-lost)" if tries > 1 else " (not retried; --retry-lost runs it again)"
        return SealedAttempt(errored_attempt(
            spec, f"the Ray worker or node running this attempt was lost: {_first_line(cause)}{retried}",
            reason=AttemptReason.EXECUTOR_LOST,
        ), ())

    async def _cancelled(self, ray: Any, ref: Any, spec: SlotSpec) -> SealedAttempt:
        """Ctrl-C: cancel the task; the worker's attempt reports `interrupted` as in-process does."""
        ray.cancel(ref)
        try:
            return await asyncio.wait_for(_awaited(ref), CANCEL_GRACE_S)
        except BaseException:
            return SealedAttempt(errored_attempt(
                spec, "the run was interrupted while this attempt was in flight (its Ray task was cancelled)",
                reason=AttemptReason.INTERRUPTED,
            ), ())

    async def aclose(self) -> None:
        if not self._workers:
            return
        import ray

        for worker in self._workers:
            try:
                ray.kill(worker)
            except Exception:  # pragma: no cover - already gone
                pass
        self._workers = []
        if self._started_ray and os.environ.get("NICEEVAL_RAY_KEEP_CONNECTED") != "1":
            ray.shutdown()


async def _awaited(ref: Any) -> SealedAttempt:
    result = await ref
    if not isinstance(result, SealedAttempt):  # pragma: no cover - a worker of another version
        raise TypeError(f"the Ray worker returned {type(result).__name__}, not a SealedAttempt")
    return result


def _first_line(exc: BaseException | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if exc is not None else "unknown cause"
    return text.strip().splitlines()[0][:300]


register_executor("ray", RayExecutor, _check)
