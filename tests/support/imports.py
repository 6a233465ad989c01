"""The package's imports as the code has them, read with `ast` (nothing is imported).

Every `import` / `from ... import` of the package is found wherever it stands: at the top of a
module, under `if TYPE_CHECKING:`, or lazily inside a function. Relative imports are resolved, and
`from pkg import name` counts as importing the module `pkg.name` when that module exists. The
layer test (tests/test_layers.py) and the private-import test (tests/test_private_imports.py)
both read the package through `package_imports`.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE_NAME = "niceeval_cli"
PACKAGE = Path(__file__).resolve().parents[2] / PACKAGE_NAME


@dataclass(frozen=True)
class Import:
    """One import of a package module: who imports what, at which line of which file."""

    source: str  # importing module, dotted ("niceeval_cli.reports.junit")
    target: str  # imported module, dotted ("niceeval_cli.expect._judge")
    imported: str  # the name as written, resolved ("niceeval_cli.expect._judge.JudgeMatch")
    path: Path  # the importing file
    line: int  # the import statement's first line
    lazy: bool  # inside a function (imported when the function runs)
    typing_only: bool  # under `if TYPE_CHECKING:` (read by the type checker, never run)


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _is_module(dotted: str, root: Path) -> bool:
    """Asked ~13 000 times per pass over the package, of a few hundred names (two stats each)."""
    where = root.parent.joinpath(*dotted.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _nearest_module(dotted: str, root: Path) -> str:
    """The longest prefix of a dotted name that is a module of the package (`pkg.mod.Name` → `pkg.mod`)."""
    parts = dotted.split(".")
    while len(parts) > 1 and not _is_module(".".join(parts), root):
        parts.pop()
    return ".".join(parts)


#: The fields of a statement that hold statements: an import is a statement, so the walk reads
#: only these (visiting every expression node as well cost ~1.5 s per pass over the package).
_BODIES = ("body", "handlers", "orelse", "finalbody", "cases")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _find(statements: list[ast.AST], lazy: bool, typing: bool,
          found: list[tuple[ast.Import | ast.ImportFrom, bool, bool]]) -> None:
    """Every import statement under `statements`: `lazy` inside a function, `typing` under
    `if TYPE_CHECKING:` (its `else:` branch runs, so it is not typing-only)."""
    for node in statements:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, lazy, typing))
            continue
        inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            _find(node.body, inner, True, found)
            _find(node.orelse, inner, typing, found)
            continue
        for field in _BODIES:
            children = getattr(node, field, None)
            if children:
                _find(children, inner, typing, found)


#: A text's import statements, by the text: the layer test's planted-import check reads a copy of
#: the package, whose files but three are the package's own texts (parsed once, not twice).
_STATEMENTS: dict[str, list[tuple[ast.Import | ast.ImportFrom, bool, bool]]] = {}


def _import_statements(text: str, filename: str) -> list[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    if text not in _STATEMENTS:
        found: list[tuple[ast.Import | ast.ImportFrom, bool, bool]] = []
        _find(ast.parse(text, filename).body, False, False, found)
        _STATEMENTS[text] = found
    return _STATEMENTS[text]


def file_imports(path: Path, root: Path = PACKAGE) -> Iterator[Import]:
    """The package modules one file imports, one `Import` per name imported."""
    source = module_name(path, root)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    for node, lazy, typing_only in _import_statements(path.read_text(encoding="utf-8"), str(path)):
        names: list[tuple[str, str]] = []  # (imported name, the module it is or lives in)
        if isinstance(node, ast.Import):
            names = [(alias.name, _nearest_module(alias.name, root)) for alias in node.names]
        else:
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                named = f"{module}.{alias.name}"
                names.append((named, named if _is_module(named, root) else _nearest_module(module, root)))
        for imported, target in names:
            if target == root.name or target.startswith(root.name + "."):
                yield Import(source, target, imported, path, node.lineno, lazy, typing_only)


#: A file's imports, by (file, its size and mtime, root): the layer and private-import tests
#: read the whole package several times per process, and parsing it costs about a second each.
_READ: dict[tuple[Path, int, int, Path], tuple[Import, ...]] = {}


def package_imports(root: Path = PACKAGE) -> list[Import]:
    """Every import of a package module by a module of the package."""
    found: list[Import] = []
    for path in sorted(root.rglob("*.py")):
        stat = path.stat()
        key = (path, stat.st_size, stat.st_mtime_ns, root)
        if key not in _READ:
            _READ[key] = tuple(file_imports(path, root))
        found += _READ[key]
    return found


def first_level_unit(module: str) -> str:
    """`niceeval_cli.reports.html._details` → `reports`; the package's own `__init__` → `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def first_level_units(root: Path = PACKAGE) -> set[str]:
    """The package's first-level units: its subpackages and its top-level modules."""
    units = {p.stem for p in root.glob("*.py")} | {p.parent.name for p in root.glob("*/__init__.py")}
    return units
