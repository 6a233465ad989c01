"""Issue 24 item 2: one home for each rule. Read from the package's own source (what a contributor
greps for) and, for the eval import, from a real run on Ray: each rule is spelled in one module and
every other module asks it.

- a stored pass rule is decoded by `outcomes.stored_pass_rule` alone;
- a "clean" attempt (nothing to look at) is `outcomes.is_clean` alone;
- lists of attempt-state words are made in `_states.py` alone;
- the eval options' rules (judge fields, the max_concurrency rule) live in `authoring/_options.py`;
- an eval file is imported by path in `discovery.py` alone, so a worker re-importing a slot's eval
  imports it as discovery did (a relative import in an eval module works on Ray as in-process).
"""

from __future__ import annotations

import ast
import gc
from functools import cache
from pathlib import Path

import pytest

from tests.support.project import Project
from tests.support.ray_cluster import Cluster

PACKAGE = Path(__file__).resolve().parents[2] / "niceeval_cli"
STATE_WORDS = {"passed", "failed", "errored", "scored", "unrankable"}


@cache
def _nodes() -> dict[type[ast.AST], list[tuple[str, ast.AST]]]:
    """Every node of every module of the package, by its type, with the module it is in: the
    package parsed and walked once per process (each check walking it again cost ~0.5 s). The trees
    then live as long as the worker: frozen out of the cyclic collector's sight, or each of its
    later full collections walked their ~0.4 million nodes again (~0.5 s apiece, a dozen times)."""
    found: dict[type[ast.AST], list[tuple[str, ast.AST]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found.setdefault(type(node), []).append((where, node))
    gc.freeze()
    return found


def _of(*kinds: type[ast.AST]) -> list[tuple[str, ast.AST]]:
    return [found for kind in kinds for found in _nodes().get(kind, [])]


def _calls(name: str) -> list[tuple[str, ast.Call]]:
    return [(where, node) for where, node in _of(ast.Call) if isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)]


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


#: Under `-n`, these checks share one worker, where the package is parsed once for all of them.
_one_parse = pytest.mark.xdist_group("one_home_ast")


@_one_parse
def test_a_stored_pass_rule_is_decoded_in_outcomes_alone() -> None:
    """Reading "0.5" back as a rate (`parse_pass_rule(float(stored))`) is done in one place."""
    decoding = sorted(
        where for where, call in _calls("parse_pass_rule")
        if call.args and isinstance(call.args[0], ast.Call) and getattr(call.args[0].func, "id", None) == "float"
    )
    assert decoding == ["outcomes/_folds.py"]


@_one_parse
def test_a_clean_attempt_is_decided_in_outcomes_alone() -> None:
    """No module but outcomes defines a test of (state, gate) → "nothing to look at"."""
    defined = sorted(
        where for where, node in _of(ast.FunctionDef)
        if isinstance(node, ast.FunctionDef) and [a.arg for a in node.args.args] == ["state", "gate"]
        and node.returns is not None and ast.unparse(node.returns) == "bool"
    )
    assert defined == ["outcomes/_attempt.py"]


@_one_parse
def test_lists_of_attempt_state_words_are_made_in_states_alone() -> None:
    """A tuple, list or set spelling three or more attempt states as text is `_states.py`'s (a
    report's table of a style or a mark per word is the report's own)."""
    spelled = sorted(
        f"{where}:{node.lineno}" for where, node in _of(ast.Tuple, ast.List, ast.Set) if where != "_states.py"
        and isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and len({n.value for n in node.elts if isinstance(n, ast.Constant)} & STATE_WORDS) >= 3
    )
    assert spelled == []


@_one_parse
def test_the_eval_option_rules_live_in_authoring_options() -> None:
    """The judge fields an eval may set, and why it may not set max_concurrency, are written once."""
    homes = sorted(
        {where for where, node in _of(ast.Constant)
         if isinstance(node, ast.Constant) and isinstance(node.value, str)
         and "max_concurrency cannot be set on an eval" in node.value}
        | {where for where, node in _of(ast.Set) if {"api_key_env", "max_retries", "temperature"} <= _strings(node)}
    )
    assert homes == ["authoring/_options.py"]


@_one_parse
def test_eval_files_are_imported_by_path_in_discovery_alone() -> None:
    importing = sorted({where for where, _call in _calls("spec_from_file_location")})
    assert importing == ["discovery.py"]


# ── on a real Ray cluster: a worker imports the eval as discovery did ─────────────────────────

RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}  # with the cluster's token: `ray_cluster.auth`

RELATIVE = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

from ._shared import ANSWER, CASES


@define_eval(cases=CASES)
def pairs(t, value):
    t.check(type(value["pair"]).__name__, equals("tuple")).label("the dataset's own value, not a JSON copy")
    t.check(value is CASES[t.case_id], equals(True)).label("the very object")
    t.check(ANSWER, equals(42)).label("a relative import")
"""

SHARED = """
ANSWER = 42
CASES = {"a": {"pair": (1, 2)}, "b": {"pair": (3, 4)}}
"""


@pytest.mark.slow
def test_on_ray_an_eval_module_imports_relatively_and_its_case_test_gets_the_datasets_value(
    proj: Project, ray_cluster: Cluster
) -> None:
    proj.write("evals/pairs.py", RELATIVE)
    proj.write("evals/_shared.py", SHARED)
    local = Project(proj.root, in_process=True).run("--store", "local.db")  # the reference, in process
    assert local.returncode == 0, local.stdout + local.stderr
    done = proj.run("--store", "ray.db", "--executor", "ray", "--ray-address", ray_cluster.address,
                    env={**RAY_ENV, **ray_cluster.auth}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = proj.sql("SELECT eval_id, state, error FROM attempts ORDER BY eval_id", store=proj.root / "ray.db")
    assert [(r["eval_id"], r["state"]) for r in rows] == [("pairs[a]", "passed"), ("pairs[b]", "passed")], rows
