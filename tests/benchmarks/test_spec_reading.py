"""Spec reading is bounded: the benchmark's alias bombs and oversized specs are refused with
the file, line and column, and what stays under the limits is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.errors import SpecError
from gpustack.spec.load import load_spec
from gpustack.userinput import ALIAS_BOMB
from spec_reading import alias_bomb, many_labels


@pytest.mark.parametrize("levels", [6, 7, 9])
def test_an_alias_bomb_is_refused_at_the_alias_that_crosses_the_cap(tmp_path: Path, levels: int) -> None:
    """9 levels of 9 aliases (648 bytes) hung validate for over ten minutes before the cap."""
    spec = tmp_path / "bomb.yaml"
    spec.write_text(alias_bomb(levels), encoding="utf-8")
    with pytest.raises(SpecError) as error:
        load_spec(str(spec))
    (problem,) = error.value.problems
    assert (problem.message, problem.file, problem.line) == (ALIAS_BOMB, str(spec), 10)
    assert problem.column is not None


def test_a_spec_over_a_mebibyte_is_refused_unread(tmp_path: Path) -> None:
    spec = tmp_path / "labels.yaml"
    spec.write_text(many_labels(150_000), encoding="utf-8")
    with pytest.raises(SpecError, match="larger than 1 MiB: not read"):
        load_spec(str(spec))


def test_many_labels_under_the_limits_are_read(tmp_path: Path) -> None:
    spec = tmp_path / "labels.yaml"
    spec.write_text(many_labels(1_000), encoding="utf-8")
    assert len(load_spec(str(spec)).stack.spec.nodePools[0].labels) == 1_000
