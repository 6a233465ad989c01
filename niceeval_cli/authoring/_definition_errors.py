"""Mistakes found while an eval module is imported: configuration errors (exit 2), not attempts."""

from __future__ import annotations

from .._errors import NiceEvalError
from ._errors import AuthoringError


class DefinitionError(AuthoringError, NiceEvalError):
    """A bad `define_eval` option, case or `Case`, raised at the definition's line. Discovery
    reports it as a configuration error; it is an AuthoringError so that a definition made while
    an attempt runs still makes that attempt `errored` (`authoring-error`)."""


class DatasetError(DefinitionError):
    """A data file a loader cannot read: missing, not UTF-8, bad JSON, a ragged CSV row, a failed
    conversion. The message names the file and line; the location is the loader's call."""
