"""Every code block in README.md and docs/ runs as shown (issue 9, item 24), and every console
transcript prints what it shows: an exit code alone let stale summaries through.

One throwaway project per page; the blocks are applied in page order (see tests/support/code_blocks.py for
the conventions, tests/support/transcripts.py for how output is compared). A failure names the page and
line of the block, and of the first shown line that differs.
"""

from __future__ import annotations

import contextlib
import doctest
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from tests.support.code_blocks import PAGES, REPO, Block, Command, blocks, commands, transcripts
from tests.support.components import need_command, need_ray
from tests.support.loopback import free_port
from tests.support.transcripts import PageIds, Shown, mismatch
from tests.support.warm_cli import COMMANDS, COMPARISONS, WarmCli

pytestmark = pytest.mark.slow

_RUNNABLE = ("python", "toml", "bash", "sh", "pycon", "json", "console")


def _env(project: Path, bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NICEEVAL_", "OPENAI_"))}
    env.update({"PYTHONPATH": os.pathsep.join([str(project), str(REPO)]), "NO_COLOR": "1",
                "COLUMNS": "100", "PATH": str(bin_dir) + os.pathsep + env.get("PATH", "")})
    # A reader's pytest has none of the test extras' plugins: the sandbox page's evals run pytest in
    # each workspace, where loading them (langsmith, hypothesis, xdist, ...) cost ~2.6 s of CPU a run.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def _shim(bin_dir: Path) -> None:
    """`niceeval` on PATH runs this checkout with the test's interpreter."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "niceeval"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from niceeval_cli.cli import main; main()" "$@"\n')
    shim.chmod(0o755)


_NICEEVAL = re.compile(r"(?<![\w./-])niceeval(?![\w.-])")


def _shell_lines(page: Path) -> list[str]:
    """The shell commands the page's blocks run (a script block is one)."""
    found = []
    for block in blocks(page):
        if block.directive is None and block.lang in ("bash", "sh"):
            found += [command.line for command in commands(block)]
        elif block.directive in (None, "run in") and block.lang == "console":
            found += [transcript.command.line for transcript in transcripts(block)]
        elif block.directive == "output of":
            found.append(block.note)
    return found


@contextlib.contextmanager
def _niceeval(page: Path, tmp_path: Path, env: dict[str, str], project: Path, bin_dir: Path) -> Iterator[None]:
    """The page's `niceeval`: a warm one (tests/support/warm_cli.py: each command a real process
    forked from an interpreter that has imported the CLI, ~0.05 s of CPU instead of ~0.4 s) when the
    page runs several; `NICEEVAL_DOCS_COLD=1` runs every one as a fresh interpreter, as `_shim` does."""
    lines = _shell_lines(page)
    # An `output of` block shows what niceeval printed (matches.md's `python results.py` runs and queries).
    outputs = sum(block.directive == "output of" for block in blocks(page))
    if sum(len(_NICEEVAL.findall(line)) for line in lines) + outputs < 2 or os.environ.get("NICEEVAL_DOCS_COLD"):
        yield
        return
    preload = list(COMMANDS)
    if any(re.search(r"niceeval compare|--baseline", line) for line in lines):
        preload += COMPARISONS
    with WarmCli(tmp_path / "warm", env, project, preload) as warm:
        warm.shim(bin_dir)
        yield


@dataclass
class _Page:
    """Where a page's blocks run: its project, its environment (a console block's `$ export X=y`
    stays set for the page's later blocks), the ids learnt, and the examples copied for `run in`."""

    project: Path
    env: dict[str, str]
    ids: PageIds = field(default_factory=PageIds)
    examples: dict[str, Path] = field(default_factory=dict)
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def example(self, name: str) -> Path:
        """The page's copy of `examples/<name>` (`<!-- run in examples/trust -->`), made at its
        first use and shared by the page's later blocks, as a reader's one checkout would be. An
        example with a `_fake_judge.py` gets it serving, as examples/README.md starts it, on a free
        loopback port its niceeval.toml is pointed at (8765 may be taken)."""
        if name not in self.examples:
            source = REPO / name
            assert source.is_dir() and source.parent == REPO / "examples", f"{name} is not an example"
            copy = self.project.parent / "examples" / source.name
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".niceeval", "__pycache__"))
            if (copy / "_fake_judge.py").exists():
                self._serve_fake_judge(copy)
            self.examples[name] = copy
        return self.examples[name]

    def _serve_fake_judge(self, copy: Path) -> None:
        port = free_port()
        toml = copy / "niceeval.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace("127.0.0.1:8765", f"127.0.0.1:{port}"),
                        encoding="utf-8")
        judge = subprocess.Popen([sys.executable, "_fake_judge.py", str(port)], cwd=copy, env=self.env,
                                 stdout=subprocess.PIPE, text=True)
        assert judge.stdout is not None
        self.stack.callback(judge.stdout.close)
        self.stack.callback(judge.wait, timeout=10)
        self.stack.callback(judge.terminate)
        assert "fake judge on" in judge.stdout.readline()


_EXPORT = re.compile(r"^\$ export (?P<name>\w+)=(?P<value>\S*)")


def _run_block(block: Block, page: _Page) -> None:
    project, env, ids = page.project, page.env, page.ids
    if block.directive in ("not run", "illustrative"):
        return
    if block.directive == "output of":
        _run_output_of(block, project, env, ids)
        return
    if block.file_name is not None:
        target = project / block.file_name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.contents, encoding="utf-8")
        if block.lang == "toml" or target.suffix == ".toml":
            tomllib.loads(block.body)
        elif target.suffix == ".py":
            compile(block.body, block.where, "exec")
        return
    if block.lang == "python":
        code = compile(block.body, block.where, "exec")
        if block.directive == "fragment":
            return
        del code
        done = subprocess.run([sys.executable, "-c", block.body], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{block.where}: the script exited {done.returncode}\n{done.stderr}"
    elif block.lang == "toml":
        tomllib.loads(block.body)
    elif block.lang == "json":
        json.loads(block.body)
    elif block.lang == "pycon":
        test = doctest.DocTestParser().get_doctest(block.body, {}, block.where, str(block.page), block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.failures == 0, f"{block.where}: the doctest failed"
    elif block.lang in ("bash", "sh"):
        for command in commands(block):
            _run_command(block, command, project, env)
    elif block.lang == "console":
        for line in block.body.splitlines():
            if (export := _EXPORT.match(line)) is not None:
                env[export.group("name")] = shlex.split(export.group("value"))[0] if export.group("value") else ""
        if block.directive == "run in":
            copy = page.example(block.note.split(",")[0].split()[0])
            _run_transcripts(block, copy, {**env, "PYTHONPATH": os.pathsep.join([str(copy), str(REPO)])}, ids)
        else:
            _run_transcripts(block, project, env, ids)


def _run_command(block: Block, command: Command, project: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command.line], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == command.expected_exit, (
        f"{block.where}: `{command.line}` exited {done.returncode}, "
        f"the docs say {command.expected_exit}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _run_output_of(block: Block, project: Path, env: dict[str, str], ids: PageIds) -> None:
    """An output block marked `<!-- output of: COMMAND -->` is what COMMAND prints in the page's
    project (stdout and stderr together), compared as a transcript is; COMMAND exits 0."""
    line = ids.command(block.note)
    done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=project, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert done.returncode == 0, f"{block.where}: `{line}` exited {done.returncode}\n{done.stdout[-3000:]}"
    shown = [Shown(number, text) for number, text in enumerate(block.body.splitlines(), start=block.line + 1)]
    problem = mismatch(block.page_name, block.line, shown, done.stdout, ids)
    if problem is not None:
        raise AssertionError(problem)


def _run_transcripts(block: Block, project: Path, env: dict[str, str], ids: PageIds) -> None:
    """Each `$ niceeval` of a console block runs and must print what the page shows under it
    (stdout and stderr together, as a terminal shows them) and exit with the code the page states."""
    found = transcripts(block)
    assert found, f"{block.where}: a console block shows `$ niceeval` commands; label output alone `text`"
    for transcript in found:
        line = ids.command(transcript.command.line)
        done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=project, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        assert done.returncode == transcript.command.expected_exit, (
            f"{block.page_name}:{transcript.line}: `{line}` exited {done.returncode}, "
            f"the docs say {transcript.command.expected_exit}\n{done.stdout[-3000:]}")
        problem = mismatch(block.page_name, transcript.line, transcript.shown, done.stdout, ids)
        if problem is not None:
            raise AssertionError(problem)


def _needs_ray(block: Block) -> bool:
    """A block that runs `niceeval run --executor ray` needs the `[ray]` extra installed."""
    return block.lang in _RUNNABLE and block.directive is None and "--executor ray" in block.body


def _page_problems(page: Path, tmp_path: Path) -> list[str]:
    """What differs between the page's blocks and what they do, one entry per block, in a
    throwaway project (every block is tried, so that one run reports every stale block)."""
    project, bin_dir = tmp_path / "project", tmp_path / "bin"
    project.mkdir()
    _shim(bin_dir)
    env = _env(project, bin_dir)
    problems, state = [], _Page(project, env)
    with _niceeval(page, tmp_path, env, project, bin_dir), state.stack:
        for block in blocks(page):
            if block.lang in _RUNNABLE or block.file_name is not None or block.directive == "output of":
                try:
                    _run_block(block, state)
                except (AssertionError, SyntaxError, ValueError) as exc:
                    problems.append(f"{block.where}: {type(exc).__name__}: {exc}")
    shutil.rmtree(project / ".niceeval", ignore_errors=True)
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_code_block_of_the_page_runs_as_shown(page: Path, tmp_path: Path) -> None:
    if any(_needs_ray(block) for block in blocks(page)):
        need_ray()  # `[test]` has no Ray: its page's blocks skip with the reason (and fail in CI)
    if any(block.lang == "console" and "| jq" in block.body for block in blocks(page) if block.directive is None):
        need_command("jq")  # transcripts pipe `query` into jq, as a reader would
    problems = _page_problems(page, tmp_path)
    assert not problems, "\n\n".join(problems)


#: Last session's stale first run of docs/getting-started.md (before e0f9ad4): no pass-rate line,
#: and the count line as it was before it counted evals.
_STALE_SUMMARY = """  attempts  1 of 1 passed (100%)

run 01M8N2KDE25ST1KHSWPW7VM130: 1 passed · exit 0 (everything passed)
"""
_CURRENT_SUMMARY = """  attempts  1 of 1 passed (100%)
            pass rate 100% over 1 eval

run 01M8N2KDE25ST1KHSWPW7VM130: 1 eval: 1 passed · exit 0 (everything passed)
"""


def test_a_stale_run_summary_fails_naming_the_page_and_line(tmp_path: Path) -> None:
    """The check this file makes catches what the exit code alone let through: a scratch copy of
    getting-started.md (up to its first run) with last session's stale summary put back fails at
    the first line that differs."""
    text = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8").split("## Look at the results")[0]
    assert _CURRENT_SUMMARY in text
    page = tmp_path / "getting-started.md"
    page.write_text(text.replace(_CURRENT_SUMMARY, _STALE_SUMMARY, 1), encoding="utf-8")
    blank = text[: text.index(_CURRENT_SUMMARY)].count("\n") + 2  # the line after `attempts`

    (work := tmp_path / "work").mkdir()
    problems = _page_problems(page, work)

    assert len(problems) == 1, problems
    assert (f"{page}:{blank}: the page shows\n    (a blank line)\n"
            "where niceeval printed\n    pass rate 100% over 1 eval") in problems[0]


#: A line only niceeval's output has: a transcript's command, a run's plan or summary, an attempt's heading.
_NICEEVAL_OUTPUT = re.compile(r"^(?:\$ niceeval|niceeval: |run 01\w+: |(?:FAILED|ERRORED|UNRANKABLE) )|· exit \d+ \(",
                              re.M)


def _marking_problem(block: Block) -> str | None:
    """Why a block's marking breaks the convention (tests/support/code_blocks.py), if it does."""
    if block.directive in ("output of", "illustrative"):
        if block.lang != "" or not block.note:
            return f"<!-- {block.directive}: ... --> marks an unlabelled output block, and says what (or why)"
    elif block.directive == "run in" and (block.lang != "console" or not block.note.startswith("examples/")):
        return "<!-- run in examples/NAME --> marks a console block"
    elif block.lang == "" and block.file_name is None:
        return "output that is neither checked (<!-- output of: COMMAND -->) nor marked <!-- illustrative: why -->"
    elif block.lang == "text" and _NICEEVAL_OUTPUT.search(block.body):
        return "a `text` block showing niceeval's output: leave it unlabelled, and check it or mark it illustrative"
    return None


def test_every_output_block_is_checked_or_marked_illustrative() -> None:
    """Nothing claims to be output that was never produced: an unlabelled block is output, and
    either its command runs and it is compared (`output of`) or it says it is illustrative."""
    problems = [f"{b.where}: {problem}" for page in PAGES for b in blocks(page)
                if (problem := _marking_problem(b)) is not None]
    assert not problems, "\n".join(problems)


def test_a_stale_output_block_fails_and_an_unmarked_one_is_refused(tmp_path: Path) -> None:
    """The `output of` check fails on a staled table of matches.md (one state changed), and an
    output block without a marking breaks the convention."""
    text = (REPO / "docs" / "matches.md").read_text(encoding="utf-8").split("## Three-valued logic")[0]
    row = "at_most                         mismatched   expected at_most(5), got 6\n"
    assert row in text
    page = tmp_path / "matches.md"
    page.write_text(text.replace(row, row.replace("mismatched", "matched   "), 1), encoding="utf-8")
    stale = text[: text.index(row)].count("\n") + 1

    (work := tmp_path / "work").mkdir()
    problems = _page_problems(page, work)

    assert len(problems) == 1, problems
    assert (f"{page}:{stale}: the page shows\n    at_most matched expected at_most(5), got 6\n"
            "where niceeval printed\n    at_most mismatched expected at_most(5), got 6") in problems[0]
    unmarked = blocks(page)[-1]
    assert unmarked.directive == "output of"
    assert _marking_problem(Block(page, unmarked.line, "", unmarked.body, None)) is not None


def test_fragments_and_skipped_blocks_stay_few() -> None:
    marked = [b.where for page in PAGES for b in blocks(page) if b.directive in ("fragment", "not run")]
    total = sum(len(blocks(page)) for page in PAGES)
    assert len(marked) <= max(3, total // 8), marked


def test_the_readme_starts_with_the_two_commands() -> None:
    first = blocks(REPO / "README.md")[0]
    assert first.body.splitlines() == ["pip install -e . && niceeval run",
                                      "pip install -e '.[test]' && python -m pytest -q -n auto"]
