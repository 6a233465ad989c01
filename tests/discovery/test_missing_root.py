"""Issue 9.19: a missing eval root outside any project suggests `niceeval init`."""

from __future__ import annotations

from pathlib import Path

import pytest

from niceeval_cli.discovery import DiscoveryError, discover


def test_a_missing_eval_root_without_niceeval_toml_suggests_niceeval_init(tmp_path: Path) -> None:
    with pytest.raises(DiscoveryError) as caught:
        discover([tmp_path / "evals"], tmp_path)
    message = str(caught.value)
    assert "eval root evals does not exist" in message
    assert "no niceeval.toml" in message and "`niceeval init`" in message


def test_a_missing_eval_root_of_a_project_points_to_its_evals_setting(tmp_path: Path) -> None:
    (tmp_path / "niceeval.toml").write_text('[project]\nevals = ["checks"]\n', encoding="utf-8")
    with pytest.raises(DiscoveryError) as caught:
        discover([tmp_path / "checks"], tmp_path)
    message = str(caught.value)
    assert "eval root checks does not exist; create it or fix `evals` in [project] of niceeval.toml" in message
    assert "niceeval init" not in message
