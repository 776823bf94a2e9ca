"""The linter's tables (``gpustack/lint/data``) read the same under YAML 1.1 and 1.2.

They are read with libyaml (YAML 1.1, ``gpustack.shipped.lint_data``); a value the two
versions read differently (``on``, ``1.10``, ``0777``, ``yes``) would mean one thing to the
linter and another to whoever reads the file by the current standard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack.shipped import lint_data

DATA = Path(__file__).resolve().parents[2] / "gpustack" / "lint" / "data"
FILES = sorted(path.relative_to(DATA).as_posix() for path in DATA.rglob("*.yaml"))


def _typed(value: Any) -> Any:
    """``value`` with each scalar paired with its type: ``1 == True == 1.0`` must not pass."""
    if isinstance(value, dict):
        return {_typed(key): _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return type(value).__name__, value


def test_every_table_is_checked() -> None:
    assert {"llm-servers.yaml", "system-components.yaml", "chart-keys/renames.yaml"} <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_yaml_1_1_and_1_2_read_a_table_alike(name: str) -> None:
    as_1_2 = YAML(typ="safe").load((DATA / name).read_text(encoding="utf-8"))
    assert _typed(lint_data(name)) == _typed(as_1_2)


def test_a_value_the_versions_read_apart_is_caught() -> None:
    """The comparison sees the difference the test exists for."""
    import yaml

    text = "gate: on\n"  # 1.1: True, 1.2: "on"
    assert _typed(yaml.load(text, Loader=yaml.CSafeLoader)) != _typed(YAML(typ="safe").load(text))
