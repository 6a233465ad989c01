"""The project files an eval module or an agent is made of (config.md, "The system under test's
identity"): imports are read from the source, followed transitively, inside the project only."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from niceeval_cli._project_sources import ProjectSources


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def files_of(root: Path, start: str, **kw: bool) -> list[str]:
    return list(ProjectSources(root, search_path=[str(root)]).files([root / start], **kw))


def test_from_import_of_a_constant_relative_imports_and_packages_are_followed(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/__init__.py": "",
        "app/agent.py": "from app.words import GREETING\nfrom .tools import run\nfrom . import prompts\n",
        "app/words.py": "import json\nGREETING = 'hi'\n",
        "app/tools/__init__.py": "from .search import run\n",
        "app/tools/search.py": "def run():\n    from ..deep.inner import X\n",
        "app/deep/__init__.py": "",
        "app/deep/inner.py": "X = 1\n",
        "app/prompts.py": "",
        "app/unused.py": "",
    })
    assert files_of(tmp_path, "app/agent.py") == [
        "app/__init__.py", "app/agent.py", "app/deep/__init__.py", "app/deep/inner.py", "app/prompts.py",
        "app/tools/__init__.py", "app/tools/search.py", "app/words.py",
    ]


def test_from_a_package_import_a_submodule_and_import_dotted_names(tmp_path: Path) -> None:
    write(tmp_path, {"e.py": "from pkg import sub\nimport other.mod\n", "pkg/__init__.py": "", "pkg/sub.py": "",
                     "other/mod.py": ""})  # `other` is a namespace package: no __init__.py
    assert files_of(tmp_path, "e.py") == ["e.py", "other/mod.py", "pkg/__init__.py", "pkg/sub.py"]


def test_installed_packages_and_files_outside_the_root_never_enter(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write(tmp_path, {"outside.py": ""})
    write(root, {"e.py": "import vendored\nimport outside\n",
                 ".venv/lib/python3.11/site-packages/vendored.py": ""})
    sources = ProjectSources(root, search_path=[str(root), str(root / ".venv/lib/python3.11/site-packages"),
                                                str(tmp_path)])
    assert list(sources.files([root / "e.py"])) == ["e.py"]


def test_a_file_that_does_not_parse_is_still_hashed(tmp_path: Path) -> None:
    write(tmp_path, {"e.py": "def broken(:\n"})
    found = ProjectSources(tmp_path).files([tmp_path / "e.py"])
    assert found == {"e.py": hashlib.sha256(b"def broken(:\n").hexdigest()}


def test_a_scripts_sibling_is_found_only_when_it_runs_as_a_script(tmp_path: Path) -> None:
    write(tmp_path, {"bot/agent.py": "from lib import PREFIX\n", "bot/lib.py": ""})
    assert files_of(tmp_path, "bot/agent.py") == ["bot/agent.py"]
    assert files_of(tmp_path, "bot/agent.py", scripts=True) == ["bot/agent.py", "bot/lib.py"]


def test_inputs_are_hashed_without_following_imports(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "import b\n", "b.py": ""})
    assert files_of(tmp_path, "a.py", follow_imports=False) == ["a.py"]


def test_an_eval_module_outside_the_project_root_is_still_part_of_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from niceeval_cli.discovery import discover

    monkeypatch.setattr(sys, "path", list(sys.path))  # discovery puts the project root on it

    project, elsewhere = tmp_path / "proj", tmp_path / "shared_evals"
    write(project, {"helpers.py": "WINDOW = 30\n"})
    write(elsewhere, {"refunds.py": "from niceeval_cli import define_eval\nfrom helpers import WINDOW\n\n"
                                    "@define_eval()\ndef refunds(t):\n    pass\n"})
    try:
        [found] = discover([elsewhere], project)
    finally:  # the modules it imported are forgotten: another test's `helpers` is its own
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
                del sys.modules[name]
    assert [path for path, _sha in found.sources] == ["helpers.py", "shared_evals/refunds.py"]
