"""Issue 24 item 1: imports point downwards, checked against one layer table.

Every first-level unit of `niceeval_cli` (its subpackages and top-level modules) has a layer
number; a module may import its own layer and the layers below, never a higher one. Every import
is read with `ast` (tests/support/imports.py): at the top of a module, lazily inside a function and
under `if TYPE_CHECKING:`. docs/architecture.md draws the same table.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.imports import PACKAGE, Import, first_level_unit, first_level_units, package_imports

#: Under `-n`, the package's import tests share one worker: each worker that runs one of them
#: parses the whole package first (tests/support/imports.py keeps what it read for the next).
pytestmark = pytest.mark.xdist_group("package_imports")

#: Each first-level unit → its layer. Lower layers never import higher ones.
LAYERS: dict[str, int] = {
    # 0 low modules: anyone may import them (they import only one another)
    "_bounds": 0, "_capture": 0, "_collector": 0, "_crash": 0, "_credentials": 0, "_errors": 0, "_fingerprint": 0,
    "_gateway": 0, "_httpx": 0, "_ids": 0, "_imports": 0, "_interrupt": 0, "_lanes": 0, "_output_file": 0,
    "_project_sources": 0,
    "_judge_scale": 0, "_records": 0, "_redact": 0, "_registry": 0, "_sandbox_spec": 0,
    "_secrets": 0, "_selectors": 0, "_shards": 0, "_states": 0, "_stdout": 0, "_wire": 0,
    # 1-3 pure: matches and statistics; verdicts and runs; two sides compared
    "expect": 1, "stats": 1,
    "outcomes": 2,
    "comparison": 3, "experiment_totals": 3, "_pair_stats": 3, "_unit_folds": 3,
    # 4 the sandbox kinds and workspaces (authoring's `t.sandbox` reads them)
    "sandbox": 4,
    # 5 what eval code touches; the root package's lazy public face; the dataset loaders
    "authoring": 5, "__init__": 5, "datasets": 5, "_promptfoo_tests": 5,
    # 6 turns from elsewhere: framework results, spans
    "integrations": 6, "traces": 6,
    # 7 the built-in adapters
    "adapters": 7,
    # 8 niceeval.toml (asks the adapter registry for names)
    "config": 8,
    # 9 eval files imported, the judge client, the SQLite store
    "discovery": 9, "judge": 9, "store": 9,
    # 10 planning and executing a run
    "runner": 10,
    # 11 data → output
    "reports": 11,
    # 12 one use case per command
    "app": 12,
    # 13 the typer app and `python -m niceeval_cli`
    "cli": 13, "__main__": 13,
}

#: Upward imports allowed, each for a reason; only under `if TYPE_CHECKING:` (never run).
TYPING_ONLY_UPWARD: dict[tuple[str, str], str] = {
    ("_registry", unit): "each registry is typed by the kind registered in it; the kinds register themselves"
    for unit in ("authoring", "judge", "runner", "sandbox")
}


def upward_imports(imports: list[Import], layers: dict[str, int] = LAYERS) -> list[Import]:
    """The imports of a higher layer than the importing module's own."""
    upward = []
    for imp in imports:
        source, target = first_level_unit(imp.source), first_level_unit(imp.target)
        if layers[target] <= layers[source]:
            continue
        if imp.typing_only and (source, target) in TYPING_ONLY_UPWARD:
            continue
        upward.append(imp)
    return upward


def _shown(imports: list[Import], root: Path = PACKAGE) -> str:
    return "\n".join(
        f"{i.path.relative_to(root.parent)}:{i.line} ({first_level_unit(i.source)}, layer "
        f"{LAYERS[first_level_unit(i.source)]}) imports {i.target} (layer {LAYERS[first_level_unit(i.target)]})"
        for i in imports
    )


def test_every_first_level_unit_has_a_layer() -> None:
    units = first_level_units()
    assert units - set(LAYERS) == set(), "give the new unit a layer here and on docs/architecture.md"
    assert set(LAYERS) - units == set(), "a unit in the table no longer exists"


def test_no_module_imports_a_higher_layer() -> None:
    upward = upward_imports(package_imports())
    assert not upward, "an import points upwards: move the thing it needs down\n" + _shown(upward)


def test_the_units_import_one_another_without_a_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in package_imports():
        source, target = first_level_unit(imp.source), first_level_unit(imp.target)
        if source != target and not imp.typing_only:
            graph[source].add(target)
    done: set[str] = set()

    def visit(unit: str, path: tuple[str, ...]) -> None:
        assert unit not in path, "a cycle: " + " → ".join((*path, unit))
        if unit in done:
            return
        for target in sorted(graph[unit]):
            visit(target, (*path, unit))
        done.add(unit)

    for unit in sorted(graph):
        visit(unit, ())


def test_the_check_fails_on_an_upward_import_planted_in_a_copy_of_the_package(tmp_path: Path) -> None:
    copy = tmp_path / "niceeval_cli"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert upward_imports(package_imports(copy)) == []
    with (copy / "store" / "rows.py").open("a", encoding="utf-8") as rows:
        rows.write("\n\ndef _planted() -> None:\n    from ..runner import run  # lazy, still upward\n")
    with (copy / "expect" / "_core.py").open("a", encoding="utf-8") as core:
        core.write("\nfrom .. import reports  # a top-level upward import\n")
    with (copy / "_registry.py").open("a", encoding="utf-8") as registry:
        registry.write("\nfrom .app import run as _app_run  # not a typing-only import: not excused\n")
    found = {(first_level_unit(i.source), i.target, i.lazy) for i in upward_imports(package_imports(copy))}
    assert found == {
        ("store", "niceeval_cli.runner", True),
        ("expect", "niceeval_cli.reports", False),
        ("_registry", "niceeval_cli.app.run", False),
    }


# -- the finer rules inside the layers (issue 10.3, 24.4) ---------------------------------------


def _by_unit(unit: str) -> dict[str, set[str]]:
    """Module of one unit → the names it imports from the package."""
    found: dict[str, set[str]] = defaultdict(set)
    for imp in package_imports():
        if first_level_unit(imp.source) == unit:
            found[imp.source] |= {imp.imported, imp.target}
    return found


def test_reports_only_turn_data_into_output() -> None:
    # Row types (niceeval_cli.store.rows) are data and may be read; the Store itself may not.
    forbidden = ("niceeval_cli.discovery", "niceeval_cli.runner.run", "niceeval_cli.runner.plan",
                 "niceeval_cli.config", "niceeval_cli.store.store", "niceeval_cli.store.Store",
                 "niceeval_cli.store.connect")
    for module, names in _by_unit("reports").items():
        for name in names:
            assert not name.startswith(forbidden), (module, name)


def test_the_app_layer_neither_prints_nor_imports_reports_beyond_their_records() -> None:
    for module, names in _by_unit("app").items():
        beyond = [n for n in names
                  if n.startswith("niceeval_cli.reports") and not n.startswith("niceeval_cli.reports.data")]
        assert not beyond, (module, beyond)
    for source in sorted((PACKAGE / "app").rglob("*.py")):
        text = source.read_text(encoding="utf-8")
        assert "import rich" not in text and "from rich" not in text and "print(" not in text, source
