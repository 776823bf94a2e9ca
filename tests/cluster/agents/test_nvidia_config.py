"""nvidia-config runs NVIDIA's own parsing: upstream's defaults, renames and error words come out.

The configs are upstream's own examples: the time-slicing one from the device plugin's README
(https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/README.md, "With CUDA Time-Slicing")
with the 4 replicas of the GPU Operator's time-slicing guide, and mig-parted's
https://github.com/NVIDIA/mig-parted/blob/v0.14.4/examples/config.yaml (abridged).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cluster.agents import nvidia_config
from tests.cluster.agents.nvidia_config import (ConfigError, config_manager_choice, device_plugin_config,
                                                mig_parted_config)

pytestmark = pytest.mark.cluster

TIME_SLICING = """\
version: v1
sharing:
  timeSlicing:
    renameByDefault: {rename}
    resources:
    - name: nvidia.com/gpu
      replicas: {replicas}
"""

MIG_PARTED = """\
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false

  all-1g.10gb:
    - devices: all
      mig-enabled: true
      mig-devices:
        "1g.10gb": 7

  custom-config:
    - devices: [0,1,2,3]
      mig-enabled: false
    - devices: [4]
      mig-enabled: true
      mig-devices:
        "1g.5gb": 7
"""


@pytest.fixture(scope="module", autouse=True)
def built() -> Path:
    """Build once per module, so a missing Go skips (or, in CI, fails) the module, not each test."""
    return nvidia_config.built_or_unavailable()


def shared(config: dict[str, Any]) -> list[dict[str, Any]]:
    return config["sharing"]["timeSlicing"]["resources"]


def test_defaults_are_the_device_plugins() -> None:
    config = device_plugin_config(None, {})
    flags = config["flags"]
    assert config["version"] == "v1"
    assert flags["migStrategy"] == "none"
    assert flags["failOnInitError"] is True
    assert flags["nvidiaDriverRoot"] == "/"
    assert flags["nvidiaDevRoot"] == "/"  # NewConfig: the dev root falls back to the driver root
    assert flags["plugin"] == {
        "passDeviceSpecs": False, "deviceListStrategy": ["envvar"], "deviceIDStrategy": "uuid",
        "cdiAnnotationPrefix": "cdi.k8s.io/", "nvidiaCTKPath": "/usr/bin/nvidia-ctk",
        "containerDriverRoot": "/driver-root"}
    assert "gfd" not in flags
    assert config["resources"] == {"gpus": [{"pattern": "*", "name": "nvidia.com/gpu"}]}
    assert config["sharing"] == {"timeSlicing": {}}


def test_time_slicing_renamed_by_default() -> None:
    config = device_plugin_config(TIME_SLICING.format(rename="true", replicas=4), {})
    assert config["sharing"]["timeSlicing"]["renameByDefault"] is True
    assert shared(config) == [{"name": "nvidia.com/gpu", "rename": "nvidia.com/gpu.shared",
                               "devices": "all", "replicas": 4}]
    assert "failRequestsGreaterThanOne" not in config["sharing"]["timeSlicing"]  # false: omitted


def test_time_slicing_keeps_the_name_without_rename_by_default() -> None:
    config = device_plugin_config(TIME_SLICING.format(rename="false", replicas=4), {})
    assert "renameByDefault" not in config["sharing"]["timeSlicing"]
    assert shared(config) == [{"name": "nvidia.com/gpu", "devices": "all", "replicas": 4}]


def test_a_rename_of_its_own_is_dropped_as_upstream_does() -> None:
    """DisableResourceNamingInConfig: 'rename' and 'devices' are not yet supported, so ignored."""
    text = TIME_SLICING.format(rename="false", replicas=4).replace(
        "      replicas: 4", "      replicas: 4\n      rename: nvidia.com/shared-gpu\n      devices: [0]")
    assert shared(device_plugin_config(text, {})) == [
        {"name": "nvidia.com/gpu", "devices": "all", "replicas": 4}]


def test_mps_always_fails_requests_greater_than_one() -> None:
    text = TIME_SLICING.format(rename="false", replicas=2).replace("timeSlicing", "mps")
    config = device_plugin_config(text, {"MPS_ROOT": "/run/nvidia/mps"})
    assert config["sharing"]["mps"]["failRequestsGreaterThanOne"] is True
    with pytest.raises(ConfigError) as error:
        device_plugin_config(text, {})
    assert error.value.message == ("error starting plugins: unable to validate flags: "
                                   "using MPS requires --mps-root to be specified")


def test_mig_strategy_from_the_environment_beats_the_file() -> None:
    text = "version: v1\nflags:\n  migStrategy: mixed\n"
    assert device_plugin_config(text, {})["flags"]["migStrategy"] == "mixed"
    config = device_plugin_config(text, {"MIG_STRATEGY": "single", "FAIL_ON_INIT_ERROR": "false",
                                         "DEVICE_LIST_STRATEGY": "volume-mounts,cdi-cri"})
    assert config["flags"]["migStrategy"] == "single"
    assert config["flags"]["failOnInitError"] is False
    assert config["flags"]["plugin"]["deviceListStrategy"] == ["volume-mounts", "cdi-cri"]
    assert config["resources"]["mig"] == [{"pattern": "*", "name": "nvidia.com/gpu"}]


def test_an_empty_file_is_the_default_config() -> None:
    """config-manager's "empty" fallback links the config file to /dev/null."""
    assert device_plugin_config("", {}) == device_plugin_config(None, {})


def test_one_replica_is_rejected_in_upstreams_words() -> None:
    with pytest.raises(ConfigError) as error:
        device_plugin_config(TIME_SLICING.format(rename="true", replicas=1), {})
    assert error.value.message == (
        "error starting plugins: unable to load config: unable to finalize config: unable to parse "
        "config file: error parsing config file: unmarshal error: error unmarshaling JSON: while "
        "decoding JSON: number of replicas must be >= 2")


def test_an_unknown_mig_strategy_is_rejected_in_upstreams_words() -> None:
    with pytest.raises(ConfigError) as error:
        device_plugin_config(None, {"MIG_STRATEGY": "all"})
    assert error.value.message == "error starting plugins: unable to validate flags: unknown MIG strategy: all"


def test_an_unparsable_variable_is_rejected() -> None:
    with pytest.raises(ConfigError, match='could not parse "maybe" as bool value from environment '
                                          'variable "FAIL_ON_INIT_ERROR"'):
        device_plugin_config(None, {"FAIL_ON_INIT_ERROR": "maybe"})


def test_mig_parted_selects_an_existing_config() -> None:
    assert mig_parted_config(MIG_PARTED, "custom-config") == [
        {"devices": [0, 1, 2, 3], "mig-enabled": False, "mig-devices": None},
        {"devices": [4], "mig-enabled": True, "mig-devices": {"1g.5gb": 7}},
    ]
    assert mig_parted_config(MIG_PARTED, "all-1g.10gb") == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]


def test_mig_parted_rejects_a_missing_config_in_its_own_words() -> None:
    with pytest.raises(ConfigError) as error:
        mig_parted_config(MIG_PARTED, "all-3g.40gb")
    assert error.value.message == "Error selecting MIG config: selected mig-config not present: all-3g.40gb"


def test_mig_parted_rejects_an_invalid_profile() -> None:
    text = MIG_PARTED.replace('"1g.10gb": 7', '"1x.10gb": 7')
    with pytest.raises(ConfigError, match="^Error parsing config file: .*invalid format for '1x.10gb'"):
        mig_parted_config(text, "all-disabled")


CHART = {"FALLBACK_STRATEGIES": "named,single", "DEFAULT_CONFIG": ""}  # the chart's defaults


def test_config_manager_takes_the_labelled_config() -> None:
    assert config_manager_choice("a100-ts", ["a100-ts", "default"], CHART) == "a100-ts"


def test_config_manager_rejects_a_label_naming_no_config() -> None:
    with pytest.raises(ConfigError) as error:
        config_manager_choice("h100-ts", ["a100-ts", "default"], CHART)
    assert error.value.message == "specified config h100-ts does not exist"


def test_config_manager_without_a_label_falls_back() -> None:
    assert config_manager_choice(None, ["a100-ts", "default"], CHART) == "default"
    assert config_manager_choice(None, ["a100-ts"], CHART) == "a100-ts"
    assert config_manager_choice(None, ["a", "b"], {**CHART, "DEFAULT_CONFIG": "b"}) == "b"
    assert config_manager_choice(None, ["a", "b"], {"FALLBACK_STRATEGIES": "named,empty"}) == ""
    with pytest.raises(ConfigError) as error:
        config_manager_choice(None, ["a", "b"], CHART)
    assert error.value.message == "no config was set, no default was provided, and all fallbacks failed"


def test_config_manager_misreports_a_missing_default_as_upstream_does() -> None:
    """Upstream formats the (empty) label, not DEFAULT_CONFIG, into this message."""
    with pytest.raises(ConfigError) as error:
        config_manager_choice(None, ["a"], {**CHART, "DEFAULT_CONFIG": "b"})
    assert error.value.message == "specified config  does not exist"
