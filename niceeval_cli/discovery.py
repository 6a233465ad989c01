"""Find eval modules under the eval roots, import them, and give every eval its id."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import itertools
import json
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ._errors import ExitCode, NiceEvalError
from ._project_sources import ProjectSources
from .authoring import AuthoringError, Case, EvalDefinition
from .config import CONFIG_FILE_NAME, find_config


class DiscoveryError(NiceEvalError):
    """An eval module that cannot be imported, or ids that clash (exit code 2)."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True, slots=True)
class EvalModule:
    """What the evals of one eval module share, held once per module (not once per eval)."""

    file: Path
    sources: tuple[tuple[str, str], ...]  # the fingerprint's `source`: (path, sha256) of it and its project imports
    source_sha256: str  # one digest of `sources` (what planning keys shapes by)
    base: str  # the module's id: its path below the eval root, without `.py`
    single: bool  # it defines one eval, whose id is `base` (else `<base>/<name>`)


@dataclass(frozen=True, slots=True)
class CaseEval:
    """What a case eval (one case of an eval with cases, datasets.md) adds to its eval."""

    id: str  # "<eval id>[<case id>]"
    case: Case
    base_id: str  # the eval's own id
    tags: tuple[str, ...]  # the eval's tags, then the case's own


@dataclass(frozen=True, slots=True)
class DiscoveredEval:
    """One eval to plan: an eval, or one case of an eval with cases (datasets.md).

    The run keeps one per eval (or case) from discovery to the end, so it holds three references
    and nothing it can work out: an eval's id is its module's id and its name (made when read,
    not held), its file and source digest are its module's, its tags its
    definition's. Only a case eval holds more (`CaseEval`)."""

    definition: EvalDefinition
    module: EvalModule
    case_eval: CaseEval | None = None

    @property
    def id(self) -> str:
        """`<module id>` for a module's only eval, `<module id>/<name>` for one of several;
        `<eval id>[<case id>]` for a case."""
        case_eval = self.case_eval
        if case_eval is not None:
            return case_eval.id
        module = self.module
        return module.base if module.single else f"{module.base}/{self.definition.name}"

    @property
    def file(self) -> Path:
        return self.module.file

    @property
    def source_sha256(self) -> str:
        return self.module.source_sha256

    @property
    def sources(self) -> tuple[tuple[str, str], ...]:
        return self.module.sources

    @property
    def case(self) -> Case | None:
        case_eval = self.case_eval
        return case_eval.case if case_eval is not None else None

    @property
    def tags(self) -> tuple[str, ...]:
        """The eval's tags, then (for a case eval) the case's own."""
        case_eval = self.case_eval
        return case_eval.tags if case_eval is not None else self.definition.tags

    @property
    def kind(self) -> str:
        return str(self.definition.kind)

    @property
    def eval_id(self) -> str:
        """The id of the eval itself: a case eval's id without `[<case id>]`."""
        case_eval = self.case_eval
        return case_eval.base_id if case_eval is not None else self.id

    @property
    def identity(self) -> tuple[str, str]:
        """(module id, definition name): what its history is kept under (authoring.md). Unlike
        its id, it stays when its module gains or loses an eval."""
        return (self.module.base, self.definition.name)

    @property
    def identity_id(self) -> str:
        """Its identity as one text, `<module id>/<name>` (`[<case id>]` for a case), whatever the
        module's count of evals: what the fingerprint's `eval_id` part holds."""
        full = f"{self.module.base}/{self.definition.name}"
        case_eval = self.case_eval
        return full if case_eval is None else case_eval_id(full, case_eval.case.id)


def case_eval_id(eval_id: str, case_id: str) -> str:
    return f"{eval_id}[{case_id}]"


def _fan_out(discovered: DiscoveredEval) -> list[DiscoveredEval]:
    """An eval with cases becomes one case eval per case, in dataset order."""
    definition = discovered.definition
    if definition.cases is None:
        return [discovered]
    own, eval_id = definition.tags, discovered.id
    return [
        DiscoveredEval(definition, discovered.module, CaseEval(
            case_eval_id(eval_id, case.id), case, eval_id,
            own + tuple(t for t in case.tags if t not in own) if case.tags else own,
        ))
        for case in definition.cases
    ]


def _eval_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part.startswith((".", "_")) for part in rel.parts):
            continue  # private helpers (_util.py), __init__.py, __pycache__, hidden folders
        found.append(path)
    return found


def _module_name(path: Path, project_root: Path) -> str | None:
    """The dotted name under the project root, so eval modules import like project code."""
    try:
        rel = path.with_suffix("").relative_to(project_root)
    except ValueError:
        return None
    parts = rel.parts
    if parts and all(p.isidentifier() for p in parts):
        return ".".join(parts)
    return None


def import_eval_file(path: Path, project_root: Path) -> ModuleType:
    """Import an eval module by its file path (never by searching sys.path, so an installed package
    or a sibling package of the same name cannot hide it): the one way eval files are imported,
    by discovery and by a worker re-importing a slot's eval. It is registered under its dotted
    name below the project root when that name is free, so project code importing it by that name
    gets the same module object; otherwise under a private name. What the module raises is raised."""
    name = _module_name(path, project_root)
    existing = sys.modules.get(name) if name is not None else None
    if existing is not None and _file_of(existing) == path:
        return existing
    if name is None or existing is not None:
        name = f"_niceeval_eval_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise ImportError(f"eval module {_rel(path, project_root)} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    module.__package__ = name.rpartition(".")[0]  # relative imports resolve against the folder
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import(path: Path, project_root: Path) -> ModuleType:
    """`import_eval_file`, its failures worded as a DiscoveryError naming the module."""
    try:
        return import_eval_file(path, project_root)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        if isinstance(exc, AuthoringError):
            raise DiscoveryError(f"eval module {_rel(path, project_root)} failed to load: {exc}") from None
        if isinstance(exc, SyntaxError):
            where = f"{_rel(Path(exc.filename or path), project_root)}:{exc.lineno}"
            raise DiscoveryError(
                f"eval module {_rel(path, project_root)} has a syntax error at {where}: {exc.msg}"
            ) from None
        frame = _innermost_user_frame(exc, project_root)
        raise DiscoveryError(
            f"eval module {_rel(path, project_root)} failed to import ({frame}): {type(exc).__name__}: {exc}"
        ) from None


def _file_of(module: object) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _sources_digest(files: tuple[tuple[str, str], ...]) -> str:
    return hashlib.sha256(json.dumps(files, ensure_ascii=False).encode()).hexdigest()


def _innermost_user_frame(exc: BaseException, project_root: Path) -> str:
    """Where the user's code raised: the innermost frame outside importlib and NiceEval itself."""
    package = str(Path(__file__).resolve().parent)
    frames = traceback.extract_tb(exc.__traceback__)
    for fs in reversed(frames):
        if "importlib" not in fs.filename and "<frozen" not in fs.filename and not fs.filename.startswith(package):
            return f"{_rel(Path(fs.filename), project_root)}:{fs.lineno}"
    return "unknown location"


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def _missing_root(root: Path, project_root: Path) -> str:
    message = f"eval root {_rel(root, project_root)} does not exist; "
    if find_config(project_root) is None:
        return message + (f"there is no {CONFIG_FILE_NAME} in {project_root} or above it: run `niceeval init` to "
                          "create a project with an example eval, or run niceeval from inside your project")
    return message + f"create it or fix `evals` in [project] of {CONFIG_FILE_NAME}"


def discover(eval_roots: Sequence[Path], project_root: Path) -> list[DiscoveredEval]:
    """Import every eval module under the roots; ids are `<module path>[/<name>]`."""
    project_root = project_root.resolve()
    root_str = str(project_root)
    if root_str not in sys.path:
        sys.path.insert(0, root_str)
    importlib.invalidate_caches()
    # First import everything, then give each definition to one module: the one it was defined
    # in when that module is an eval module that holds it, else the first that holds it (an
    # imported eval is not a second eval). A module's own definitions (nearly all of them) go
    # to it as it is scanned; only the others wait for the scan to end. Discovery is the peak of
    # a run's memory (the eval modules themselves are most of it), so nothing here is one entry
    # per eval but the lists of definitions and the evals returned: no table by id, no ids made.
    scanned: list[_Scanned] = []
    foreign: dict[int, tuple[EvalDefinition, list[int]]] = {}  # held, defined elsewhere: by whom
    paths: set[Path] = set()
    for root in eval_roots:
        root = root.resolve()
        if not root.exists():
            raise DiscoveryError(_missing_root(root, project_root))
        for path in _eval_files(root):
            if path in paths:
                continue  # under two eval roots: the first one's
            paths.add(path)
            module = _import(path, project_root)
            here, index, own = str(path), len(scanned), []
            for value in vars(module).values():
                if isinstance(value, EvalDefinition):
                    if value.defined_at.file == here:
                        own.append(value)
                    else:
                        foreign.setdefault(id(value), (value, []))[1].append(index)
            scanned.append((root, path, module, own))
    if foreign:
        _place_foreign(scanned, foreign)
    del foreign, paths
    runs: list[list[DiscoveredEval]] = []  # each module's evals in id order, modules in path order
    sources = ProjectSources(project_root)  # a helper imported by many eval modules is read once
    for root, path, module, held in sorted(scanned, key=_path_of):
        if not held:
            continue
        definitions = _named_once(held, path, module, project_root)
        # An eval module outside the project root (an absolute eval root) counts all the same,
        # under its path below its eval root's folder.
        files = tuple(sources.files([path], named={path: path.relative_to(root.parent).as_posix()}).items())
        base = path.relative_to(root).with_suffix("").as_posix() if root.is_dir() else path.stem
        shared = EvalModule(path, files, _sources_digest(files), base, len(definitions) == 1)
        runs.append([DiscoveredEval(definition, shared) for definition in definitions])
    del scanned
    found = _in_id_order(runs, project_root)
    del runs
    if all(discovered.definition.cases is None for discovered in found):
        return found
    expanded: list[DiscoveredEval] = []
    for discovered in found:
        if discovered.definition.cases is None:
            expanded.append(discovered)
        else:
            expanded += _fan_out(discovered)
    _check_case_ids_unique(expanded, project_root)
    return expanded


#: An eval module as scanned: its root, its file, the module, the definitions it owns.
_Scanned = tuple[Path, Path, ModuleType, list[EvalDefinition]]


def _path_of(scanned: _Scanned) -> Path:
    return scanned[1]


def _name_of(definition: EvalDefinition) -> str:
    return definition.name


def _place_foreign(scanned: list[_Scanned], foreign: dict[int, tuple[EvalDefinition, list[int]]]) -> None:
    """Give each definition that a module holds but was not defined in to the module that defined
    it when that eval module holds it (it has it already), else to the first module holding it."""
    by_file = {str(path): index for index, (_root, path, _module, _own) in enumerate(scanned)}
    owned: dict[int, set[int]] = {}  # a defining module's own definitions (by id), made when asked
    for definition, holders in foreign.values():
        defining = by_file.get(definition.defined_at.file or "")
        if defining is not None:
            ids = owned.get(defining)
            if ids is None:
                ids = owned[defining] = {id(d) for d in scanned[defining][3]}
            if id(definition) in ids:
                continue
        scanned[holders[0]][3].append(definition)


def _named_once(held: list[EvalDefinition], path: Path, module: ModuleType, project_root: Path) -> list[EvalDefinition]:
    """A module's definitions in name order (its ids' order), each once: one bound to two names is
    one eval, two that share a name are an error. Sorted in place, by the names they hold."""
    held.sort(key=_name_of)  # stable: alike names keep the order the module binds them in
    previous: EvalDefinition | None = None
    twice = False
    for definition in held:
        if previous is not None and definition.name == previous.name:
            if definition is not previous:
                raise DiscoveryError(
                    f"eval module {_rel(path, project_root)} defines two evals named {definition.name!r} "
                    f"({_attr_of(module, previous)} and {_attr_of(module, definition)}); give one a name= option"
                )
            twice = True
            continue
        previous = definition
    if not twice:
        return held
    return [d for i, d in enumerate(held) if i == 0 or d is not held[i - 1]]


def _attr_of(module: ModuleType, definition: EvalDefinition) -> str:
    return next((attr for attr, value in vars(module).items() if value is definition), definition.name)


def _in_id_order(runs: list[list[DiscoveredEval]], project_root: Path) -> list[DiscoveredEval]:
    """Every eval in id order. Each module's evals are in id order already, and modules whose ids
    do not interleave (nearly always) go in the order of their first ids: two ids per module are
    made, not one per eval. Ids that interleave are sorted whole; an id two modules give is an
    error naming the earlier file (in path order) first."""
    bounds = sorted((run[0].id, run[-1].id, index) for index, run in enumerate(runs))
    if all(bounds[k][1] < bounds[k + 1][0] for k in range(len(bounds) - 1)):
        if len(runs) == 1:
            return runs[0]
        return [discovered for _first, _last, index in bounds for discovered in runs[index]]
    everything = sorted((discovered.id, index, discovered) for index, run in enumerate(runs) for discovered in run)
    for (eval_id, _i, first), (other_id, _j, second) in itertools.pairwise(everything):
        if eval_id == other_id:
            raise DiscoveryError(
                f"eval id {eval_id!r} is defined twice: in {_rel(first.file, project_root)} and in "
                f"{_rel(second.file, project_root)}; rename one of them"
            )
    return [discovered for _id, _index, discovered in everything]


def _check_case_ids_unique(evals: list[DiscoveredEval], project_root: Path) -> None:
    """A case eval id can clash with an eval's own id only through an odd file name
    (`evals/refunds[a].py`); say so rather than merge their attempts."""
    seen: dict[str, DiscoveredEval] = {}
    for discovered in evals:
        other = seen.setdefault(discovered.id, discovered)
        if other is not discovered:
            raise DiscoveryError(
                f"eval id {discovered.id!r} is given twice: by {_rel(other.file, project_root)} and by "
                f"{_rel(discovered.file, project_root)} (a case eval id is `<eval id>[<case id>]`); "
                "rename the module or the case"
            )
