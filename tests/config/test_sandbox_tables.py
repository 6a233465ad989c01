"""`[sandbox]` and `[experiments.<id>.sandbox]` (sandbox.md, "Declaring"): checked at load,
merged eval > experiment > project field by field, errors naming file, table and key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from niceeval_cli.config import ConfigError, load_config, resolve_sandbox
from niceeval_cli.sandbox import docker_sandbox, local_sandbox

Write = Callable[[str], Path]


def _error(write_config: Write, text: str) -> str:
    root = write_config(text)
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=root)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert "niceeval.toml" in message
    return message


def test_an_experiment_sandbox_template_is_relative_to_the_project_root(write_config: Write) -> None:
    root = write_config('[experiments.agent.sandbox]\nkind = "local"\ntemplate = "fixtures/repo"\n'
                        'prepare = ["git init -q", ["touch", "ready"]]\n')
    (root / "fixtures" / "repo").mkdir(parents=True)
    project = load_config(cwd=root / "fixtures")
    spec = resolve_sandbox(project, project.experiments["agent"], None, "e")
    assert spec is not None
    assert (spec.kind, spec.template) == ("local", str((root / "fixtures" / "repo").resolve()))
    assert spec.prepare == ("git init -q", ("touch", "ready"))


def test_no_declaration_anywhere_means_no_sandbox(write_config: Write) -> None:
    project = load_config(cwd=write_config("[experiments.a]\n"))
    assert resolve_sandbox(project, project.experiments["a"], None, "e") is None


def test_the_eval_overrides_only_the_fields_it_names(write_config: Write) -> None:
    root = write_config('[sandbox]\nkind = "docker"\nimage = "base"\nmemory = "1g"\n'
                        '[experiments.big.sandbox]\nimage = "big"\ncpus = 2\n'
                        '[experiments.plain]\n')
    project = load_config(cwd=root)
    evals_dir = root / "evals"
    (evals_dir / "repo").mkdir(parents=True)
    eval_spec = docker_sandbox(image="mine", template="repo", _base_dir=evals_dir)
    big = resolve_sandbox(project, project.experiments["big"], None, "e")
    assert big is not None and (big.kind, big.image, big.cpus, big.memory, big.network) == (
        "docker", "big", 2, "1g", "none")
    mine = resolve_sandbox(project, project.experiments["big"], eval_spec, "e")
    assert mine is not None and (mine.image, mine.cpus, mine.memory, mine.template) == (
        "mine", 2, "1g", str(evals_dir / "repo"))
    plain = resolve_sandbox(project, project.experiments["plain"], None, "e")
    assert plain is not None and (plain.image, plain.cpus) == ("base", None)


def test_a_local_eval_sandbox_drops_the_docker_fields_of_the_experiment(write_config: Write) -> None:
    project = load_config(cwd=write_config('[experiments.d.sandbox]\nkind = "docker"\nimage = "x"\n'
                                           'prepare = ["echo hi"]\n'))
    spec = resolve_sandbox(project, project.experiments["d"], local_sandbox(), "e")
    assert spec is not None and (spec.kind, spec.image, spec.network, spec.prepare) == ("local", None, None,
                                                                                        ("echo hi",))


def test_a_docker_sandbox_without_an_image_names_the_eval_and_experiment(write_config: Write) -> None:
    project = load_config(cwd=write_config('[experiments.d.sandbox]\nkind = "docker"\n'))
    with pytest.raises(ConfigError, match=r"eval 'e' in experiment 'd': sandbox .*needs `image`"):
        resolve_sandbox(project, project.experiments["d"], None, "e")


@pytest.mark.parametrize(
    ("text", "table", "says"),
    [
        ('[experiments.a.sandbox]\nkind = "vm"\n', "[experiments.a.sandbox] kind", '"local" or "docker"'),
        ('[experiments.a.sandbox]\nimgae = "x"\n', "[experiments.a.sandbox]", 'did you mean "image"?'),
        ('[sandbox]\ncpus = 0\n', "[sandbox] cpus", "a positive number"),
        ('[sandbox]\ncpus = "2"\n', "[sandbox] cpus", "a positive number"),
        ('[experiments.a.sandbox]\nprepare = "make"\n', "[experiments.a.sandbox] prepare", "a list of commands"),
        ('[experiments.a.sandbox]\nprepare = ["ok", []]\n', "[experiments.a.sandbox] prepare", "item 1"),
        ('[experiments.a.sandbox]\nkind = "local"\nimage = "x"\n', "[experiments.a.sandbox] image",
         "only a docker sandbox"),
        ('[experiments.a.sandbox]\ntemplate = "nowhere"\n', "[experiments.a.sandbox] template",
         "is not a directory"),
        ('[experiments.a.sandbox]\nkind = "docker"\nimage = "x"\nworkdir = "rel"\n',
         "[experiments.a.sandbox] workdir", "absolute path"),
        ('[experiments.a]\nsandbox = "docker"\n', "[experiments.a] sandbox", "a table"),
    ],
)
def test_sandbox_table_mistakes_name_file_table_and_key(write_config: Write, text: str, table: str, says: str) -> None:
    message = _error(write_config, text)
    assert table in message, message
    assert says in message, message
