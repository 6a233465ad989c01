"""The judge fields an eval may set (low module: `authoring` checks `define_eval(judge=...)` against
them and `config` words its own error with them; config reads them here so a command that only reads
the store does not load the authoring package)."""

from __future__ import annotations

__all__ = ["JUDGE_FIELDS"]

#: The judge fields an eval may set: the judge table's, but for `max_concurrency` (one client
#: serves the whole run).
JUDGE_FIELDS = frozenset({"model", "base_url", "api_key_env", "timeout_ms", "max_retries", "headers",
                          "temperature", "seed", "samples", "min_agreement",
                          "min_human_kappa", "min_labels"})
