"""GS069 reads mig-parted configs as mig-parted does: what ``facts.migparted.problems`` refuses,
mig-parted's own parser (api/spec/v1, through ``nvidia-config``) refuses, and what it accepts,
mig-parted accepts. The configs are the rule's fixtures and variants of mig-parted's example
(https://github.com/NVIDIA/mig-parted/blob/v0.14.4/examples/config.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.lint.facts import migparted
from gpustack.lint.input.load import load_text
from tests.cluster.agents import nvidia_config
from tests.cluster.agents.nvidia_config import ConfigError, mig_parted_config

pytestmark = pytest.mark.cluster

FIXTURES = Path(__file__).parents[2] / "rules" / "fixtures" / "GS069"
GOOD = """\
version: v1
mig-configs:
  all-1g.10gb:
    - devices: all
      mig-enabled: true
      mig-devices:
        "1g.10gb": 7
"""
VARIANTS = {
    "example": GOOD,
    "camel case keys": GOOD.replace("mig-enabled", "migEnabled").replace("mig-devices", "migDevices"),
    "no version": GOOD.replace("version: v1\n", ""),
    "version v2": GOOD.replace("version: v1", "version: v2"),
    "a top-level key of its own": GOOD + "comment: mine\n",
    "an entry key of its own": GOOD.replace("      mig-enabled: true", "      mig-enabled: true\n      note: x"),
    "devices as a word": GOOD.replace("devices: all", "devices: some"),
    "enabled without devices": "version: v1\nmig-configs:\n  on:\n    - devices: all\n      mig-enabled: true\n",
    "devices while disabled": GOOD.replace("mig-enabled: true", "mig-enabled: false"),
    "a malformed profile": GOOD.replace('"1g.10gb"', '"1g10gb"'),
    "a profile with attributes": GOOD.replace('"1g.10gb"', '"1g.10gb+me"'),
    "a compute instance profile": GOOD.replace('"1g.10gb"', '"1c.3g.40gb"'),
    "only zero counts": GOOD.replace(": 7", ": 0"),
    "a layout without entries": "version: v1\nmig-configs:\n  empty: []\n",
    "a device filter and indices": GOOD.replace("    - devices: all", "    - device-filter: [\"0x233010DE\"]\n      devices: [0, 1]"),
}


@pytest.fixture(scope="module", autouse=True)
def built() -> Path:
    return nvidia_config.built_or_unavailable()


def _fixture_configs() -> dict[str, str]:
    configs = {}
    for path in sorted(FIXTURES.glob("*.yaml")):
        for resource in load_text(str(path), path.read_text("utf-8")).resources:
            for key, text in (resource.data.get("data") or {}).items():
                if migparted.KEY in text and ":" in text.split(migparted.KEY, 1)[1][:2]:
                    configs[f"{path.stem}/{resource.ref.name}/{key}"] = text
    return configs


def _refused_by_mig_parted(text: str) -> bool:
    try:
        mig_parted_config(text, next(iter(_layouts(text)), ""))
    except ConfigError:
        return True
    return False


def _layouts(text: str) -> list[str]:
    data = load_text("<config>", text).resources[0].data
    layouts = data.get(migparted.KEY)
    return list(layouts) if isinstance(layouts, dict) else []


@pytest.mark.parametrize(("name", "text"), sorted({**VARIANTS, **_fixture_configs()}.items()))
def test_gs069_refuses_what_mig_parted_refuses(name: str, text: str) -> None:
    config = load_text("<config>", text).resources[0].data
    assert bool(list(migparted.problems(config))) == _refused_by_mig_parted(text), name
