"""Issue 10.3: imports point one way. cli → app → reports → library; reports (data → output)
read only the records the app hands them (`reports/data.py`), never `app` itself (issue 24.4),
and never open the store, discover, plan or run; nothing imports cli."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "niceeval_cli"


def _imports(folder: str) -> dict[str, set[str]]:
    """Module → the niceeval_cli modules it imports (relative imports resolved), at any depth."""
    found: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = parts[:-1]
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = list(package[: len(package) - node.level + 1]) if node.level else []
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
                names.add(target)
                names.update(f"{target}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[module] = {n for n in names if n.startswith("niceeval_cli")}
    return found


def test_nothing_imports_cli() -> None:
    for folder in ("app", "reports", "runner", "judge", "authoring", "expect"):
        for module, names in _imports(folder).items():
            assert not any(n == "niceeval_cli.cli" or n.startswith("niceeval_cli.cli.") for n in names), module


def test_reports_only_turn_data_into_output() -> None:
    # Row types (niceeval_cli.store.rows) are data and may be read; the Store itself may not.
    forbidden = ("niceeval_cli.discovery", "niceeval_cli.runner.run", "niceeval_cli.runner.plan",
                 "niceeval_cli.config", "niceeval_cli.store.store", "niceeval_cli.store.Store",
                 "niceeval_cli.store.connect")
    for module, names in _imports("reports").items():
        for name in names:
            assert not name.startswith(forbidden), (module, name)


def test_reports_never_climb_back_into_the_app() -> None:
    for module, names in _imports("reports").items():
        assert not any(n == "niceeval_cli.app" or n.startswith("niceeval_cli.app.") for n in names), module


def test_the_app_layer_neither_prints_nor_imports_reports_beyond_their_records() -> None:
    for module, names in _imports("app").items():
        beyond = [n for n in names
                  if n.startswith("niceeval_cli.reports") and not n.startswith("niceeval_cli.reports.data")]
        assert not beyond, (module, beyond)
        source = (PACKAGE.parent / Path(*module.split("."))).with_suffix(".py")
        if not source.exists():
            source = PACKAGE.parent / Path(*module.split(".")) / "__init__.py"
        text = source.read_text(encoding="utf-8")
        assert "import rich" not in text and "from rich" not in text and "print(" not in text, module
