"""A chart version validate accepts is one `gpustack lint` can check the values of: the
registry's pin, a version with key data, or one the user vouches for (allowUnknownVersion)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.errors import SpecError
from gpustack.spec.load import load_spec

REPO = Path(__file__).resolve().parents[2]
K3S_L4 = (REPO / "examples" / "k3s-l4.yaml").read_text(encoding="utf-8")
PINNED = "  devicePlugin:\n    version: 0.20.0\n"


def _spec(tmp_path: Path, device_plugin: str) -> str:
    assert PINNED in K3S_L4
    file = tmp_path / "spec.yaml"
    file.write_text(K3S_L4.replace(PINNED, device_plugin), encoding="utf-8")
    return str(file)


def test_a_version_without_key_data_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as error:
        load_spec(_spec(tmp_path, "  devicePlugin:\n    version: 0.99.0\n"))
    (problem,) = error.value.problems
    assert problem.path == "spec.devicePlugin.version" and problem.line == K3S_L4.count("\n", 0, K3S_L4.index(PINNED)) + 2
    assert "nvidia-device-plugin 0.99.0 is a version gpustack has no key data for" in problem.message
    assert "use one of 0.14.5, 0.15.1, 0.16.2, 0.17.4, 0.18.2, 0.19.3, 0.20.0" in problem.message
    assert "allowUnknownVersion: true" in problem.message


@pytest.mark.parametrize(
    "section",
    [
        "  devicePlugin:\n    version: 0.19.3\n",
        "  devicePlugin:\n    version: 0.99.0\n    allowUnknownVersion: true\n",
        "  devicePlugin:\n    enabled: false\n    version: 0.99.0\n",
    ],
)
def test_known_vouched_for_or_undeployed_versions_pass(tmp_path: Path, section: str) -> None:
    load_spec(_spec(tmp_path, section))
