"""`docker`: one container per attempt from a local image, through the `docker` CLI or its socket.

The CLI (not the SDK) because it is what users already have working, it honours DOCKER_HOST and
contexts, and `docker cp` moves files without needing tar or a shell inside the image. Where the
CLI would talk to a local Unix socket, an attempt's own calls (start, exec, files in and out,
remove) and the preflight's go to that socket directly, the same requests the CLI makes without
a client process each (`_engine`); the template's bake and `--keep-sandbox`'s stop stay with the
CLI. The image needs only `sh` (the container idles in a `sleep` loop while the attempt execs
into it). NiceEval never pulls: a missing image is a setup error.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import posixpath
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from .._sandbox_spec import DOCKER_PIDS_LIMIT, Command, SandboxSpec, template_problem
from . import _engine, _engine_ops, _held, _live
from ._baked import Bakery
from ._held import NO_TAR, TOO_LONG, WRITE_FAILED, Held, has_tar, owned_paths, read_script, remember_tar, tar_of_files
from ._local import argv_of
from ._proc import run_host
from ._starts import stable_workdir, template_tar
from ._tar_read import read_states
from ._workspace import READ_LIMIT, Cancel, CommandNotRun, CommandResult, FileTooLarge, OutsideWorkspace, Snapshot

__all__ = ["LABEL", "DockerKind", "DockerWorkspace"]

LABEL = "niceeval.sandbox"
# A tmpfs of the container's own (pid files never show in the workspace diff), writable by a `user=`
# agent's commands; 1 MiB, as a tmpfs is host memory (by default half of it) that the agent can fill.
_PID_DIR, _PID_DIR_OPTIONS = "/run/niceeval", "mode=1777,size=1m"
_IDLE = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"
# Each command's slot in `_PID_DIR`: its process names itself with an empty file `SLOT.PID` (a name
# costs no page of the 1 MiB, where 256 files holding a pid filled it and every later command's
# stderr said so), then starts only if its kill has not already come (`SLOT.stop`). The kill marks
# the slot first and reads the names after, so a command that starts after its timeout fired (a
# loaded daemon can take longer than the timeout to start it) ends at once instead of running on
# unseen; it then waits (≤ 2 s) until each killed process is gone, not left a zombie `kill -0` sees.
# Anyone in the container may write here: a name whose pid is 0, 1 or no number is passed over.
_STARTED = ': > {slot}.$$; [ -e {slot}.stop ] && exit 137; exec "$@"'
_KILL = (': > {slot}.stop; for f in {slot}.[0-9]*; do p=${{f##*.}}; case $p in 0|1|*[!0-9]*) continue;; esac; '
         'kill -KILL -- -$p $p 2>/dev/null; i=0; '
         'while [ -e /proc/$p ] && [ $i -lt 200 ]; do sleep 0.01 2>/dev/null || break; i=$((i+1)); done; done')
_OWN_EMPTY = '[ -n "$(ls -A -- "$2")" ] || chown -- "$1" "$2"'  # without a template: a folder Docker made
_count = itertools.count()


def docker() -> str:
    return os.environ.get("NICEEVAL_DOCKER", "docker")


def client_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a docker CLI client NiceEval spawns: yours, with `GOMAXPROCS=1` unless you
    set it. A client moves one stream and exits; with a Go thread per core it spent about 30 % more
    CPU spinning, on the cores the daemon needs (benchmarks/README.md, "Session 6"). Where an attempt's
    calls go over the socket (`_engine`), a run spawns a few for what it does once."""
    env = dict(os.environ)
    env.setdefault("GOMAXPROCS", "1")
    if extra:
        env.update(extra)
    return env


def _sync(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([docker(), *args], input=input, capture_output=True, timeout=timeout, check=False,
                          env=client_env())


def _short_exec(container: str, argv: Sequence[str], *, user: str | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """A short `docker exec` (no input), its whole output: over the socket when it can be (`_engine`)."""
    path = _engine.engine_socket()
    if path is None:
        return _sync("exec", *(["-u", user] if user is not None else []), container, *argv, timeout=timeout)
    try:
        process = _engine.start_exec(path, container, argv, user=user)
    except _engine.EngineError as error:
        return subprocess.CompletedProcess(argv, 1, b"", str(error).encode())
    chunks = []
    while chunk := process.stdout.read(1 << 16):
        chunks.append(chunk)
    code = process.wait()
    return subprocess.CompletedProcess(argv, code, b"".join(chunks), process.stderr.read())


def _start(name: str, argv: Sequence[str], *, user: str, stdin: bool) -> subprocess.Popen[bytes] | _engine.ExecProcess:
    """`docker exec [-i] -u USER CONTAINER ARGV` started, its output piped (over the socket when it can be)."""
    engine = _engine.engine_socket()
    if engine is not None:
        return _engine.start_exec(engine, name, argv, stdin=stdin, user=user)
    return subprocess.Popen([docker(), "exec", *(["-i"] if stdin else []), "-u", user, name, *argv],
                            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=client_env())


def _copy_in(container: str, dest: str, tar: bytes) -> subprocess.CompletedProcess[bytes]:
    """`docker cp - CONTAINER:DEST` of a tar (over the socket when it can be)."""
    path = _engine.engine_socket()
    if path is None:
        return _sync("cp", "-", f"{container}:{dest}", input=tar)
    error = _engine_ops.put_archive(path, container, dest, tar)
    return subprocess.CompletedProcess([], 0 if error is None else 1, b"", (error or "").encode())


def _copy_out(container: str, source: str) -> subprocess.Popen[bytes] | _engine_ops.ArchiveProcess:
    """`docker cp CONTAINER:SOURCE -` started: its `stdout` is the tar (over the socket when it can be)."""
    path = _engine.engine_socket()
    if path is not None:
        return _engine_ops.ArchiveProcess(path, container, source)
    return subprocess.Popen([docker(), "cp", f"{container}:{source}", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=client_env())


def _rel(path: str) -> str:
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"{path!r}: sandbox paths are relative to the workspace and stay inside it")
    return rel.as_posix()


# The physical path of the deepest existing directory of $2 (POSIX sh only: `cd -P`, `pwd -P`), and of
# $1, then a last line: output that ends without it was cut short (an exec's output can be lost).
_PHYSICAL = 'w=$(cd -P -- "$1" && pwd -P) || exit 3; d=$2; while [ ! -d "$d" ]; do d=${d%/*}; done; ' \
            'echo "$w"; cd -P -- "$d" && pwd -P && echo end'
_CHECK_TRIES = 3


def _check_dir(container: str, workdir: str, rel_dir: str, shown: str) -> None:
    """Refuse `rel_dir` when a symlink among its directories leads out of the workspace: Docker itself
    would follow it anywhere in the container (`etc -> /etc`). A check that gets no whole answer is
    asked again (it only reads), and refused if it never does: unchecked is never let through."""
    if rel_dir in ("", "."):
        return
    words = ""
    for _ in range(_CHECK_TRIES):
        try:
            done = _short_exec(container, ["sh", "-c", _PHYSICAL, "sh", workdir, f"{workdir}/{rel_dir}"], user="0")
        except (OSError, subprocess.TimeoutExpired) as error:
            words = str(error)
            continue
        lines = done.stdout.decode("utf-8", "surrogateescape").split("\n")
        if done.returncode == 0 and lines[2:4] == ["end", ""] and lines[0] and lines[1]:
            home, real = lines[0], lines[1]
            if real != home and not real.startswith(home.rstrip("/") + "/"):
                raise OutsideWorkspace(f"sandbox path {shown!r} leads outside the workspace (through a symlink, "
                                       f"to {real}); t.sandbox reads, writes and runs only inside the workspace")
            return
        words = (done.stderr.decode("utf-8", "replace").strip()
                 or f"the check's output was cut short (exit {done.returncode})")
        if done.returncode not in (0, -1):
            break  # refused or failed as such (a paused or gone container): asking again gives the same
    raise OSError(f"{shown}: could not check where this path leads in the sandbox, so it was not used: {words}")


def _read_member(container: str, workdir: str, rel: str, shown: str, max_bytes: int,
                 cancel: Cancel, hops: int = 0) -> bytes:
    """One file of the workspace streamed out of the container (`docker cp` writes a tar): never more
    than `max_bytes` held; a symlink is followed only while it stays inside the workspace."""
    import tarfile

    _check_dir(container, workdir, posixpath.dirname(rel), shown)
    try:
        process = _copy_out(container, f"{workdir}/{rel}")
    except OSError:
        raise FileNotFoundError(f"{shown}: no such file in the sandbox workspace") from None
    cancel.on_cancel(process.kill)
    assert process.stdout is not None and process.stderr is not None
    follow: str | None = None
    try:
        with tarfile.open(fileobj=process.stdout, mode="r|*") as archive:
            member = next(iter(archive), None)
            if member is None:
                raise _engine_ops.unread_file(shown, process.stderr.read())
            if member.isdir():
                raise IsADirectoryError(f"{shown}: a directory of the sandbox workspace, not a file")
            if member.issym():
                follow = member.linkname
            elif not member.isfile():
                raise FileNotFoundError(f"{shown}: not a regular file in the sandbox workspace")
            elif member.size > max_bytes:
                raise FileTooLarge(shown, member.size, max_bytes)
            else:
                handle = archive.extractfile(member)
                return handle.read() if handle is not None else b""
    except tarfile.TarError:
        raise _engine_ops.unread_file(shown, _engine_ops.words_after_kill(process)) from None
    finally:
        process.kill()
        process.stdout.close()
        process.stderr.close()
        process.wait()
    assert follow is not None
    inner = posixpath.normpath(posixpath.join(posixpath.dirname(f"{workdir}/{rel}"), follow))
    if hops >= 40 or not inner.startswith(workdir.rstrip("/") + "/"):
        raise OutsideWorkspace(f"sandbox path {shown!r} leads outside the workspace (a symlink to {follow}); "
                               "t.sandbox reads, writes and runs only inside the workspace")
    return _read_member(container, workdir, inner[len(workdir.rstrip("/")) + 1:], shown, max_bytes, cancel, hops + 1)


class DockerWorkspace:
    kind = "docker"

    def __init__(self, container: str, spec: SandboxSpec, image_id: str | None) -> None:
        self.container = container
        self.spec = spec
        self.image_id = image_id
        self.workdir = spec.workdir or "/workspace"
        # What this container's workspace starts as, when every container with the same key starts
        # the same (`_starts`): set once the template is in; None means "take its own baseline".
        self.start_key: tuple[object, ...] | None = None
        self.held = Held()  # writes not in the container yet: they go in with the next use (`_held`)
        # Held while held writes are being put in: a read that starts meanwhile waits for them.
        self._carrying = threading.RLock()

    def _cwd(self, cwd: str | None) -> str:
        return f"{self.workdir}/{_rel(cwd)}" if cwd else self.workdir

    def exec_argv(self, argv: Sequence[str], cwd: str | None = None, env_names: Sequence[str] = (),
                  interactive: bool = True) -> list[str]:
        """`docker exec` of `argv`; `env_names` are passed by name, their values read from the client's
        environment, so they never show in the host's process list. Held writes go in first (blocking,
        and only when the test wrote since the workspace was last used): the caller spawns it itself."""
        self._flush()
        return self._exec_argv(argv, cwd, env_names, interactive)

    def _exec_argv(self, argv: Sequence[str], cwd: str | None, env_names: Sequence[str],
                   interactive: bool) -> list[str]:
        flags = ["-i"] if interactive else []
        for name in env_names:
            flags += ["-e", name]
        return [docker(), "exec", *flags, "-w", self._cwd(cwd), self.container, *argv]

    def exec_cwd(self, cwd: str | None = None) -> str | None:
        return None  # the docker client runs anywhere; the command's directory is `-w`

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult:
        if cwd:
            await asyncio.to_thread(_check_dir, self.container, self.workdir, _rel(cwd), cwd)
        await asyncio.to_thread(self._flush)
        slot = f"{_PID_DIR}/{os.urandom(8).hex()}"  # unguessable: no later slot is stopped ahead
        wrapped = ["sh", "-c", _STARTED.format(slot=slot), "niceeval", *argv_of(command)]
        started = time.monotonic()
        try:
            result = await self._run_wrapped(wrapped, cwd, env, input, timeout_ms)
        except BaseException:
            await asyncio.shield(self._kill(slot))
            raise
        if result.timed_out:
            await self._kill(slot)  # the exec client died; the process inside must die too
        return CommandResult(result.exit_code, result.stdout, result.stderr,
                             (time.monotonic() - started) * 1000, result.timed_out)

    async def _run_wrapped(self, wrapped: list[str], cwd: str | None, env: Mapping[str, str] | None,
                           input: str | None, timeout_ms: int | None) -> CommandResult:
        """`docker exec` of the wrapped command: over the socket when it can be (`_engine`), its
        output capped and its timeout kept as a client's would be."""
        path = _engine.engine_socket()
        if path is None:
            argv = self._exec_argv(wrapped, cwd, tuple(env or ()), interactive=input is not None)
            result = await run_host(argv, env=client_env(env), input=input, timeout_ms=timeout_ms)
            said = result.stderr.strip().rsplit("\n", 1)[-1]
            if result.exit_code == 1 and said.startswith("Error response from daemon:") \
                    and not await asyncio.to_thread(_running, self.container):
                raise CommandNotRun(said)  # the client's own exit: nothing ran in a container that is not running
            return result
        done = await _engine.exec_captured(
            path, self.container, wrapped, workdir=self._cwd(cwd), env=env,
            input=input.encode("utf-8", "surrogateescape") if input is not None else None,
            timeout_s=timeout_ms / 1000 if timeout_ms else None)
        if done.refused:
            raise CommandNotRun(done.stderr.text().strip())
        return CommandResult(done.exit_code, done.stdout.text(), done.stderr.text(), 0.0, done.timed_out)

    async def _kill(self, slot: str) -> None:
        """Kill the command's process group (`docker exec` starts each command in its own session),
        or stop it before it starts (`_KILL`)."""
        argv = ["sh", "-c", _KILL.format(slot=slot)]
        path = _engine.engine_socket()
        if path is not None:
            with contextlib.suppress(OSError):
                await _engine.exec_captured(path, self.container, argv, workdir=None, env=None, input=None,
                                            timeout_s=60)
            return
        process = await asyncio.create_subprocess_exec(
            docker(), "exec", self.container, *argv,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, env=client_env(),
        )
        await process.wait()

    async def read_bytes(self, path: str, max_bytes: int = READ_LIMIT) -> bytes:
        cancel = Cancel()

        def read() -> bytes:
            self._flush()
            return _read_member(self.container, self.workdir, _rel(path), path, max_bytes, cancel)

        try:
            return await asyncio.to_thread(read)
        except BaseException:
            cancel.set()
            raise

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Held until the workspace is next used (`_held`): nothing can see it before that. A path
        through a symlink out of the workspace is refused here, at the write."""
        await asyncio.to_thread(_check_dir, self.container, self.workdir, posixpath.dirname(_rel(path)), path)
        self.held.add(_rel(path), data)
        if has_tar(self.image_id) is False:  # no exec read to carry it: in now, with `docker cp`
            await asyncio.to_thread(self._flush)

    def _flush(self) -> None:
        """Put the held writes in (one `docker cp -`; with `user=`, one exec as that user: `_held._WRITE`)."""
        with self._carrying:
            if self.spec.user is not None and has_tar(self.image_id) is not False:
                files = self.held.take()
                if not files:
                    return
                paths = list(dict(files))
                process = _start(self.container, _held.write_script(self.workdir, paths), user=self.spec.user,
                                 stdin=True)
                if _held.written(*_held.fed(process, tar_of_files(files)), paths, self.image_id, self.spec.user):
                    return
                self.held.give_back(files)  # no `tar` in the image: `docker cp`, then `chown`
            self._give(self.held.flush(lambda tar: _copy_in(self.container, self.workdir, tar)))

    def _give(self, rels: list[str]) -> None:
        """Written files go in owned by root; with `user=` they (and the directories made for them)
        are given to that user, as the template is: the agent edits what the eval set up."""
        if self.spec.user is None or not rels:
            return
        paths = [f"{self.workdir}/{rel}" for rel in owned_paths(rels)]
        done = _short_exec(self.container, ["chown", "-h", "--", self.spec.user, *paths], user="0")
        if done.returncode != 0:
            raise OSError(f"{', '.join(sorted(rels))}: written, but could not be given to user {self.spec.user!r}: "
                          f"{done.stderr.decode(errors='replace').strip() or f'chown exited {done.returncode}'}")

    def snapshot(self, cancel: Cancel | None = None) -> Snapshot:
        """The workspace now, the held writes put in by the same `docker exec` (`_held`); through
        `docker cp` when the image has no `tar` or the exec's read failed."""
        if has_tar(self.image_id) is not False:
            states = self._exec_snapshot(cancel)
            if states is not None:
                return states
        self._flush()
        return self._cp_snapshot(cancel)

    def _exec_snapshot(self, cancel: Cancel | None) -> Snapshot | None:
        """None: not read this way (no `tar`, or the exec failed): the held writes are given back, and the
        `docker cp` path puts them in (again, if they were: the same bytes, so no change). A read that
        carries writes in holds `_carrying` to its end; one that starts meanwhile waits, so it sees them."""
        with self._carrying:
            if self.spec.user is not None:
                self._flush()  # written as the user first, then read as root
                return self._exec_read([], cancel)
            files = self.held.take()
            if files:
                return self._exec_read(files, cancel)
        return self._exec_read([], cancel)

    def _exec_read(self, files: list[tuple[str, bytes]], cancel: Cancel | None) -> Snapshot | None:
        paths = list(dict(files))
        script = read_script(self.workdir, paths)
        try:
            process = _start(self.container, script, user="0", stdin=bool(files))
        except OSError:  # refused (the container is gone): the `docker cp` path says what is wrong
            self.held.give_back(files)
            return None
        if cancel is not None:
            cancel.on_cancel(process.kill)
        if files:
            _held.feed(process, tar_of_files(files))
        states, error = read_states(process, cancel)
        if process.returncode == WRITE_FAILED:
            raise OSError(f"{', '.join(sorted(paths))}: could not write into the sandbox: {error or 'tar -x failed'}")
        if process.returncode == 0 and states is not None:
            remember_tar(self.image_id, True)  # (with `user=` the writes went in before, as that user)
            return states
        if process.returncode == NO_TAR:
            remember_tar(self.image_id, False)
        elif TOO_LONG in error:  # Docker's own copy leaves such a file out without a word: no fallback
            raise OSError(f"could not read all of the workspace: a path in it is too long for tar ({TOO_LONG})")
        self.held.give_back(files)
        return None

    def _cp_snapshot(self, cancel: Cancel | None) -> Snapshot:
        process = _copy_out(self.container, self.workdir)
        if cancel is not None:
            cancel.on_cancel(process.kill)
        states, error = read_states(process, cancel)
        if process.returncode != 0 and _engine_ops.not_found(error):
            return {}  # the workdir itself is gone (`rm -rf /workspace`): every file of it was deleted
        if process.returncode != 0 or states is None:
            raise OSError(f"could not read the sandbox workspace of {self.container}: {error or 'not a tar stream'}")
        return states

    async def teardown(self, *, keep: bool) -> str | None:
        try:
            if keep:  # stopped: its processes are dead, its files stay for `docker cp` / `docker start`
                with contextlib.suppress(OSError):  # the attempt is over: a write that cannot go in is lost
                    await asyncio.to_thread(self._flush)
                await asyncio.to_thread(_quiet, "stop", "-t", "0", self.container)
                return f"docker container {self.container}"
            path = _engine.engine_socket()
            if path is not None:
                try:
                    removed = await _engine_ops.aremove(path, self.container)
                except BaseException:
                    _remove(self.container)  # cut short (an interrupt): removed here, as a worker thread would
                    raise
                if removed:
                    return None
            await asyncio.to_thread(_remove, self.container)
            return None
        finally:
            _live.forget(self.container)

    def info(self) -> dict[str, object]:
        return {"kind": "docker", "image": self.spec.image, "image_id": self.image_id, "container": self.container}


def _quiet(*args: str) -> None:
    try:
        _sync(*args, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        pass


def _running(container: str) -> bool:
    """Whether the container runs (False: stopped, or gone), as `docker inspect` says."""
    try:
        return _sync("inspect", "--format", "{{.State.Running}}", container, timeout=30).stdout.strip() == b"true"
    except (OSError, subprocess.TimeoutExpired):
        return True  # not known: the exit code stands


def _remove(container: str) -> None:
    path = _engine.engine_socket()
    if path is None or not _engine_ops.remove(path, container):
        _quiet("rm", "-f", "-v", container)


async def _run_detached(name: str, labels: list[str], spec: SandboxSpec, workdir: str, limits: list[str],
                        image: str) -> str | None:
    """`docker run -d` of the idle container: over the socket when it can be (`_engine`); the
    daemon's or the client's words when it did not start, else None."""
    path = _engine.engine_socket()
    memory = _engine.memory_bytes(spec.memory) if spec.memory is not None else None
    if path is not None and (spec.memory is None or memory is not None):
        body = _engine_ops.create_body(
            image, labels=dict(item.split("=", 1) for item in labels), network=spec.network or "none",
            workdir=workdir, tmpfs={_PID_DIR: _PID_DIR_OPTIONS}, entrypoint=["sh"], cmd=["-c", _IDLE],
            cpus=spec.cpus, memory=memory, user=spec.user, pids_limit=DOCKER_PIDS_LIMIT)
        return await _engine_ops.run_detached(path, name, body)
    started = await run_host([
        docker(), "run", "-d", "--name", name, *(f"--label={item}" for item in labels),
        "--network", spec.network or "none", "--tmpfs", f"{_PID_DIR}:{_PID_DIR_OPTIONS}", "-w", workdir, *limits,
        "--entrypoint", "sh", image, "-c", _IDLE,
    ], timeout_ms=120_000, env=client_env())
    return None if started.exit_code == 0 else started.stderr.strip()


class DockerKind:
    name = "docker"
    runs_on_host = False

    def __init__(self) -> None:
        self._image_ids: dict[str, str] = {}
        self._bakery = Bakery()

    async def check(self, spec: SandboxSpec) -> str | None:
        return await asyncio.to_thread(self._check, spec)

    def _check(self, spec: SandboxSpec) -> str | None:
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        # A local socket that answers is a reachable daemon; the CLI must be there too (bake, stop).
        if _engine.engine_socket() is None or shutil.which(docker()) is None:
            try:
                version = _sync("version", "--format", "{{.Server.Version}}", timeout=30)
            except FileNotFoundError:
                return (f"the `{docker()}` command is not installed; install Docker (Debian: apt-get install "
                        "docker.io) or use a local sandbox")
            except subprocess.TimeoutExpired:
                return f"the Docker daemon at {host} did not answer within 30 s; check that it is running"
            if version.returncode != 0:
                why = version.stderr.decode(errors="replace").strip()
                return (f"the Docker daemon at {host} is not reachable ({why}); "
                        "start it (`dockerd`, or `systemctl start docker`) or use a local sandbox")
        problem = template_problem(spec.template) if spec.template else None
        if problem is not None:
            return problem
        if self.identity(spec) is None:
            return (f"the image {spec.image!r} is not present locally; build it first (`docker build -t {spec.image} "
                    "...`) — NiceEval never pulls images")
        return None

    def identity(self, spec: SandboxSpec) -> str | None:
        image = spec.image or ""
        if image not in self._image_ids:
            path = _engine.engine_socket()
            answered, found = _engine_ops.image_id(path, image) if path is not None else (False, None)
            if not answered:
                try:
                    done = _sync("image", "inspect", "--format", "{{.Id}}", image, timeout=30)
                except (FileNotFoundError, subprocess.TimeoutExpired):
                    return None
                found = done.stdout.decode().strip() if done.returncode == 0 else None
            if found is None:
                return None
            self._image_ids[image] = found
        return self._image_ids[image]

    async def probe(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_ms: int) -> CommandResult:
        """`docker run --rm` of the image with `argv[0]` as its entrypoint: no shell is needed in the
        image, and a binary the image lacks is exit 127 (126: not executable; 125: docker's own error).
        Killing the `docker run` client (a timeout, a cancellation) does not stop its container, so
        either way the container is removed here."""
        name = f"niceeval-probe-{os.getpid()}-{next(_count)}"
        user = ["--user", spec.user] if spec.user is not None else []
        # The base label, the owner and the host as every sandbox container has them: a probe left
        # running by a killed run is then `orphaned` in `sandbox list` and removed by `prune`.
        labels = [f"--label={LABEL}={name}", f"--label={LABEL}.probe={os.getpid()}",
                  f"--label={LABEL}.owner={os.getpid()}", f"--label={LABEL}.host={socket.gethostname()}"]
        try:
            result = await run_host([docker(), "run", "--rm", "--name", name, *labels, "--network", "none",
                                     "--pids-limit", str(DOCKER_PIDS_LIMIT), *user, "--entrypoint", argv[0],
                                     spec.image or "", *argv[1:]], timeout_ms=timeout_ms, env=client_env())
        except BaseException:
            await asyncio.shield(asyncio.to_thread(_remove, name))
            raise
        if result.timed_out:
            await asyncio.to_thread(_remove, name)
        return result

    async def create(self, spec: SandboxSpec, *, label: str, about: Mapping[str, str] | None = None,
                     background: bool = False) -> DockerWorkspace:
        name = f"niceeval-{label}"
        limits = ["--pids-limit", str(DOCKER_PIDS_LIMIT)]
        if spec.cpus is not None:
            limits += ["--cpus", f"{spec.cpus:g}"]
        if spec.memory is not None:
            limits += ["--memory", spec.memory]
        if spec.user is not None:
            limits += ["--user", spec.user]
        labels = [f"{LABEL}={label}", f"{LABEL}.owner={os.getpid()}", f"{LABEL}.host={socket.gethostname()}",
                  *(f"{LABEL}.{key}={value}" for key, value in (about or {}).items())]
        workdir = spec.workdir or "/workspace"
        workspace = DockerWorkspace(name, spec, self.identity(spec))
        run = (about or {}).get("run")
        key = ("docker", run, spec, workspace.image_id) if run else None
        # The template as one tar, read once per run (`_starts`); with `background`, baked into an
        # image once (`_baked`), after which containers start with it and nothing is copied.
        tar = await asyncio.to_thread(template_tar, key, spec.template) if spec.template else None
        baked = None
        if background and tar is not None and key is not None and run is not None:
            baked = self._bakery.image_for(key, workspace.image_id or spec.image or "", workdir, tar, run)
        _live.remember(name, lambda: _remove(name))  # before `docker run`: a cancelled run may still create it
        try:
            # Never cut `docker run` short: the daemon would finish creating the container after
            # we removed it. A cancellation waits for it (a few hundred ms), then removes it.
            image = baked or spec.image or ""
            starting = asyncio.ensure_future(_run_detached(name, labels, spec, workdir, limits, image))
            try:
                refused = await asyncio.shield(starting)
            except asyncio.CancelledError:
                with contextlib.suppress(BaseException):
                    await starting
                raise
            if refused is not None:
                raise OSError(f"docker could not start a container from {spec.image!r}: {refused}")
            if spec.template:
                if baked is None:
                    copied = await asyncio.to_thread(_copy_in, name, workdir, tar) \
                        if tar is not None else await asyncio.to_thread(_sync, "cp", f"{spec.template}/.",
                                                                       f"{name}:{workdir}")
                    if copied.returncode != 0:
                        raise OSError(f"could not copy the template into the container: "
                                      f"{copied.stderr.decode(errors='replace').strip()}")
            if spec.user is not None:  # the workspace is the user's (the eval's writes are made as that user)
                await asyncio.to_thread(_short_exec, name, ["chown", "-R", spec.user, workdir] if spec.template
                                        else ["sh", "-c", _OWN_EMPTY, "sh", spec.user, workdir], user="0")
            if key is not None and (tar is not None or not spec.template) and not spec.prepare \
                    and stable_workdir(workdir):
                workspace.start_key = key
        except BaseException:
            await asyncio.shield(workspace.teardown(keep=False))
            raise
        return workspace
