"""Who owns a `running` run, and whether that process is still there (issue 9.6).

A run records its owner at `begin_run`: pid, host name and the process's start time. A reader
shows a `running` run whose owner is gone as `abandoned`: the pid is not alive on this host, or
it is alive but started at another time (the pid was reused). On another host, or for a run
written before schema 3 (no owner), nothing can be known and the run reads as stored.
"""

from __future__ import annotations

import functools
import os
import socket
from dataclasses import dataclass
from datetime import datetime, timezone

# Start times are computed from boot time + ticks, which the kernel may report a second apart
# from one read to the next; a reused pid started within this window is not a realistic case.
_START_TOLERANCE_S = 2.0


@dataclass(frozen=True)
class Owner:
    pid: int
    host: str
    started_at: str | None  # ISO UTC; None where the platform does not tell


@functools.cache
def _boot_time() -> float | None:
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            for line in stat:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks after boot) of a live pid, from /proc; None if absent."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            text = stat.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # the command name may contain spaces and parens
    return fields[0], int(fields[19])  # fields 3 and 22 of proc(5)


def _start_time(pid: int) -> float | None:
    boot = _boot_time()
    stat = _proc_stat(pid)
    if boot is None or stat is None:
        return None
    return boot + stat[1] / os.sysconf("SC_CLK_TCK")


def _iso(epoch: float) -> str:
    moment = datetime.fromtimestamp(epoch, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def current_owner() -> Owner:
    """This process, as recorded on the runs it begins (looked up again in a forked child)."""
    return _owner(os.getpid())


@functools.cache
def _owner(pid: int) -> Owner:
    start = _start_time(pid)
    return Owner(pid, socket.gethostname(), None if start is None else _iso(start))


def _pid_alive(pid: int) -> bool:
    stat = _proc_stat(pid) if os.path.isdir("/proc/self") else None
    if stat is not None:
        return stat[0] not in ("Z", "X")  # a zombie has exited; only its parent has not reaped it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    except OSError:
        return True  # cannot tell: do not call it gone
    return True


def owner_gone(pid: int | None, host: str | None, started_at: str | None) -> bool:
    """True only when the owner is known to be gone; unknown owners are not gone."""
    if pid is None or host is None or host != socket.gethostname():
        return False
    if not _pid_alive(pid):
        return True
    if started_at is None:
        return False
    start = _start_time(pid)
    if start is None:
        return False
    try:
        recorded = datetime.strptime(started_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return False
    return abs(recorded.timestamp() - start) > _START_TOLERANCE_S


def sql_owner_gone(pid: object, host: object, started_at: object) -> int:
    """`niceeval_owner_gone(owner_pid, owner_host, owner_started_at)` as a SQLite function."""
    return int(owner_gone(
        pid if isinstance(pid, int) else None,
        host if isinstance(host, str) else None,
        started_at if isinstance(started_at, str) else None,
    ))
