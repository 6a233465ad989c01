"""A store on a read-only or nearly full file system, through the real CLI, in a private mount
namespace (`unshare -m`: every mount dies with the command, nothing to clean up).

Readers read a store on read-only media (a CD, a read-only bind mount of CI artefacts); a
`run` there, or on a disk too full for the store's `-shm` file, is exit 6 naming the file, never
exit 2 with SQLite's "unable to open database file" / "disk I/O error".
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.components import missing
from tests.support.project import NICEEVAL, Project, base_env

pytestmark = pytest.mark.slow

_EVALS = """\
from niceeval_cli import define_eval

@define_eval()
def ok(t):
    pass

@define_eval()
def also_ok(t):
    pass
"""


def _unshare() -> list[str]:
    """The argv prefix that runs a command in a private mount namespace; skips without one (fails
    under CI, which runs as root: tests/support/components.py)."""
    if shutil.which("unshare") is None:
        missing("the unshare command", "`unshare` is not on PATH", "apt-get install util-linux")
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        probe = subprocess.run([*prefix, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                               capture_output=True, timeout=30)
        if probe.returncode == 0:
            return prefix
    missing("a mount namespace", "`unshare -m` cannot mount here (not root, user namespaces disabled)",
            "run the tests as root, as CI does")


def _mounted(project: Project, script: str, *, size: str = "8m") -> subprocess.CompletedProcess[str]:
    """`script` (bash; `niceeval` is the real CLI, `$MNT` a fresh tmpfs of `size`) in a private
    mount namespace, in the project folder."""
    mnt = project.root.parent / "mnt"
    mnt.mkdir(exist_ok=True)
    prelude = (f"set -u\nMNT={shlex.quote(str(mnt))}\n"
               f"niceeval() {{ {' '.join(shlex.quote(a) for a in NICEEVAL)} \"$@\"; }}\n"
               f"mount -t tmpfs -o size={size} tmpfs \"$MNT\" || exit 99\n")
    return subprocess.run([*_unshare(), "bash", "-c", prelude + script], cwd=project.root, env=base_env(),
                          capture_output=True, text=True, timeout=180)


@pytest.fixture
def sealed(tmp_path: Path) -> tuple[Project, Path]:
    """A project and a store holding one finished run of its two evals."""
    project = Project(tmp_path / "proj")
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", _EVALS)
    store = tmp_path / "results.db"
    done = project.cli("run", "--store", str(store))
    assert done.returncode == 0, done.stderr
    return project, store


def test_every_reader_reads_a_store_on_a_read_only_file_system(sealed):
    """SQLite cannot make a WAL store's `-shm` file there: every reader failed, exit 2."""
    project, store = sealed
    done = _mounted(project, f"""
        cp {shlex.quote(str(store))} "$MNT/results.db" && mount -o remount,ro "$MNT" || exit 99
        S="$MNT/results.db"
        niceeval view --store "$S" > /dev/null; echo "view $?"
        niceeval query attempts --format csv --store "$S" | tail -n +2 | wc -l | sed 's/^/attempts /'
        niceeval query --sql 'SELECT count(*) AS n FROM runs' --format csv --store "$S" | tail -1 | sed 's/^/runs /'
        niceeval report --store "$S" --out "$MNT/../report.html" > /dev/null; echo "report $?"
        niceeval merge "$S" --into "$MNT/../merged.db" > /dev/null; echo "merge $?"
        ls -A "$MNT" | tr '\\n' ' ' | sed 's/^/files /'; echo
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == ["view 0", "attempts 2", "runs 1", "report 0", "merge 0", "files results.db "], done.stderr
    assert done.stderr == ""


_HOLD_OPEN = "import sqlite3, sys, time; sqlite3.connect(sys.argv[1]).execute('SELECT 1 FROM runs'); time.sleep(600)"


def test_a_write_ahead_log_left_on_read_only_media_is_still_read(sealed):
    """The main file alone is read only when no `-wal` is beside it: a run whose rows are still
    in the `-wal` (a reader held the store open, then was killed) is shown, not lost."""
    project, store = sealed
    done = _mounted(project, f"""
        cp {shlex.quote(str(store))} "$MNT/results.db" || exit 99
        S="$MNT/results.db"
        {shlex.quote(sys.executable)} -c {shlex.quote(_HOLD_OPEN)} "$S" &
        holder=$!
        sleep 0.5
        niceeval run --rerun-all --store "$S" > /dev/null 2>&1; echo "run $?"
        kill -9 $holder; wait $holder 2> /dev/null
        test -s "$S-wal" && echo "wal kept"
        mount -o remount,ro "$MNT" || exit 99
        niceeval query --sql 'SELECT count(*) AS n FROM runs' --format csv --store "$S" | tail -1 | sed 's/^/runs /'
    """)
    assert done.stdout.splitlines() == ["run 0", "wal kept", "runs 2"], done.stderr


def test_a_run_on_a_read_only_file_system_is_exit_6_naming_the_file(sealed):
    """Was exit 2, "the directory ... is not writable (unable to open database file)"."""
    project, store = sealed
    done = _mounted(project, f"""
        cp {shlex.quote(str(store))} "$MNT/results.db" && mount -o remount,ro "$MNT" || exit 99
        for S in "$MNT/results.db" "$MNT/new.db" "$MNT/sub/new.db"; do
            niceeval run --store "$S" > /dev/null 2> "$MNT/../err"; echo "$? $(cat "$MNT/../err")"
        done
    """)
    mnt = project.root.parent / "mnt"
    lines = done.stdout.splitlines()
    assert len(lines) == 3, (done.stdout, done.stderr)
    for line, name in zip(lines, ("results.db", "new.db", "sub/new.db"), strict=True):
        code, message = line.split(" ", 1)
        assert code == "6", line
        assert message.startswith("niceeval: ") and f"{mnt}/{name}" in message, line
        assert "the file system is read-only; point --store at a writable location." in message, line
        assert "Traceback" not in message


def test_a_disk_too_full_for_the_new_stores_shm_file_is_exit_6(sealed):
    """SQLITE_IOERR_SHMSIZE (the `-shm` cannot grow) was exit 2, "disk I/O error"."""
    project, _ = sealed
    done = _mounted(project, """
        niceeval run --store "$MNT/results.db" > /dev/null 2> "$MNT/../err"; echo "$?"; cat "$MNT/../err"
    """, size="16k")
    code, *message = done.stdout.splitlines()
    assert code == "6", (done.stdout, done.stderr)
    assert len(message) == 1 and str(project.root.parent / "mnt" / "results.db") in message[0]
    assert "the disk is full" in message[0] and "free some space" in message[0]


def test_a_shm_file_left_not_writable_is_named_by_run_and_read_past_by_readers(sealed):
    """A crashed process of another user leaves `-wal` / `-shm` files this user cannot write:
    `run` said only "the store cannot be written (read-only); point --store at a writable
    location" (a new store, losing the history) — now it names the file to fix."""
    project, store = sealed
    done = _mounted(project, f"""
        cp {shlex.quote(str(store))} "$MNT/results.db" || exit 99
        S="$MNT/results.db"
        {shlex.quote(sys.executable)} -c {shlex.quote(_HOLD_OPEN)} "$S" &
        holder=$!
        sleep 0.5
        kill -9 $holder; wait $holder 2> /dev/null
        mount --bind "$S-shm" "$S-shm" && mount -o remount,ro,bind "$S-shm" || exit 99
        niceeval run --store "$S" > /dev/null 2> "$MNT/../err"; echo "run $?"; cat "$MNT/../err"
        niceeval query --sql 'SELECT count(*) AS n FROM runs' --format csv --store "$S" | tail -1 | sed 's/^/runs /'
    """)
    mnt = project.root.parent / "mnt"
    assert done.stdout.splitlines() == [
        "run 6",
        f"niceeval: Recording abandoned runs failed on the results store {mnt}/results.db: "
        f"the file {mnt}/results.db-shm beside it is not writable; fix its permissions.",
        "runs 1",
    ], done.stderr


def test_a_write_that_did_not_finish_on_read_only_media_is_refused_not_read_half_done(sealed):
    """With a hot `-journal` beside it the main file holds half a write: it is never read as it
    is (that said "damaged; move it aside", losing what the journal restores), and the message
    says where it can be rolled back."""
    from tests.store.test_open_errors import unfinished_rollback_write

    project, store = sealed
    unfinished_rollback_write(store)
    done = _mounted(project, f"""
        cp {shlex.quote(str(store))} {shlex.quote(str(store))}-journal "$MNT/" && mount -o remount,ro "$MNT" || exit 99
        niceeval query attempts --store "$MNT/results.db" > /dev/null 2> "$MNT/../err"; echo "$?"; cat "$MNT/../err"
    """)
    mnt = project.root.parent / "mnt"
    assert done.stdout.splitlines() == [
        "6",
        f"niceeval: Opening failed on the results store {mnt}/results.db: a write that did not finish left "
        f"{mnt}/results.db-journal beside it, which can only be rolled back where the folder is writable; "
        "open the store once there (`niceeval view` rolls it back).",
    ], done.stderr
