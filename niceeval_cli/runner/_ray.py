"""The Ray executor (scale.md): attempts run as Ray tasks on a cluster; the driver seals them.

The driver plans, preflights and seals as ever (one writer); this executor only moves a
`SlotSpec` to a worker and a `SealedAttempt` back. Workers are async Ray actors (one per node),
each running many attempts at once as coroutines, like the in-process executor — the
attempts of an agent eval wait on I/O, so a process per attempt would only cost memory. The
driver's concurrency bound (`max_concurrency`) is what limits attempts in flight, cluster-wide.

A worker re-imports the eval module by path (`execute_spec`): on this machine's cluster the
project is read where it lies (a shared path); on a remote cluster Ray ships the project folder
(`runtime_env` working_dir) and the worker rebases the spec's paths onto it.

A worker or node lost mid-attempt seals the attempt that died of it `errored`, reason
`executor-lost`; it is run again only with `--retry-lost` (an attempt may have side effects).
The other attempts in flight on that worker are innocent and run again once (`_ray_loss` says
how the one that died is told apart). Cancelling (Ctrl-C) cancels the Ray task; the worker's
attempt then ends `errored (interrupted)` as in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import ipaddress
import logging
import os
import signal
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._errors import SetupError, UsageError
from .._registry import DEFAULT_GRADER
from .._states import AttemptReason
from ._attempt import errored_attempt
from ._executor import ExecutorContext, SealedAttempt, register_executor
from ._ray_loss import Blame, Ledger, LoopWatch, Loss, attempt_name, blame
from ._spec import HandleCache, SlotSpec, resolve_handles

RAY_INSTALL = 'pip install "niceeval-cli[ray]"'
#: What never travels to a remote cluster with the project folder: the store, caches, and the
#: credentials files. A worker never reads `.env` (only the CLI loads it, on this machine), so
#: shipping it would only copy every key in it to each node's disk (docs/scale.md).
WORKING_DIR_EXCLUDES = [".niceeval/", ".git/", "*.db", "*.db-wal", "*.db-shm", "__pycache__/", ".venv/",
                        ".env", ".env.*"]
#: Cancelled attempts report back this fast, or are sealed `interrupted` without their records.
CANCEL_GRACE_S = 5.0
#: With --retry-lost, a lost attempt is run again at most this many times.
RETRIES_WHEN_LOST = 2
#: How long the driver waits for the nodes to sweep a run's leftover sandboxes.
SWEEP_WAIT_S = 60.0
#: How long the driver waits for the ledger to say who held a lost worker's loop.
LEDGER_WAIT_S = 10.0
#: Ray's switch for a Ray confined to one machine (its default on macOS and Windows). Off, Ray
#: gives a node it starts the loopback address, and Ray 2.60 then binds the GCS, raylet, object
#: manager and workers there; on (Linux's default) they listen on every interface — and
#: `ray.init(_node_ip_address="127.0.0.1")` is no way round it: Ray swaps a loopback address
#: given there for this machine's outward one. Ray reads it once, when `ray` is imported.
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: Joining a cluster with Ray's token authentication: a driver given an address never turns the
#: token mode on by itself (Ray 2.60 does so only for a cluster it finds without one), so the
#: run's environment says it (docs/scale.md).
TOKEN_HELP = ("run niceeval with RAY_AUTH_MODE=token and the cluster's token in RAY_AUTH_TOKEN, in the "
              "file RAY_AUTH_TOKEN_PATH names, or in ~/.ray/auth_token (`ray get-auth-token` on the head "
              "node prints it)")


@contextlib.contextmanager
def _signal_handlers_kept() -> Iterator[None]:
    """`ray.init()` installs Ray's own SIGTERM handler in this process (at the C level: it logs a
    stack trace and ends the process, the run left `running`); the run's handlers for SIGINT and
    SIGTERM (`runner/_stop.py`: the run ends `interrupted`, exit 130) are installed again after
    it. Python still knows its handler, so installing that one again is enough."""
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            if handler is not None:  # None: set outside Python, nothing of ours to give back
                try:
                    signal.signal(sig, handler)
                except ValueError:  # pragma: no cover - not the main thread: no handler of ours there
                    pass


@contextlib.contextmanager
def _loopback_only(starting: bool) -> Iterator[None]:
    """While a run starts a Ray of its own: Ray's loopback switch (`LOOPBACK_SWITCH`) is on for
    the `import ray` and `ray.init()` inside, and so in every Ray process that starts (they
    inherit this environment); the environment is given back after. Joining a cluster changes
    nothing: the driver must then be reachable at this machine's outward address."""
    if not starting:
        yield
        return
    kept = os.environ.get(LOOPBACK_SWITCH)
    os.environ[LOOPBACK_SWITCH] = "0"
    try:
        yield
    finally:
        if kept is None:
            os.environ.pop(LOOPBACK_SWITCH, None)
        else:
            os.environ[LOOPBACK_SWITCH] = kept


def _refuse_wide(ray: Any) -> None:
    """The node a local `ray.init()` would start takes the address `ray.util.get_node_ip_address()`
    gives now (Ray asks the very same function); anything but loopback means Ray was imported
    before this run could turn its switch (by an eval module, say): nothing is started then."""
    address = str(ray.util.get_node_ip_address())
    try:
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = address == "localhost"
    if not loopback:
        raise SetupError(
            f"--executor ray: a local Ray started now would listen on {address}, not on loopback only: "
            "Ray was imported before the run started it (by an eval module?), too late for its switch; "
            f"set {LOOPBACK_SWITCH}=0 in the environment, or give --ray-address of a cluster you started"
        )


def _token_refused(exc: BaseException) -> bool:
    """Whether Ray's connection failure was the cluster refusing the token: `ray.init` wraps
    Ray's AuthenticationError (in a RuntimeError that quotes its traceback) in a ConnectionError,
    whose text names only the address."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if type(seen).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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


async def _execute_remote(spec: SlotSpec, secrets: Sequence[str], cache: HandleCache,
                          grader: str = DEFAULT_GRADER, calibration: Any = None) -> SealedAttempt:
    """A worker's job: the attempt, with a grader of its own (of the run's kind) when the slot
    uses a judge."""
    from ._attempt import execute_attempt
    from ._judge_glue import judge_grader

    spec = _rebased(spec)
    settings = spec.slot_settings().judge
    judge = None
    if settings is not None:
        from ..judge import create_grader

        judge = create_grader(grader)
        if calibration is not None:
            from ..judge import Calibrated

            judge = Calibrated(judge, calibration)
    try:
        live = resolve_handles(spec, judge_grader(judge, settings), cache)
        return await execute_attempt(spec, live, project_root=Path(spec.project_root), secrets=secrets)
    finally:
        if judge is not None:
            await judge.aclose()


class _Worker:
    """The actor body (made a Ray actor class lazily, so importing this module never imports Ray)."""

    def __init__(self, python_path: Sequence[str], cwd: str | None, max_concurrency: int = 32,
                 ledger: Any = None, token: str | None = None, grader: str = DEFAULT_GRADER,
                 calibration: Any = None) -> None:
        self._grader = grader
        self._calibration = calibration
        self._threads = max(32, max_concurrency + 4)  # plain-function adapters run in threads, as in-process
        self._pool: Any = None
        for entry in reversed(python_path):
            if entry not in sys.path:
                sys.path.insert(0, entry)
        if cwd is not None and os.path.isdir(cwd):
            os.chdir(cwd)  # on this machine: where the driver runs, so paths read as they do in-process
        self._cache = HandleCache()
        self._ledger = ledger
        self._token = token
        self._watch: Any = None

    async def run(self, spec: SlotSpec, secrets: Sequence[str]) -> SealedAttempt:
        if self._pool is None:  # the actor's loop: give it as many threads as the driver would have
            import concurrent.futures

            self._pool = concurrent.futures.ThreadPoolExecutor(self._threads, thread_name_prefix="niceeval-worker")
            asyncio.get_running_loop().set_default_executor(self._pool)
        if self._watch is None and self._ledger is not None:  # names the attempt holding the loop (_ray_loss)
            import threading

            from ._attempt import _body

            ledger, token = self._ledger, self._token
            self._watch = LoopWatch(threading.get_ident(), _body.__code__,
                                    lambda attempt: ledger.holding.remote(token, attempt))
        return await _execute_remote(spec, secrets, self._cache, self._grader, self._calibration)

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
        self._tokens: list[str] = []  # each worker's name in the ledger
        self._in_flight: dict[str, set[str]] = {}  # worker token → attempts in flight on it
        self._losses: dict[str, asyncio.Future[Loss]] = {}  # worker token → its death, as first seen
        self._ledger: Any = None
        self._made = 0
        self._sandboxed_run: str | None = None  # the run id, once an attempt with a sandbox was submitted
        self._actor: Any = None
        self._args: tuple[Any, ...] = ()
        self._started_ray = False
        if context.dispatchable:  # nothing to execute (all reused): no cluster needed
            self._connect()

    # ── connecting ───────────────────────────────────────────────────────────────────────

    def _connect(self) -> None:
        # No address: the run starts a Ray of its own ("local": never RAY_ADDRESS's cluster, nor
        # one `ray start` left on this machine), which listens on loopback only.
        starting = self.address in (None, "", "local")
        with _loopback_only(starting):
            import ray

            self._connect_with(ray, starting)

    def _connect_with(self, ray: Any, starting: bool) -> None:
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
            if starting:
                _refuse_wide(ray)
            try:
                with _signal_handlers_kept():
                    ray.init(
                        address="local" if starting else self.address,
                        runtime_env=runtime_env,
                        include_dashboard=False,
                        log_to_driver=False,
                        logging_level=logging.ERROR,
                        configure_logging=False,
                    )
            except Exception as exc:
                where = f"the Ray cluster at {self.address}" if self.address else "a local Ray cluster"
                if _token_refused(exc):
                    raise SetupError(
                        f"--executor ray: {where} refused this run's Ray token (none, or not the "
                        f"cluster's): {TOKEN_HELP}"
                    ) from None
                raise SetupError(
                    f"--executor ray: could not connect to {where} ({type(exc).__name__}: {exc}); check "
                    "--ray-address (or [run] ray_address; `ray status` on the head node prints its address)"
                ) from None
            self._started_ray = True
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._actor = ray.remote(_Worker)
        self._args = ([package_root, root] if local else [], os.getcwd() if local else None,
                      max(1, self.context.max_concurrency))
        here = ray.get_runtime_context().get_node_id()  # the ledger lives beside the driver
        self._ledger = ray.remote(Ledger).options(
            num_cpus=0, max_concurrency=64,
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True),
        ).remote()
        alive = [str(n["NodeID"]) for n in ray.nodes() if n.get("Alive")]
        # One worker per node, pinned there; a lost one is replaced by a worker anywhere (`_replace`).
        made = [self._new_worker(NodeAffinitySchedulingStrategy(node, soft=False)) for node in alive]
        if not made:
            made = [self._new_worker("DEFAULT")]
        self._workers = [worker for worker, _ in made]
        self._tokens = [token for _, token in made]
        self._busy = [0] * len(self._workers)

    def _new_worker(self, strategy: Any) -> tuple[Any, str]:
        self._made += 1
        token = f"w{self._made}"
        worker = self._actor.options(
            num_cpus=0,
            max_concurrency=max(1, self.context.max_concurrency),
            max_restarts=0,  # a lost worker is replaced by the driver, its attempts sealed executor-lost
            scheduling_strategy=strategy,
        ).remote(*self._args, self._ledger, token, self.context.grader, self.context.calibration)
        return worker, token

    def _replace(self, index: int, lost: Any) -> None:
        """The worker at `index` died (or its node did): later attempts go to a fresh one."""
        if self._workers[index] is not lost:
            return  # another attempt lost on the same worker replaced it already
        _kill(lost)
        self._workers[index], self._tokens[index] = self._new_worker("DEFAULT")

    # ── submitting ───────────────────────────────────────────────────────────────────────

    async def submit(self, spec: SlotSpec) -> SealedAttempt:
        """Run the attempt on the least busy worker. A lost worker costs only the attempt that
        died of it (`_ray_loss.blame`); the innocent ones in flight with it are run again once."""
        import ray
        from ray import exceptions as rex

        lost = (rex.RayActorError, rex.WorkerCrashedError, rex.NodeDiedError, rex.ObjectLostError,
                rex.OwnerDiedError, rex.OutOfMemoryError)
        name = attempt_name(spec.key)
        if spec.settings.get("sandbox") is not None:
            self._sandboxed_run = spec.run_id
        died, rerun, alone = 0, False, False
        allowed = RETRIES_WHEN_LOST if self.retry_lost else 0
        notes: list[str] = []
        cause: BaseException | None = None
        how = ""
        while True:
            if not self._workers:
                self._connect()
            if alone:  # which attempt killed the worker could not be told: this one runs by itself
                worker, token = self._new_worker("DEFAULT")
                index = -1
            else:
                index = min(range(len(self._workers)), key=self._busy.__getitem__)
                self._busy[index] += 1
                worker, token = self._workers[index], self._tokens[index]
            self._in_flight.setdefault(token, set()).add(name)
            ref = worker.run.remote(spec, list(self.context.secrets))
            try:
                produced = await _awaited(ref)
                if notes:
                    produced = dataclasses.replace(produced, notes=(*produced.notes, *notes))
                return produced
            except asyncio.CancelledError:
                return await self._cancelled(ray, ref, spec)
            except lost as exc:
                cause = exc
                loss = self._loss_of(token)
                if index >= 0:
                    self._replace(index, worker)
                seen = await asyncio.shield(loss)
                verdict = Blame.DIED if alone else blame(name, seen.in_flight, seen.holder)
            except rex.RayTaskError as exc:  # our own code failed in the worker: the driver seals it errored
                raise exc.as_instanceof_cause() from None
            finally:
                self._in_flight.get(token, set()).discard(name)
                if index >= 0:
                    self._busy[index] -= 1
                elif alone:
                    _kill(worker)
            if verdict is Blame.DIED:
                died += 1
                how = ("it ran alone on a fresh worker and was lost again" if alone
                       else "it was running when the worker died" if seen.holder == name
                       else "it was the only attempt on the worker")
                if died <= allowed:
                    notes.append(f"run again after its Ray worker was lost ({how}; --retry-lost)")
                    rerun, alone = False, False
                    continue
                break
            if rerun:  # an innocent attempt is run again once; lost a second time, it is sealed lost
                how = "lost twice with other attempts on its workers"
                break
            rerun, alone = True, verdict is Blame.UNKNOWN
            others = sorted(seen.in_flight - {name})
            notes.append(
                "run again: the Ray worker running it was lost while "
                + (f"{seen.holder} was running" if seen.holder is not None
                   else f"{len(others)} other attempt(s) ran with it ({', '.join(others[:3])}"
                        f"{', …' if len(others) > 3 else ''}); it ran again alone")
            )
        retried = f" (tried {died} times: --retry-lost)" if died > 1 else " (not retried; --retry-lost runs it again)"
        return SealedAttempt(errored_attempt(
            spec, f"the Ray worker or node running this attempt was lost ({how}): {_first_line(cause)}{retried}",
            reason=AttemptReason.EXECUTOR_LOST, notes=notes,
        ), ())

    def _loss_of(self, token: str) -> asyncio.Future[Loss]:
        """The worker's death as first seen: who was in flight on it then (taken at once, before
        any of them leaves), and who held its loop (asked of the ledger, once)."""
        found = self._losses.get(token)
        if found is None:
            found = self._losses[token] = asyncio.ensure_future(
                self._holder(token, frozenset(self._in_flight.get(token, ()))))
        return found

    async def _holder(self, token: str, in_flight: frozenset[str]) -> Loss:
        holder = None
        try:
            holder = await asyncio.wait_for(_awaited_any(self._ledger.holder.remote(token)), LEDGER_WAIT_S)
        except Exception:  # no ledger answer: the attempts in flight tell what they can
            holder = None
        return Loss(in_flight, holder if isinstance(holder, str) else None)

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

    async def _sweep(self, ray: Any, run_id: str) -> None:
        """A worker killed or lost mid-attempt never tore its sandboxes down: once every worker is
        gone, each alive node removes the run's sandboxes that are not kept (docs/scale.md)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        sweep = ray.remote(_sweep_here)
        nodes = [str(n["NodeID"]) for n in ray.nodes() if n.get("Alive")]
        refs = [sweep.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
                .remote(run_id) for node in nodes]
        try:
            await asyncio.wait_for(asyncio.gather(*(_awaited_any(r) for r in refs), return_exceptions=True),
                                   SWEEP_WAIT_S)
        except Exception:  # pragma: no cover - a node that does not answer keeps what it has
            pass

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
        if self._sandboxed_run is not None:
            await self._sweep(ray, self._sandboxed_run)
        if self._ledger is not None:
            _kill(self._ledger)
            self._ledger = None
        if self._started_ray and os.environ.get("NICEEVAL_RAY_KEEP_CONNECTED") != "1":
            ray.shutdown()


def _sweep_here(run_id: str) -> int:
    """On one node: remove what the run's attempts left there (`sandbox.sweep_run`)."""
    from ..sandbox import sweep_run

    return len(sweep_run(run_id, makers_gone=True))


def _kill(actor: Any) -> None:
    import ray

    try:
        ray.kill(actor, no_restart=True)
    except Exception:  # pragma: no cover - already gone
        pass


async def _awaited_any(ref: Any) -> Any:
    return await ref


async def _awaited(ref: Any) -> SealedAttempt:
    result = await ref
    if not isinstance(result, SealedAttempt):  # pragma: no cover - a worker of another version
        raise TypeError(f"the Ray worker returned {type(result).__name__}, not a SealedAttempt")
    return result


def _first_line(exc: BaseException | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if exc is not None else "unknown cause"
    return text.strip().splitlines()[0][:300]


register_executor("ray", RayExecutor, _check)
