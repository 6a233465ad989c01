"""Issue 24 item 7: packages export through their `__init__`.

A module `niceeval_cli/<pkg>/.../_x.py` is private to the package directly containing it: a module
outside that package imports what it needs through the package (`from ..sandbox import
SandboxSpec`), not from `_x`. The top-level low modules (`niceeval_cli/_states.py`, `_errors.py`,
`_records.py`, ...) are private to the root package and shared by all its subpackages; they do not
count (docs/architecture.md, "Private modules"). At most 30 such imports remain, each with its
reason in a comment on its line or the line above. Imports inside functions count too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.imports import PACKAGE, Import, package_imports

#: Under `-n`, the package's import tests share one worker: each worker that runs one of them
#: parses the whole package first (tests/support/imports.py keeps what it read for the next).
pytestmark = pytest.mark.xdist_group("package_imports")

LIMIT = 30


def private_imports(root: Path = PACKAGE) -> list[Import]:
    """Imports of a subpackage's private module from outside the package that contains it."""
    found, seen = [], set()
    for imp in package_imports(root):
        if (imp.path, imp.line, imp.target) in seen:  # one statement importing several names counts once
            continue
        seen.add((imp.path, imp.line, imp.target))
        parts = imp.target.split(".")
        for depth in range(2, len(parts)):  # parts[0] is the root package: its `_x` modules are shared
            if parts[depth].startswith("_") and not parts[depth].startswith("__"):
                owner = ".".join(parts[:depth])
                if imp.source != owner and not imp.source.startswith(owner + "."):
                    found.append(imp)
                break
    return found


def _commented(imp: Import) -> bool:
    """A `#` comment on the import's first line, or a comment line right above it."""
    lines = imp.path.read_text(encoding="utf-8").splitlines()
    here = lines[imp.line - 1]
    above = lines[imp.line - 2].strip() if imp.line >= 2 else ""
    return "  # " in here or above.startswith("#")


def _shown(imports: list[Import]) -> str:
    return "\n".join(f"{i.path.relative_to(PACKAGE.parent)}:{i.line} imports {i.target}" for i in imports)


def test_at_most_thirty_imports_of_another_packages_private_modules_remain() -> None:
    found = private_imports()
    assert len(found) <= LIMIT, f"{len(found)} > {LIMIT}: export these through the package's __init__\n" + _shown(found)


def test_each_remaining_private_import_says_why() -> None:
    silent = [imp for imp in private_imports() if not _commented(imp)]
    assert not silent, "say why in a comment (or import through the package):\n" + _shown(silent)


def _plant(root: Path, files: dict[str, str]) -> Path:
    package = root / "niceeval_cli"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def test_the_scan_finds_top_level_lazy_and_module_imports_and_spares_the_shared_ones(tmp_path: Path) -> None:
    package = _plant(tmp_path, {
        "__init__.py": "",
        "_states.py": "X = 1\n",
        "expect/__init__.py": "from ._json import to_jsonable\n",
        "expect/_json.py": "def to_jsonable(v): return v\n",
        "expect/_inner/__init__.py": "",
        "expect/_inner/_deep.py": "Y = 2\n",
        "judge/__init__.py": "",
        "judge/_grade.py": (
            "from .._states import X\n"  # a shared low module: not counted
            "from ..expect import to_jsonable\n"  # through the package: not counted
            "from ..expect._json import to_jsonable as j\n"  # counted, silent
            "# the engine's JSON form\n"
            "from ..expect import _json\n"  # counted, commented above
            "def f():\n"
            "    from ..expect._inner._deep import Y  # lazy, counted, commented\n"
            "    import niceeval_cli.expect._json\n"  # absolute and lazy, counted, silent
        ),
    })
    found = private_imports(package)
    assert [(i.line, i.target, i.lazy) for i in found] == [
        (3, "niceeval_cli.expect._json", False),
        (5, "niceeval_cli.expect._json", False),
        (7, "niceeval_cli.expect._inner._deep", True),
        (8, "niceeval_cli.expect._json", True),
    ]
    assert [i.line for i in found if not _commented(i)] == [3, 8]


def test_a_package_may_import_its_own_private_modules_at_any_depth(tmp_path: Path) -> None:
    package = _plant(tmp_path, {
        "__init__.py": "",
        "reports/__init__.py": "",
        "reports/_tally.py": "",
        "reports/html/__init__.py": "from .._tally import x\nfrom . import _details\n",
        "reports/html/_details.py": "",
        "reports/terminal/__init__.py": "from ..html._details import y\n",
    })
    found = private_imports(package)
    assert [(i.source, i.target) for i in found] == [
        ("niceeval_cli.reports.terminal", "niceeval_cli.reports.html._details"),
    ]
