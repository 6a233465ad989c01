"""Attempt fingerprints: what must be equal for an earlier attempt to stand for a new one.

Pure: the runner gathers the parts, this module only normalises and hashes them. What enters is
exactly what can change a result; description, labels, concurrency, the attempt timeout (reuse
checks the duration instead), `pass_rule` (it folds attempts, it does not change one) and
`--rerun` never do. The strict JSON below refuses anything without one stable text, so a hash
can never depend on a repr or a memory address.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from enum import Enum
from json.encoder import encode_basestring
from typing import Any

# The top-level parts, in the order `changed_parts` reports them.
PART_NAMES = (
    "eval_id",
    "case",
    "eval_kind",
    "source",
    "eval_options",
    "experiment_id",
    "adapter",
    "sut",
    "inputs",
    "version",
    "version_command",
    "model",
    "options",
    "judge",
    "judge_version",
    "ordinal",
)


def eval_options_view(*, tags: Sequence[str], judge: bool | Mapping[str, object] | None) -> dict[str, Any]:
    """The eval's own options that enter the fingerprint: its tags and its judge declaration."""
    declared: object
    if judge is None or judge is False:
        declared = None
    elif judge is True or (isinstance(judge, Mapping) and not judge):
        declared = True  # `judge={}` declares the capability exactly like `judge=True`
    else:
        declared = judge
    return {"tags": sorted(set(tags)), "judge": _plain(declared)}


def fingerprint_parts(
    *,
    eval_id: str,
    eval_kind: str,
    sources: Mapping[str, str],
    eval_options: Mapping[str, object],
    experiment_id: str,
    adapter_identity: Mapping[str, object],
    model: str | None,
    options: Mapping[str, object],
    judge: Mapping[str, object] | None,
    judge_version: str | None,
    ordinal: int,
    case_json: str | None = None,
    sut: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The plain-JSON parts one attempt's fingerprint hashes (stored beside it for `run --dry`).

    `judge` is `JudgeSettings.fingerprint_view()` (the key's env var NAME, never its value) or
    None when the eval declares no judge; `adapter_identity` contributes its name and version.
    `case_json` is the canonical JSON of a case's value (datasets.md): the part `case` holds its
    SHA-256, so editing one row changes that case's fingerprint only. Evals without cases have no
    `case` part, so their fingerprints are what they were before datasets existed.

    `sources` maps the eval module and every project module it imports (paths relative to the
    project root) to their SHA-256; `sut` holds the system under test's identity (`runner/_sut.py`:
    the `sut` files, and `inputs`, `version`, `version_command` when the experiment declares
    them). Per-file digests, not one digest, so `run --dry` can name the file that changed.
    """
    parts = {
        "eval_id": eval_id,
        "eval_kind": _plain(eval_kind),
        "source": _plain(dict(sources)),
        "eval_options": _plain(eval_options),
        "experiment_id": experiment_id,
        "adapter": {
            "name": _plain(adapter_identity.get("name")),
            "version": _plain(adapter_identity.get("version")),
        },
        "model": model,
        "options": _plain(options),
        "judge": None if judge is None else _plain(judge),
        "judge_version": judge_version,
        "ordinal": ordinal,
    }
    if case_json is not None:
        parts["case"] = digest(case_json)
    for name, value in (sut or {}).items():
        parts[name] = _plain(value)
    return parts


#: The parts that differ between the slots of one eval (or case eval) in one experiment.
_PER_SLOT = frozenset({"eval_id", "case", "ordinal"})


class PartsTemplate:
    """The parts every slot of one eval shares (in one experiment), encoded once; `render` adds a
    slot's own parts. Gives exactly `canonical_json(fingerprint_parts(...))`, at a fraction of its
    cost: a dataset of 10 000 cases is 10 000 slots that differ only in id, case and ordinal.

    The shared parts are laid out once as a %-format (one with a `case` part, one without) whose
    only holes are the slot's own values, so a render is one C-level formatting call."""

    __slots__ = ("_cased", "_plain")

    def __init__(self, shared: Mapping[str, object]) -> None:
        encoded = {name: canonical_json(value) for name, value in shared.items() if name not in _PER_SLOT}
        self._plain = _layout(encoded, ("eval_id", "ordinal"))
        self._cased = _layout(encoded, ("case", "eval_id", "ordinal"))

    def render(self, *, eval_id: str, ordinal: int, case_json: str | None = None) -> str:
        # The holes come in sorted part order: case, eval_id, ordinal (`_layout`).
        if case_json is None:
            return self._plain % (_encode_text(eval_id), ordinal)
        return self._cased % (digest(case_json), _encode_text(eval_id), ordinal)


#: How each per-slot part is written into the layout: `case` is a hex digest (a JSON string with
#: nothing to escape), `eval_id` arrives JSON-encoded, `ordinal` is written by `%d` (as str(int(ordinal)) would).
_HOLES = {"case": '"%s"', "eval_id": "%s", "ordinal": "%d"}


def _layout(encoded: Mapping[str, str], own: tuple[str, ...]) -> str:
    """`{"name":value,...}` in sorted name order (as json.dumps(sort_keys=True) writes it: part
    names are plain ASCII), the shared values' own `%` doubled, the slot's parts left as holes."""
    names = sorted({*encoded, *own})
    assert [name for name in names if name in own] == list(own), "holes must come in `render`'s order"
    return "{" + ",".join(
        f'"{name}":' + (_HOLES[name] if name in own else encoded[name].replace("%", "%%")) for name in names
    ) + "}"


# json's own C string encoder: what json.dumps(ensure_ascii=False) writes for a str.
_encode_text = encode_basestring


def canonical_json(value: object) -> str:
    """One text per value: sorted keys, no whitespace, UTF-8 kept; non-JSON values raise."""
    plain = _plain(value)
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def fingerprint(parts: Mapping[str, object]) -> str:
    """sha256 hex digest of the canonical JSON of `parts`."""
    return digest(canonical_json(parts))


def digest(canonical: str) -> str:
    """The fingerprint of parts already in canonical JSON (saves encoding them twice)."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


#: The parts that map files (relative to the project root) to their digests.
FILE_PARTS = frozenset({"source", "sut", "inputs"})


def changed_parts(old: Mapping[str, object], new: Mapping[str, object]) -> list[str]:
    """The top-level parts that differ (present in one only, or with another value). A file part
    present on both sides names each file that changed, was added or went: `"sut:app/agent.py"`."""
    names = [name for name in PART_NAMES if name in old or name in new]
    names += sorted((set(old) | set(new)) - set(PART_NAMES))
    changed: list[str] = []
    for name in names:
        before, after = old.get(name), new.get(name)
        if (name in old) == (name in new) and canonical_json(before) == canonical_json(after):
            continue
        if name in FILE_PARTS and isinstance(before, Mapping) and isinstance(after, Mapping):
            files = sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
            changed += [f"{name}:{path}" for path in files] or [name]
        else:
            changed.append(name)
    return changed


def _plain(value: object) -> Any:
    """Plain JSON data (dict/list/str/int/float/bool/None) or TypeError/ValueError."""
    if isinstance(value, Enum):
        return _plain(value.value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a fingerprint part must be a finite number, got {value!r}")
        return value
    if isinstance(value, Mapping):
        return {_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    raise TypeError(f"a fingerprint part must be plain JSON data, got {type(value).__name__}")


def _key(key: object) -> str:
    if isinstance(key, Enum):
        key = key.value
    if not isinstance(key, str):
        raise TypeError(f"a fingerprint mapping key must be a string, got {type(key).__name__}")
    return key
