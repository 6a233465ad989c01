"""Selection: which experiments (`-e`) and which evals (prefixes, tags, an experiment's `evals`) run,
and why nothing did when nothing was selected."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence

from .._selectors import is_experiment_group, is_glob, matches, matches_any, selects_experiment
from ._schema import CONFIG_FILE_NAME, ExperimentConfig, ProjectConfig
from ._wording import ConfigError, table_name


def select_experiments(project: ProjectConfig, patterns: Sequence[str]) -> list[ExperimentConfig]:
    """Experiments named by `-e` selectors (an exact id, or a group such as "models/":
    `_selectors.selects_experiment`); none = all, in the file's order."""
    if not patterns:
        return list(project.experiments.values())
    chosen: set[str] = set()
    for pattern in patterns:
        matched = [eid for eid in project.experiments if selects_experiment(pattern, eid)]
        if not matched:
            known = ", ".join(project.experiments)
            hint = _group_hint(pattern, project.experiments)
            raise ConfigError(f"no experiment matches {json.dumps(pattern)}{hint}; known experiments: {known}.")
        chosen.update(matched)
    return [experiment for eid, experiment in project.experiments.items() if eid in chosen]


def _group_hint(pattern: str, known: Iterable[str]) -> str:
    """For `-e models` where only `models/...` ids exist: the group is written with its `/`."""
    if is_experiment_group(pattern):
        return ""
    group = f"{pattern}/"
    if any(selects_experiment(group, eid) for eid in known):
        return f" (an id selects that one experiment; {json.dumps(group)} selects the group of ids starting with it)"
    return ""


def experiment_selects_eval(experiment: ExperimentConfig, eval_id: str, tags: Sequence[str]) -> bool:
    """Whether the experiment covers the eval: an id prefix matches and it carries one of the tags."""
    if experiment.evals is not None and not matches_any(experiment.evals, eval_id):
        return False
    return experiment.tags is None or any(tag in experiment.tags for tag in tags)


def explain_nothing_selected(
    project: ProjectConfig,
    evals: Mapping[str, Sequence[str]],
    *,
    experiments: Sequence[str] = (),
    eval_prefixes: Sequence[str] = (),
    tags: Sequence[str] = (),
) -> str:
    """The "nothing selected" paragraph: which prefix, tag or experiment `evals` entry matched no
    discovered eval (`evals` maps each discovered eval id to its tags)."""
    roots = ", ".join(str(root) for root in project.eval_roots)
    reasons: list[str] = []
    if not evals:
        reasons.append(f"no eval was discovered under {roots}")
    else:
        reasons += [_no_eval_starts_with(f"the eval {'glob' if is_glob(p) else 'prefix'} {json.dumps(p)}", p, evals)
                    for p in eval_prefixes if not _any_starts_with(p, evals)]
        in_use = sorted({tag for carried in evals.values() for tag in carried})
        reasons += [_no_eval_carries(f"the tag {json.dumps(tag)}", tag, in_use)
                    for tag in tags if tag not in in_use]
        for experiment in select_experiments(project, experiments):
            where = f"[{table_name(('experiments', experiment.id))}]"
            reasons += [_no_eval_starts_with(f"{where} evals entry {json.dumps(p)}", p, evals)
                        for p in experiment.evals or () if not _any_starts_with(p, evals)]
            reasons += [_no_eval_carries(f"{where} tags entry {json.dumps(tag)}", tag, in_use)
                        for tag in experiment.tags or () if tag not in in_use]
        if not reasons:
            reasons.append("each filter matches some eval, but no eval passes all of them together "
                           "(an eval must match a prefix, carry a tag and be in the experiment's evals/tags)")
    message = f"nothing selected: {'; '.join(reasons)} (discovered {len(evals)} eval(s) under {roots})."
    if project.file is None:
        message += (f" No {CONFIG_FILE_NAME} was found in {project.root} or any folder above it: "
                    "run `niceeval init` to create a project, or run niceeval from inside one.")
    else:
        message += " `niceeval list` shows every eval with its tags."
    return message


def _any_starts_with(prefix: str, evals: Mapping[str, Sequence[str]]) -> bool:
    return any(matches(prefix, eval_id) for eval_id in evals)


def _no_eval_starts_with(what: str, prefix: str, evals: Mapping[str, Sequence[str]]) -> str:
    close = difflib.get_close_matches(prefix, list(evals), n=1, cutoff=0.5)
    hint = f" (did you mean {json.dumps(close[0])}?)" if close else ""
    return f"{what} matches no eval id{hint}"


def _no_eval_carries(what: str, tag: str, in_use: Sequence[str]) -> str:
    shown = ", ".join(in_use[:20]) + (", ..." if len(in_use) > 20 else "")
    return f"{what} is carried by no eval (tags in use: {shown or 'none'})"
