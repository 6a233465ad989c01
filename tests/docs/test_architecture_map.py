"""docs/architecture.md stays true: every package path it names exists, the seams it names
import under those names (issue 10: a reader finds the executor, the registry, the renderer seam
and the run-decision function by name), and its layer table is the one tests/test_layers.py checks
the imports against, naming every first-level unit of the package (issue 24 item 1)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from tests.support.imports import first_level_units
from tests.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
MAP = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_package_path_named_on_the_map_exists() -> None:
    paths = set(re.findall(r"\bniceeval_cli/[\w/.]*\w", MAP))
    assert paths, "the map names no paths"
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, missing


def test_the_seams_named_on_the_map_import_under_those_names() -> None:
    seams = {
        "niceeval_cli.runner._executor": ("Executor", "register_executor", "create_executor"),
        "niceeval_cli.runner._spec": ("SlotSpec", "LiveHandles"),
        "niceeval_cli.judge._grader": ("Grader", "register_grader", "create_grader", "JudgeGrade"),
        "niceeval_cli.runner._inprocess": ("execute_spec",),
        "niceeval_cli._registry": ("Registry", "ADAPTERS", "EXECUTORS", "GRADERS", "SANDBOXES", "OUTPUT_FORMATS"),
        "niceeval_cli.outcomes": ("decide_run", "decide_attempt"),
        "niceeval_cli._errors": ("ExitCode", "NiceEvalError", "EXIT_MEANING"),
        "niceeval_cli.store": ("Store",),
        "niceeval_cli.reports.viewmodels": (),
        "niceeval_cli.reports.terminal": (),
    }
    for module, names in seams.items():
        loaded = importlib.import_module(module)
        for name in names:
            assert hasattr(loaded, name), f"{module}.{name}"
            assert name in MAP, f"{name} is not named on the map"


def _layer_table() -> dict[str, int]:
    """The map's `| layer | first-level units |` table: unit → layer."""
    table = MAP[MAP.index("| layer | first-level units |"):]
    table = table[: table.index("\n\n")]
    found: dict[str, int] = {}
    for layer, units in re.findall(r"^\| (\d+) \| (.+) \|$", table, re.MULTILINE):
        for unit in re.findall(r"`([\w]+)`", units):
            assert unit not in found, f"{unit} is in two layers on the map"
            found[unit] = int(layer)
    return found


def test_the_maps_layer_table_is_the_one_the_imports_are_checked_against() -> None:
    assert _layer_table() == LAYERS


def test_every_first_level_unit_is_named_on_the_map_by_its_path() -> None:
    for unit in sorted(first_level_units()):
        path = f"niceeval_cli/{unit}.py" if (ROOT / "niceeval_cli" / f"{unit}.py").exists() else f"niceeval_cli/{unit}/"
        assert path in MAP, f"{path} is not on docs/architecture.md"
