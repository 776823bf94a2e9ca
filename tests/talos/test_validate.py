"""The Talos tier: rendered machine-config patches and schematics, checked by Talos's own code.

``validate/main.go`` (built by ``tests.talos.build``) generates worker and control-plane machine
configs with the Talos machinery library, applies each rendered patch as talosctl does and
validates the result for a metal node; it decodes each schematic with the Image Factory's model.
Every example whose distribution is talos goes through it, plus a spec that renders what the
examples leave out (default runtime, feature gates, pod subnet, a system pool, proprietary
modules, an NVSwitch board).
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from render_helpers import EXAMPLES, REPO, render_file, spec_document

from gpustack.lint.facts.talos import CRI_CUSTOMIZATION, KERNEL_MODULES
from gpustack.render.stackfiles import talos_config
from gpustack.spec import talos
from gpustack.spec.partitioning import registered_labels
from gpustack.yamlio import dump
from tests.cluster.build import find_go
from tests.talos import build

pytestmark = pytest.mark.talos

TALOS_EXAMPLES = [p for p in EXAMPLES if yaml.safe_load(p.read_text())["spec"]["cluster"]["distribution"] == "talos"]


@pytest.fixture(scope="module")
def validator() -> Path:
    if not build.binary().is_file() and find_go() is None:
        reason = "Go is not installed: the Talos tier builds its validator with it (python -m tests.talos.build)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"Talos tier cannot run in CI: {reason}", pytrace=False)
        pytest.skip(reason)
    return build.build()


def validate(validator: Path, folder: Path, stack) -> dict[str, dict]:
    """Each Talos file of the folder → what the validator says of it (fails on any error)."""
    cluster = stack.spec.cluster
    done = subprocess.run(
        [str(validator), "-talos", cluster.talosVersion, "-kubernetes", f"{cluster.kubernetesVersion}.0", str(folder)],
        capture_output=True, text=True, timeout=120,
    )
    results = {Path(r["file"]).relative_to(folder).as_posix(): r for r in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0, done.stderr + "\n".join(f"{f}: {r['errors']}" for f, r in results.items() if r["errors"])
    return results


def _written(tmp_path: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("example", TALOS_EXAMPLES, ids=lambda p: p.stem)
def test_example_patches_and_schematics_validate(validator, example):
    rendered, _ = render_file(example)
    stack = rendered.ctx.stack
    results = validate(validator, REPO / "output" / example.stem, stack)
    for pool in stack.spec.nodePools:
        patched = results[talos_config.patch_path(pool.name)]
        assert patched["modules"] == list(KERNEL_MODULES)
        assert patched["sysctls"]["net.core.bpf_jit_harden"] == "1"
        assert patched.get("nodeLabels", {}) == registered_labels(stack, pool)
        # Taints register with the kubelet: NodeRestriction forbids a node to change them later.
        assert "nodeTaints" not in patched
        registered = patched.get("kubeletExtraConfig", {}).get("registerWithTaints", [])
        assert [(t["key"], t.get("value"), t["effect"]) for t in registered] == [
            (t.key, t.value, t.effect) for t in pool.taints]
        assert results[talos_config.schematic_path(pool.name)]["extensions"] == talos.extensions(pool)


def test_the_examples_carry_taints_and_labels():
    """The examples exercise what the test above asserts: a tainted pool and labelled pools."""
    pools = [pool for example in TALOS_EXAMPLES for pool in yaml.safe_load(example.read_text())["spec"]["nodePools"]]
    assert any(pool.get("taints") for pool in pools) and any(pool.get("labels") for pool in pools)


def test_default_runtime_gates_subnet_and_system_pool_validate(validator, tmp_path):
    document = spec_document(
        cluster={
            "distribution": "talos", "talosVersion": "v1.13.0", "kubernetesVersion": "1.35",
            "nvidiaDefaultRuntime": True, "podSubnet": "10.42.0.0/16", "featureGates": {"ExampleGate": True},
        },
        nodePools=[
            {"name": "hgx", "gpu": {"model": "H100-80GB-SXM", "count": 8}, "driver": {"branch": "lts"},
             "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            {"name": "v100", "gpu": {"model": "V100-SXM2-32GB"}},
        ],
        systemPools=[{"name": "system", "labels": {"role": "system"}}],
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(dump(document), encoding="utf-8")
    rendered, files = render_file(spec)
    results = validate(validator, _written(tmp_path / "out", files), rendered.ctx.stack)

    hgx = results[talos_config.patch_path("hgx")]
    assert hgx["kubeletExtraConfig"] == {
        "registerWithTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        "featureGates": {"ExampleGate": True},
    }
    [written] = hgx["files"]
    path, content = written.split("\n", 1)
    assert path == CRI_CUSTOMIZATION
    assert tomllib.loads(content)["plugins"]["io.containerd.cri.v1.runtime"]["containerd"] == {
        "default_runtime_name": "nvidia"
    }
    assert results[talos_config.schematic_path("hgx")]["extensions"] == [
        "siderolabs/nvidia-open-gpu-kernel-modules-lts",
        "siderolabs/nvidia-container-toolkit-lts",
        "siderolabs/nvidia-fabricmanager-lts",
    ]
    # Volta has no open modules: the proprietary ones, production branch by default.
    assert results[talos_config.schematic_path("v100")]["extensions"][0] == "siderolabs/nonfree-kmod-nvidia-production"
    system = results[talos_config.patch_path("system")]
    assert system["nodeLabels"] == {"role": "system"} and "modules" not in system
    assert talos_config.schematic_path("system") not in results
    control_plane = results[talos_config.CONTROL_PLANE_PATCH]
    assert control_plane["kind"] == "controlplane"
    assert control_plane["podSubnets"] == ["10.42.0.0/16"]
    # Talos deploys no CNI of its own (Cilium instead); without the patch it would deploy Flannel.
    assert control_plane["cni"] == "none" and system["cni"] == "flannel"
    assert control_plane["featureGateArgs"] == {c: "ExampleGate=true" for c in ("apiserver", "controller-manager", "scheduler")}


def test_the_validator_refuses_what_talos_refuses(validator, tmp_path):
    """Not a rubber stamp: an invalid taint effect and an unknown key fail."""
    pools = tmp_path / "talos" / "pools"
    pools.mkdir(parents=True)
    (pools / "bad.patch.yaml").write_text("machine:\n  nodeTaints:\n    nvidia.com/gpu: present:Sometimes\n")
    (pools / "bad.schematic.yaml").write_text("customization:\n  systemExtensions:\n    extensions: []\n")
    done = subprocess.run([str(validator), "-talos", "v1.13.0", "-kubernetes", "1.36.0", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    errors = {Path(r["file"]).name: " ".join(r["errors"]) for r in map(json.loads, done.stdout.splitlines())}
    assert "invalid taint effect" in errors["bad.patch.yaml"]
    assert "extensions not found" in errors["bad.schematic.yaml"]


def test_the_kubernetes_range_per_talos_release_is_the_machinerys(validator, tmp_path):
    """``gpustack.spec.talos.KUBERNETES_BY_TALOS`` (what the spec check refuses) says what Talos's own
    compatibility tables say, one minor past each end included."""
    for talos_minor, (oldest, newest) in talos.KUBERNETES_BY_TALOS.items():
        for minor in range(oldest - 1, newest + 2):
            done = subprocess.run(
                [str(validator), "-talos", f"v1.{talos_minor}.0", "-kubernetes", f"1.{minor}.0", str(tmp_path)],
                capture_output=True, text=True, timeout=60,
            )
            assert (done.returncode == 0) == (oldest <= minor <= newest), (talos_minor, minor, done.stdout)


def test_init_writes_the_release_the_tier_validates_with():
    assert talos.DEFAULT_RELEASE == build.release()
