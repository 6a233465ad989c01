"""Reading the fenced code blocks of README.md and docs/*.md, and what each block is for.

The conventions (documented in docs/README.md, "Code blocks in these docs"):

- A `python` or `toml` block whose first line is a comment naming a file (`# evals/refunds.py`,
  `# niceeval.toml`) is that file of the page's project: the test writes it into one throwaway
  project per page, in page order (a later block of the same name replaces it).
- Any other `python` block is a script, run with the page's project as working directory and
  on `sys.path`; it must exit 0. A `pycon` block is run as a doctest.
- A `toml` block without a file name must be valid TOML; a `json` block valid JSON.
- In a `bash` / `sh` block each line that starts with `niceeval` runs (through a shell, so pipes
  work) in the page's project; it must exit 0, or the code its trailing comment states
  (`niceeval run   # exit 1: ...`). Other lines (`pip install`, `git clone`, `cd`) set up the
  reader's machine and are not run. A block that reads `$?` is a script: it runs whole and
  must exit 0 (or the code stated on its first line).
- `console` blocks are transcripts, and must hold at least one `$ niceeval ...` line (`$ VAR=x
  niceeval ...` sets variables for it). Each `$ niceeval ...` line runs in the page's
  project (through a shell: `| jq` works) and must print what the page shows under it, up to
  the next `$` line — stdout and stderr together, as a terminal shows them — and exit with the
  code its run summary states (`· exit 1 (...)`, after `run` or `regrade`), else its comment's
  (`$ niceeval run x   # exit 5`), else 0. Other `$` lines (`cd`, `export`) are not run. Compared after masking
  (tests/support/transcripts.py has the rules and why):
  - whitespace runs count as one space (column widths follow the data);
  - ids (`01M8N2KFAH0DAPNND9A3WTXE1Y`, or a prefix of 8+) match any id, but one page id stands
    for one printed id across the page: a later `$ niceeval view @01M8N2KFAH` runs with the
    printed id, and a `--dry` plan's "attempt X from run Y" must name the ones printed before;
  - clock times (`2026-11-30 01:55:08 UTC`), sha256 digests, and the durations after `took`,
    `duration` and `"duration_ms":` match any value of their shape;
  - the lines a run prints as its attempts finish (after `niceeval: N slot(s): ...`, up to a
    blank line) are compared sorted: their order is the order the attempts finished in;
  - `…` inside a line matches any text; a line `...` alone (indented or not) matches any number
    of lines (an excerpt: `$ niceeval run order_reply` then `...` when only the query after it
    matters).
  A `$ export VAR=x` line sets VAR for the page's later commands. `<!-- run in examples/NAME -->`
  before a console block runs its commands in the page's copy of that example (made at first use;
  an example with a `_fake_judge.py` gets it serving on a free port, its niceeval.toml pointed there).
- An unlabelled block is output, and must say where it came from (tests/docs/test_code_blocks.py
  refuses one that does not): `<!-- output of: COMMAND -->` runs COMMAND (through a shell) in the
  page's project and compares what it prints with the block, as a transcript's lines are
  compared; `<!-- illustrative: why -->` marks output the page's project cannot produce (another
  project, a terminal's live display), which is not run. A `text` block is not output (a
  signature, a synopsis, a file tree): one showing niceeval's output is refused.
- `xml` blocks are not run.
- `<!-- fragment -->` on the line before a fence marks a piece of a larger example: it is only
  compiled (python) or parsed (toml). `<!-- not run: why -->` skips a block that cannot run in a
  test (the README's install-and-test-everything commands). Both are kept few.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.transcripts import Shown

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(?P<fence>```+)(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_DIRECTIVE = re.compile(
    r"<!--\s*(?P<word>fragment|not run|output of|illustrative|run in)\b[:\s]*(?P<why>.*?)\s*-->\s*$")
_FILE_NAME = re.compile(r"^#\s*(?P<path>[\w./-]+\.(?:py|toml|txt|json|jsonl|csv|env))(?:\s+(?:—|-|\().*)?\s*$")
_EXIT = re.compile(r"#.*?\bexits?\s+(?P<code>\d+)")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    body: str
    directive: str | None  # "fragment" / "not run" / "output of" / "illustrative" / "run in" / None
    note: str = ""  # what follows the directive's word: the why, the command, the example

    @property
    def where(self) -> str:
        return f"{self.page_name}:{self.line}"

    @property
    def page_name(self) -> str:
        """The page as a failure names it: relative to the repository (a scratch copy: its path)."""
        return str(self.page.relative_to(REPO)) if self.page.is_relative_to(REPO) else str(self.page)

    @property
    def file_name(self) -> str | None:
        """The project file this block is, when its first line names one."""
        first = self.body.splitlines()[0] if self.body.strip() else ""
        match = _FILE_NAME.match(first.strip())
        return match.group("path") if match and self.lang in ("python", "toml", "") else None

    @property
    def contents(self) -> str:
        """What the named file holds: the block, less its caption line for data files (JSON
        Lines and CSV have no comments, so `# evals/refunds.jsonl` is only the caption)."""
        if self.file_name is not None and self.file_name.endswith((".jsonl", ".csv")):
            return self.body.split("\n", 1)[1] if "\n" in self.body else ""
        return self.body


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        directive = _DIRECTIVE.search(before)
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group("lang").lower(),
                           match.group("body"), directive.group("word") if directive else None,
                           directive.group("why") if directive else ""))
    return found


@dataclass(frozen=True)
class Command:
    line: str
    expected_exit: int


_SUMMARY_EXIT = re.compile(r"· exit (?P<code>\d+) \(")


@dataclass(frozen=True)
class Transcript:
    """One `$ niceeval ...` of a console block and the lines the page shows under it."""

    command: Command
    line: int  # page line of the `$` line
    shown: tuple[Shown, ...]


def transcripts(block: Block) -> list[Transcript]:
    """The `$ niceeval ...` commands of a console block, each with the lines shown under it (up
    to the next `$` line)."""
    lines = list(enumerate(block.body.splitlines(), start=block.line + 1))
    starts = [i for i, (_, text) in enumerate(lines) if text.startswith("$ ")]
    found = []
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        number, text = lines[start]
        if _NICEEVAL_LINE.match(text):
            shown = tuple(Shown(n, t) for n, t in lines[start + 1:end])
            found.append(Transcript(Command(text[2:].strip(), _expected_exit(text, shown)), number, shown))
    return found


#: A transcript's `$ niceeval ...` line, maybe after variables set for it (`$ PASSES_e1=3 niceeval run`).
_NICEEVAL_LINE = re.compile(r"^\$ (?:\w+=\S* )*niceeval\b")


def _expected_exit(command: str, shown: tuple[Shown, ...]) -> int:
    """The code a run's summary states (`· exit 1 (`: `run`, and `regrade`, which seals a run), else
    the command's comment (`# exit 5`), else 0 (`view` of a run that exited 1 exits 0)."""
    for line in shown if re.search(r"\bniceeval (?:run|regrade)\b", command) else ():
        if (stated := _SUMMARY_EXIT.search(line.text)) is not None:
            return int(stated.group("code"))
    stated = _EXIT.search(command)
    return int(stated.group("code")) if stated else 0


def commands(block: Block) -> list[Command]:
    """The `niceeval ...` lines of a shell block with the exit code each must give (a script
    block is one command: the whole block)."""
    if "$?" in block.body:
        expected = _EXIT.search(block.body.splitlines()[0])
        return [Command(block.body, int(expected.group("code")) if expected else 0)]
    found = []
    for raw in block.body.replace("\\\n", " ").splitlines():
        line = raw.strip()
        if not line.startswith("niceeval"):
            continue
        expected = _EXIT.search(line)
        found.append(Command(line, int(expected.group("code")) if expected else 0))
    return found
