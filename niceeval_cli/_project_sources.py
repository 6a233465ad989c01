"""Project source files and the project modules they import, by digest (config.md, "The system
under test's identity").

A result may be reused only while the code that produced it is unchanged, so the fingerprint
holds the digest of every project file the eval module and the system under test are made of:
the files named, plus every module inside the project root they import, transitively. Imports
are read statically (`import` and `from … import` statements, `importlib.import_module` /
`__import__` calls naming their module as a literal, and modules loaded from a file whose path the
source writes out — `spec_from_file_location`, `SourceFileLoader`, `runpy.run_path` — wherever
they stand in the file)
rather than from what a module happens to hold at run time: `from m import CONSTANT` makes `m`
part of the identity although no global refers to `m`. Installed packages (anything under
site-packages / dist-packages) and files outside the project root never enter; an experiment's
`version` / `version_command` covers those. Digests are of file bytes only, so they are the same
in every process, on every machine and under every hash seed.

An experiment's `inputs` globs are matched here too (`glob_files`), by one rule on every Python.
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

__all__ = ["ProjectSources", "glob_files", "reference_files"]

_INSTALLED = frozenset({"site-packages", "dist-packages"})


class ProjectSources:
    """Digests and project imports of the files of one project, each file read once per run."""

    def __init__(self, root: Path, search_path: Sequence[str] | None = None) -> None:
        self.root = root.resolve()
        self._search_path = search_path
        self._entries: tuple[Path, ...] = ()
        self._entries_of: tuple[str, ...] | None = None  # the sys.path `_entries` was made from
        self._digests: dict[Path, str] = {}  # file → sha256
        self._imports: dict[tuple[Path, tuple[Path, ...]], tuple[Path, ...]] = {}  # (file, search path) → imports
        self._extension_names: dict[Path, dict[str, tuple[str, ...]]] = {}  # folder → its compiled modules

    def relative(self, path: Path, *, installed: bool = False) -> str | None:
        """`path` relative to the project root (posix), or None when it is not a project file:
        outside the root, or (unless `installed`) an installed package's, which imports reach
        only through the experiment's `version`."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return None
        if not installed and _INSTALLED & set(rel.parts):
            return None
        return rel.as_posix()

    def files(self, paths: Iterable[Path], *, follow_imports: bool = True, scripts: bool = False,
              named: Mapping[Path, str] | None = None) -> dict[str, str]:
        """Relative path → sha256 of each project file in `paths` and (for Python files, when
        `follow_imports`) of every project module they import, transitively; sorted by path.
        `scripts`: the files are run as scripts, so their folders are on the path they import from.
        `named`: files outside the project that count all the same, under the name given (an eval
        module under an eval root outside the project root)."""
        roots = [self._located(p) for p in paths]
        extra = tuple(sorted({p.parent for p in roots})) if scripts else ()
        search = (*extra, *self._search_entries())  # as sys.path is now: a module imported since may have grown it
        names = {form: name for path, name in (named or {}).items() for form in (self._located(path), path.resolve())}
        found: dict[str, str] = {}
        todo = list(roots)
        while todo:
            path = todo.pop()
            rel = self.relative(path) or names.get(path)
            if rel is None or rel in found or not path.is_file():
                continue
            found[rel], imports = self._read(path, follow_imports and path.suffix == ".py", search)
            todo.extend(imports)
        return dict(sorted(found.items()))

    def contents(self, paths: Iterable[Path]) -> dict[str, str]:
        """Relative path → sha256 of each project file in `paths`, by the path it was found at:
        the content is read through a symbolic link, so a link inside the project to a file
        elsewhere counts under its own name (it was named; what it points at can change). A file
        of an installed package inside the root (`.venv/.../site-packages/`) counts too: it was
        named as plainly as any other."""
        found: dict[str, str] = {}
        for path in paths:
            located = self._located(path, installed=True)
            rel = self.relative(located, installed=True)
            if rel is not None:
                found[rel] = self._read(located, False, ())[0]
        return dict(sorted(found.items()))

    def _located(self, path: Path, *, installed: bool = False) -> Path:
        """`path` as found inside the project (absolute, symbolic links kept: a module or input
        reached through a link inside the project is the project's, wherever the link points),
        else its real path."""
        plain = Path(os.path.abspath(path))
        return plain if self.relative(plain, installed=installed) is not None else path.resolve()

    def _read(self, path: Path, parse: bool, search: tuple[Path, ...]) -> tuple[str, tuple[Path, ...]]:
        """The file's digest and (when `parse`) the project files its imports name; each read once."""
        sha = self._digests.get(path)
        imports = self._imports.get((path, search)) if parse else ()
        if sha is not None and imports is not None:
            return sha, imports
        try:
            if imports is None:  # a module: its bytes are parsed as well as hashed
                data = path.read_bytes()
                sha = self._digests[path] = hashlib.sha256(data).hexdigest()
                imports = self._imports[(path, search)] = tuple(self._imports_of(path, data, search))
                return sha, imports
            sha = self._digests[path] = _streamed_digest(path)  # an input may be a dataset of gigabytes
        except OSError as exc:  # still a part: reading it again later tells whether it changed
            self._digests[path] = f"unreadable: {exc.strerror}"
            return self._digests[path], ()
        return sha, imports

    def _imports_of(self, path: Path, data: bytes, search: tuple[Path, ...]) -> list[Path]:
        """The project files that importing `path` runs: each module it names, and the packages'
        `__init__.py` on the way to it."""
        try:
            tree = ast.parse(data, filename=str(path))
        except (SyntaxError, ValueError, RecursionError):
            return []  # the digest still covers its bytes; the import itself will say what is wrong
        found: list[Path] = []
        bindings = _path_bindings(tree, path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found += self._absolute(alias.name, search)
            elif isinstance(node, ast.ImportFrom):
                names = [a.name for a in node.names if a.name != "*"]
                if node.level:
                    module = self._relative(path, node.level, node.module, names)
                elif node.module:
                    module = self._absolute(node.module, search)
                    for name in names:  # `from pkg import sub` imports the submodule `pkg.sub`
                        found += self._absolute(f"{node.module}.{name}", search, prefixes=False)
                else:
                    module = []
                found += module
                if len(names) < len(node.names) and module:  # `from pkg import *`: its `__all__` too
                    found += self._listed_submodules(module[-1])
            elif isinstance(node, ast.Call):
                named = _imported_by_call(node)
                if named is not None:  # `importlib.import_module("app.plugins")`: a name written out
                    dotted = named.lstrip(".")
                    level = len(named) - len(dotted)
                    found += (self._relative(path, level, dotted or None, []) if level
                              else self._absolute(dotted, search))
                located = _loaded_by_path(node, path, bindings)
                if located is not None:  # `spec_from_file_location("agent", HERE / "agent.py")`
                    found += [p for base in (path.parent, self.root)
                              if (p := Path(os.path.normpath(base / located))).is_file()]
        return found

    def _listed_submodules(self, init: Path) -> list[Path]:
        """The submodules `from pkg import *` imports: those its `__init__.py` lists in a literal
        `__all__` (nothing for a module that is not a package's `__init__.py`)."""
        if init.name != "__init__.py":
            return []
        try:
            tree = ast.parse(init.read_bytes(), filename=str(init))
        except (OSError, SyntaxError, ValueError, RecursionError):
            return []
        listed: list[str] = []
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            value = getattr(node, "value", None)
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) \
                    and isinstance(value, (ast.List, ast.Tuple)):
                listed += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return [file for name in listed if name.isidentifier() for file in self._module_files(init.parent / name)]

    def _absolute(self, dotted: str, search: tuple[Path, ...], *, prefixes: bool = True) -> list[Path]:
        """The project files of `dotted` (and of the packages above it), as the import system
        would find them along sys.path; nothing when it is not a project module."""
        parts = dotted.split(".")
        wanted = range(1, len(parts) + 1) if prefixes else (len(parts),)
        found: list[Path] = []
        for count in wanted:
            for entry in search:
                module = self._module_files(entry.joinpath(*parts[:count]))
                if module:
                    found += module
                    break
        return found

    def _relative(self, path: Path, level: int, module: str | None, names: list[str]) -> list[Path]:
        base = path.parent
        for _ in range(level - 1):
            base = base.parent
        found = [init for init in (base / "__init__.py",) if init.is_file()]
        target = base
        for part in (module.split(".") if module else []):
            target = target / part
            found += self._module_files(target)
        for name in names:
            found += self._module_files(target / name)
        return found

    def _module_files(self, base: Path) -> list[Path]:
        """The files a module at `base` is loaded from: a package's `__init__.py`; else a compiled
        extension module (`base.cpython-311-x86_64-linux-gnu.so`, which Python prefers) and
        `base.py`, those that exist. Nothing when there is no such module."""
        init = base / "__init__.py"
        if init.is_file():
            return [init]
        found = [base.parent / name for name in self._extensions(base.parent).get(base.name, ())]
        module = base.with_name(base.name + ".py")
        if module.is_file():
            found.append(module)
        return found

    def _extensions(self, folder: Path) -> dict[str, tuple[str, ...]]:
        """Module name → the file names of the compiled extension modules in `folder` (listed once)."""
        known = self._extension_names.get(folder)
        if known is None:
            known = {}
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                names = []
            for name in names:
                for suffix in EXTENSION_SUFFIXES:
                    if name.endswith(suffix) and len(name) > len(suffix):
                        known.setdefault(name[: -len(suffix)], ())
                        known[name[: -len(suffix)]] += (name,)
                        break
            self._extension_names[folder] = known
        return known

    def _search_entries(self) -> tuple[Path, ...]:
        """sys.path's entries inside the project root (the root itself always), in its order; made
        again when sys.path changed (an agent module that puts its vendored folder on it)."""
        path = tuple(self._search_path if self._search_path is not None else sys.path)
        if path != self._entries_of:
            entries: list[Path] = []
            for entry in path:
                resolved = Path(entry or ".").resolve()
                if resolved not in entries and (resolved == self.root or self.relative(resolved) is not None):
                    entries.append(resolved)
            if self.root not in entries:
                entries.append(self.root)
            self._entries, self._entries_of = tuple(entries), path
        return self._entries


def _streamed_digest(path: Path) -> str:
    """sha256 of a file's bytes, read a megabyte at a time (none of it held)."""
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
    return sha.hexdigest()


def reference_files(reference: str) -> tuple[Path, ...]:
    """The files importing the module of a `"module:attr"` reference ran (it is imported already):
    the module's own, and each package's `__init__.py` on the way to it (`app/__init__.py` runs
    before `app/agent.py`, and may set what the agent reads). Not-imported names give nothing."""
    parts = reference.partition(":")[0].split(".")
    files: list[Path] = []
    for count in range(1, len(parts) + 1):
        file = getattr(sys.modules.get(".".join(parts[:count])), "__file__", None)
        if file:
            files.append(Path(file))
    return tuple(files)


def glob_files(root: Path, pattern: str, skip: frozenset[str] = frozenset()) -> list[Path]:
    """The files below `root` an `inputs` glob matches, alike on every Python (pathlib's own glob
    is not: `app/**` gives only folders before 3.13, `.` raises, `**` never enters a linked folder).

    `*`, `?` and `[...]` match within one name (a leading dot too), `**` any number of folders, so
    `app/**` is every file below `app`. A symbolic link to a folder is entered like a folder (what
    it holds counts under the link's path, as a linked file does), but a folder is walked once
    (for one position in the pattern): under its own path when the walk reaches it without a
    link, else under the first link that reaches it.
    Folders named in `skip` are never entered, and an installed package's (`site-packages`) only
    by a glob that writes its name out: `**/*.py` over a project holding its `.venv` means the
    project's code. Paths are `root`-relative joins (links kept), in no set order."""
    parts = tuple(part for part in pattern.replace("\\", "/").split("/") if part not in ("", "."))
    glob = _Glob(parts, skip)
    if parts:
        glob.walk(root, os.path.realpath(root), glob.closure({0}))
        while glob.linked:  # the links last: a folder inside the project counts under its own path
            glob.walk(*glob.linked.pop(0))
    return glob.found


class _Glob:
    """One glob's walk: its parts (each name part compiled once; `**` as None) and what it found."""

    def __init__(self, parts: tuple[str, ...], skip: frozenset[str]) -> None:
        self.parts = [None if part == "**" else re.compile(fnmatch.translate(part)).match for part in parts]
        self.written = frozenset(parts)  # an installed package's folder is entered only when written out
        self.end = len(parts)
        self.skip = skip
        self.found: list[Path] = []
        #: (real path, pattern positions) of each folder walked: each is walked once, so a link
        #: back up ends there and links that fan in (pnpm's node_modules) cost one walk each.
        self.walked: set[tuple[str, frozenset[int]]] = set()
        self.linked: list[tuple[Path, str, set[int]]] = []  # linked folders, walked after the rest

    def closure(self, states: set[int]) -> set[int]:
        """Positions reached from `states` by letting each `**` match no folder."""
        reached = set(states)
        for index in sorted(states):
            while index < self.end and self.parts[index] is None:
                index += 1
                reached.add(index)
        return reached

    def walk(self, folder: Path, real: str, states: set[int]) -> None:
        """`real`: the folder's real path; `states`: the pattern positions its entries are matched at."""
        key = (real, frozenset(states))
        if key in self.walked:
            return
        self.walked.add(key)
        try:
            with os.scandir(folder) as listing:  # each entry's kind without a stat (but for a link)
                entries = sorted(listing, key=_entry_name)
        except OSError:  # unreadable or gone: nothing of it can be matched
            return
        parts, end = self.parts, self.end
        stars = {index for index in states if index < end and parts[index] is None}
        named = [(index, match) for index in states if index < end and (match := parts[index]) is not None]
        for entry in entries:
            name = entry.name
            deeper = stars | {index + 1 for index, match in named if match(name)}
            if not deeper:
                continue
            try:
                is_dir = entry.is_dir()  # a link to a folder too
            except OSError:
                continue
            if is_dir:
                if name in self.skip or (name in _INSTALLED and name not in self.written):
                    continue
                if entry.is_symlink():
                    self.linked.append((folder / name, os.path.realpath(entry.path), self.closure(deeper)))
                else:
                    self.walk(folder / name, os.path.join(real, name), self.closure(deeper))
            elif end in self.closure(deeper) and entry.is_file():
                self.found.append(folder / name)


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _imported_by_call(node: ast.Call) -> str | None:
    """The module name an `importlib.import_module("…")` / `import_module("…")` /
    `__import__("…")` call writes out as a literal, or None: a name computed at run time cannot
    be read from the source (the experiment's `inputs` covers it)."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip(".")):
        return None
    package = node.args[1] if len(node.args) > 1 and called == "import_module" else \
        next((k.value for k in node.keywords if k.arg == "package" and called == "import_module"), None)
    if first.value.startswith(".") and isinstance(package, ast.Constant) and isinstance(package.value, str):
        try:  # `import_module(".refunds", "app.handlers")`: relative to the package written out
            return importlib.util.resolve_name(first.value, package.value)
        except ImportError:  # beyond the top-level package: the import itself will say so
            return None
    return first.value  # relative to the calling module's package (`import_module(".x", __package__)`)


#: Calls that load a module from a file, and the position / keyword of that file's path.
_BY_PATH = {"spec_from_file_location": (1, "location"), "SourceFileLoader": (1, "path"),
            "run_path": (0, "path_name")}


def _loaded_by_path(node: ast.Call, module: Path, bindings: Mapping[str, str]) -> str | None:
    """The file an `importlib.util.spec_from_file_location(name, PATH)` / `SourceFileLoader(name,
    PATH)` / `runpy.run_path(PATH)` call loads, when PATH can be read from the source: a literal, or
    built from `__file__` and literals (`Path(__file__).parent / "agent.py"`, `os.path.join(
    os.path.dirname(__file__), "agent.py")`, a module-level name bound to such a path). A relative
    result is looked for beside the module and in the project root (either may be meant)."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called not in _BY_PATH:
        return None
    index, keyword = _BY_PATH[called]
    arg = node.args[index] if len(node.args) > index else \
        next((k.value for k in node.keywords if k.arg == keyword), None)
    return _static_path(arg, module, bindings) if arg is not None else None


def _path_bindings(tree: ast.Module, module: Path) -> dict[str, str]:
    """Module-level names bound to a path `_static_path` can read (`HERE = Path(__file__).parent`)."""
    bound: dict[str, str] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and value is not None:
            known = _static_path(value, module, bound)
            if known is not None:
                bound[target.id] = known
            else:
                bound.pop(target.id, None)
    return bound


def _static_path(node: ast.expr, module: Path, bindings: Mapping[str, str]) -> str | None:
    """`_evaluated`, or None for an expression too deep to walk (a module-level string of a few
    thousand `+` terms parses, and must not stop the run)."""
    try:
        return _evaluated(node, module, bindings)
    except RecursionError:
        return None


def _evaluated(node: ast.expr, module: Path, bindings: Mapping[str, str]) -> str | None:
    """A path expression's value when the source fixes it, else None (a path computed at run time
    is the experiment's `inputs` to declare)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return str(module) if node.id == "__file__" else bindings.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _evaluated(node.value, module, bindings)
        return os.path.dirname(inner) if inner is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        left, right = _evaluated(node.left, module, bindings), _evaluated(node.right, module, bindings)
        if left is None or right is None:
            return None
        return os.path.join(left, right) if isinstance(node.op, ast.Div) else left + right
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        args = [_evaluated(a, module, bindings) for a in node.args]
        if node.keywords or any(a is None for a in args):
            return None
        known = [a for a in args if a is not None]
        if name in ("resolve", "absolute") and isinstance(func, ast.Attribute) and not known:
            return _evaluated(func.value, module, bindings)
        if name in ("Path", "PurePath", "PosixPath", "abspath", "realpath", "normpath", "fspath", "str") \
                and len(known) == 1:
            return known[0]
        if name == "dirname" and len(known) == 1:
            return os.path.dirname(known[0])
        if name == "join" and known:
            return os.path.join(*known)
    return None
