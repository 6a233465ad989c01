"""The public surface (STYLE.md, issue 10 item 8): `niceeval_cli`, `niceeval_cli.expect` and
`niceeval_cli.datasets` export exactly what their `__all__` pins — every exported name exists and
nothing public is exported by accident (as httpx's tests/test_exported_members.py does)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

import niceeval_cli
from niceeval_cli import datasets, expect

ROOT = Path(__file__).resolve().parent.parent

PACKAGE = [
    "Adapter",
    "AdapterContext",
    "AgentError",
    "AssertionHandle",
    "AuthoringError",
    "Case",
    "EvalDefinition",
    "Event",
    "ExperimentInfo",
    "Fact",
    "FactUnavailable",
    "Material",
    "Message",
    "NumericMaterial",
    "TestContext",
    "ToolCall",
    "Turn",
    "Usage",
    "__version__",
    "define_adapter",
    "define_eval",
    "define_score_eval",
    "docker_sandbox",
    "local_sandbox",
]

EXPECT = [
    "BooleanMatch", "Capture", "Fact", "FactUnavailable", "Interval", "MatchError", "MatchResult",
    "Material", "NumericMaterial", "ScoreMatch", "ThresholdedScoreMatch", "and_", "at_least", "at_most",
    "between", "closed_qa", "count_where", "define_context_match", "define_material_match",
    "define_score_match", "define_value_match", "equals", "every", "excludes", "factuality",
    "filter_where", "from_promptfoo", "greater_than", "includes", "is_defined", "is_false", "is_true",
    "json_match", "less_than",
    "map_each", "map_value", "matches", "not_", "or_", "pattern", "satisfies", "similarity", "some",
    "summarizes", "tool_match",
]

DATASETS = ["CaseIdRule", "Converter", "load_csv", "load_json", "load_jsonl", "load_promptfoo", "load_yaml"]


def _public(module: ModuleType) -> set[str]:
    """Public names a module holds that are its own (not submodules, not imported helpers)."""
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, ModuleType):
            continue
        home = getattr(value, "__module__", None)
        if home is not None and not home.startswith(module.__name__.split(".")[0]):
            continue  # typing / stdlib names imported for the module's own use
        names.add(name)
    return names


@pytest.mark.parametrize(
    ("module", "pinned"),
    [(niceeval_cli, PACKAGE), (expect, EXPECT), (datasets, DATASETS)],
    ids=["niceeval_cli", "expect", "datasets"],
)
def test_all_is_pinned_sorted_and_every_name_exists(module, pinned):
    assert module.__all__ == pinned, "the public API changed: update the pinned list deliberately"
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def test_the_lazy_package_exports_exactly_all():
    assert set(niceeval_cli._EXPORTS) == set(PACKAGE) - {"__version__"}
    public_dir = {n for n in dir(niceeval_cli) if not n.startswith("_")}
    submodules = {n for n in public_dir if isinstance(getattr(niceeval_cli, n), ModuleType)}
    assert public_dir - submodules == set(PACKAGE) - {"__version__"}


def test_nothing_public_is_exported_by_accident_from_expect_or_datasets():
    assert _public(expect) == set(EXPECT)
    own = {n for n in _public(datasets) if getattr(getattr(datasets, n), "__module__", "") == datasets.__name__}
    assert own <= set(DATASETS), own - set(DATASETS)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'define_evals'"):
        niceeval_cli.define_evals  # noqa: B018


def _fresh_python(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, check=True,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_importing_the_package_does_not_load_the_authoring_api():
    found = _fresh_python("""
        import json, sys
        import niceeval_cli
        print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("niceeval_cli"))}))
    """)
    assert found["loaded"] == ["niceeval_cli"]


def test_star_import_gives_exactly_all_and_every_name_resolves_in_a_fresh_interpreter():
    found = _fresh_python("""
        import json
        scope = {}
        exec("from niceeval_cli import *", scope)
        exec("from niceeval_cli.expect import *", scope)
        exec("from niceeval_cli.datasets import *", scope)
        print(json.dumps({"names": sorted(n for n in scope if n != "__builtins__")}))
    """)
    assert found["names"] == sorted(set(PACKAGE) | set(EXPECT) | set(DATASETS))


TYPED = """
from niceeval_cli import Case, EvalDefinition, TestContext, define_adapter, define_eval, define_score_eval

@define_eval(tags=["smoke"], attempts=2, pass_rule="any")
async def decorated(t: TestContext) -> None: ...

explicit = define_score_eval(test=lambda t: None, timeout_ms=100)
decorator = define_eval(description="d")

@define_eval(cases=[Case("a", {"q": 1})], case_id=None)
def with_cases(t: TestContext, case: dict[str, int]) -> None: ...

reveal_type(decorated)
reveal_type(explicit)
reveal_type(decorator)
reveal_type(with_cases)
define_eval(tags="smoke")
define_eval(tgas=["x"])
define_score_eval(pass_rule="most")
define_eval(attempts="3")

adapter = define_adapter(name="a")

@adapter.define_score_eval(cases={"x": 1})
def through_adapter(t: TestContext, case: int) -> None: ...

reveal_type(through_adapter)
adapter.define_eval(tags="smoke")
"""


@pytest.mark.slow
def test_define_eval_is_typed_by_overloads_so_mypy_catches_bad_options(tmp_path):
    mypy_api = pytest.importorskip("mypy.api")
    (tmp_path / "typed.py").write_text(TYPED, encoding="utf-8")
    # The package's types come from a copy of the checkout's mypy cache when there is one (CI's
    # type check writes it just before the tests): ~0.3 s of CPU instead of ~7 s analysing the
    # whole package again. mypy checks each cached module against its source and redoes the ones
    # that changed, so the copy only saves time; without one, the analysis starts cold.
    repo_cache = Path(__file__).resolve().parents[1] / ".mypy_cache"
    if repo_cache.is_dir():
        shutil.copytree(repo_cache, tmp_path / ".mypy")
        cache = ["--cache-dir", str(tmp_path / ".mypy")]
    else:
        cache = ["--no-incremental", "--cache-dir", str(tmp_path / ".mypy")]
    stdout, _stderr, _status = mypy_api.run(
        [str(tmp_path / "typed.py"), *cache, "--hide-error-context", "--no-error-summary"]
    )
    lines = [line.split(": ", 1)[1] for line in stdout.splitlines() if ": error:" in line or ": note: Revealed" in line]
    revealed = [line.removeprefix("note: Revealed type is ") for line in lines if line.startswith("note: Revealed")]
    definition = '"niceeval_cli.authoring._definition.EvalDefinition"'
    assert revealed[:2] == [definition, definition], stdout
    assert revealed[2].startswith('"def (') and "TestContext" in revealed[2], stdout
    assert revealed[2].endswith("-> niceeval_cli.authoring._definition.EvalDefinition\"")
    assert revealed[3] == definition, stdout
    assert revealed[4] == definition, stdout
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 5, stdout
    assert any('"tgas"' in line for line in errors), stdout
