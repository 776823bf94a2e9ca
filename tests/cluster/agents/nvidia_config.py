"""NVIDIA's own configuration parsing, for the fake kubelet's simulated NVIDIA node agents.

A fake node agent that parses the device plugin's or mig-parted's config with code of its own
would accept what the real agents reject and default what they leave unset. So the cluster tier
runs NVIDIA's code: ``nvidia/main.go`` (program ``nvidia-config``) imports
``github.com/NVIDIA/k8s-device-plugin/api/config/v1`` and ``github.com/NVIDIA/mig-parted/api/spec/v1``
at the versions ``nvidia/go.mod`` pins, and copies the few lines that live in upstream's package
main (flag lists, loadConfig, validateFlags, config-manager's updateConfigName,
GetSelectedMigConfig), citing them:

- https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/nvidia-device-plugin/main.go
- https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/config-manager/main.go
- https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/api/config/v1/config.go
- https://github.com/NVIDIA/mig-parted/blob/v0.14.4/cmd/nvidia-mig-parted/assert/assert.go
- https://github.com/NVIDIA/mig-parted/blob/v0.14.4/api/spec/v1/spec.go

The program is built once per source (a hash of go.mod, go.sum and main.go) into
``~/.cache/gpustack/agents/<hash>/nvidia-config``; ``python3 -m tests.cluster.agents.nvidia_config``
prebuilds it (CI) and prints its path. It needs cgo (a C compiler): mig-parted's spec package
imports ``github.com/NVIDIA/go-nvml``, whose bindings are cgo; nothing loads libnvidia-ml at run time.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Iterable
from typing import Any

from tests.cluster.build import cache_root, find_go, go_build_once

SOURCE = Path(__file__).parent / "nvidia"
SOURCES = ("go.mod", "go.sum", "main.go")
NAME = "nvidia-config"
TIMEOUT_SECONDS = 60


class ConfigError(Exception):
    """The config was rejected; ``message`` is upstream's own error text, as the agent logs it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class GoMissing(RuntimeError):
    """No Go toolchain to build ``nvidia-config`` with (and no build of this source cached)."""


def _target() -> Path:
    """Where this source's build lives: a new go.mod, go.sum or main.go gets a new folder."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(name.encode() + b"\0" + (SOURCE / name).read_bytes() + b"\0")
    return cache_root().parent / "agents" / digest.hexdigest()[:16] / NAME


def is_built() -> bool:
    """Whether this source's build is cached (then no Go is needed)."""
    return _target().is_file()


def built_or_unavailable() -> Path:
    """The program, built if need be; where it is not built and there is no Go to build it, the
    calling test module is unavailable (skipped, or failed in CI: ``tests.cluster.support``)."""
    from tests.cluster.support import unavailable

    if not is_built() and find_go() is None:
        unavailable("Go is not installed: the cluster tier builds nvidia-config with it "
                    "(python3 -m tests.cluster.agents.nvidia_config)")
    return binary()


def binary() -> Path:
    """``nvidia-config``, built now unless this source's build is already cached.

    One build at a time, never a half binary: tests.cluster.build.go_build_once.
    """
    if find_go() is None and not _target().is_file():
        raise GoMissing(f"go not found: the cluster tier builds {NAME} ({SOURCE}) with Go "
                        "from the Go module proxy; install Go 1.26 or put it on PATH")
    # cgo on: github.com/NVIDIA/go-nvml (imported by mig-parted's api/spec/v1 through
    # pkg/types) does not compile without it.
    return go_build_once(_target(), SOURCE, cgo=True, what=NAME)


def _run(args: list[str], env: dict[str, str]) -> Any:
    """Run ``nvidia-config`` with exactly ``env``; its JSON on success, ConfigError on exit 1."""
    done = subprocess.run([str(binary()), *args], env=env, capture_output=True, text=True,
                          check=False, timeout=TIMEOUT_SECONDS)
    if done.returncode == 1:
        raise ConfigError(done.stderr.strip())
    if done.returncode != 0:
        raise RuntimeError(f"{NAME} {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def device_plugin_config(config_text: str | None, env: dict[str, str]) -> dict[str, Any]:
    """The device plugin's v1.Config (as JSON) for a config file and its container's env.

    ``env`` is the device plugin container's environment (MIG_STRATEGY, FAIL_ON_INIT_ERROR,
    DEVICE_LIST_STRATEGY, MPS_ROOT, ...) and is the program's whole environment: this process's
    own variables are not passed, so a developer's shell cannot change the result. Precedence is
    upstream's: a variable beats the file, the file beats a flag's default. ``config_text``
    None means no config file; "" is an empty one, which is what the plugin reads when its
    config-manager falls back to the "empty" strategy (it symlinks /config/config.yaml to
    /dev/null). The result is upstream's config after NewConfig, DisableResourceNamingInConfig,
    validateFlags (NVML taken as present) and the GPU-independent default resources
    (nvidia.com/gpu for "*", and for MIG strategy single also for MIG devices); for MIG strategy
    mixed upstream adds one nvidia.com/mig-<profile> per profile NVML reports, which only the
    caller's fake GPUs know, so they are not in ``resources``.
    https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/nvidia-device-plugin/main.go
    """
    if config_text is None:
        return _run(["device-plugin"], env)
    with tempfile.TemporaryDirectory(prefix="nvidia-config-") as folder:
        path = Path(folder) / "config.yaml"
        path.write_text(config_text)
        return _run(["device-plugin", "--config-file", str(path)], env)


def config_manager_choice(label: str | None, configs: Iterable[str], env: dict[str, str]) -> str:
    """The config file that the device plugin's config-manager picks: a name of ``configs``,
    or "" for the empty config (it then links the plugin's config file to /dev/null).

    ``label`` is the value of the node label ``nvidia.com/device-plugin.config`` (None or "":
    no label); ``configs`` are the file names of the ConfigMap mounted at /available-configs;
    ``env`` is the config-manager container's environment (DEFAULT_CONFIG,
    FALLBACK_STRATEGIES; the chart sets "named,single"). Its errors (ConfigError) are
    upstream's words, which the init container exits 1 with, e.g. "specified config X does not
    exist", "no config was set, no default was provided, and all fallbacks failed", "no
    configuration files available"; for a DEFAULT_CONFIG naming no file upstream prints the
    (empty) label: "specified config  does not exist".
    https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/config-manager/main.go
    """
    with tempfile.TemporaryDirectory(prefix="nvidia-config-") as folder:
        for name in configs:
            (Path(folder) / name).write_text("")
        return _run(["config-manager", "--node-label-value", label or ""],
                    {**env, "CONFIG_FILE_SRCDIR": folder})


def mig_parted_config(config_text: str, selected: str) -> list[dict[str, Any]]:
    """The entries of mig-config ``selected``: [{devices, mig-enabled, mig-devices}, ...].

    Parsed by mig-parted's v1.Spec as ``nvidia-mig-parted apply|assert -f FILE -c NAME`` does,
    errors worded as it logs them, e.g. "Error selecting MIG config: selected mig-config not
    present: NAME". An empty ``selected`` takes the only mig-config when the file has one, as
    mig-parted does. ``devices`` is "all" or a list of GPU indices; ``mig-devices`` maps a profile
    ("1g.10gb") to a count and is None when the entry sets none (mig-enabled false).
    https://github.com/NVIDIA/mig-parted/blob/v0.14.4/cmd/nvidia-mig-parted/assert/assert.go
    """
    with tempfile.TemporaryDirectory(prefix="nvidia-config-") as folder:
        path = Path(folder) / "config.yaml"
        path.write_text(config_text)
        return _run(["mig-parted", "--config-file", str(path), "--selected", selected], {})


if __name__ == "__main__":
    started = time.monotonic()
    path = binary()
    print(f"{NAME}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(path)
