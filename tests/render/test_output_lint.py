"""What gpustack renders passes its own linter: every example's output and the richer variants."""

from __future__ import annotations

import pytest
from render_helpers import REPO

from gpustack.cli import main
from gpustack.render import write

MODEL = {"uri": "s3://models/m", "endpoint": "http://minio:9000", "credentialsSecret": "s3"}
VARIANTS = {
    "workloads-whole-gpus": {
        "nodePools": [{"name": "gpu", "count": 2, "gpu": {"model": "L4", "count": 2},
                       "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}],
        "workloads": [{"type": "smokeTest"}, {"type": "nbody"}, {"type": "vllm", "name": "v", "model": MODEL}],
    },
    "hami-shares": {
        "devicePlugin": {"enabled": False},
        "sharing": {"hami": {"enabled": True}},
        "workloads": [{"type": "vllm", "name": "v", "model": MODEL, "replicas": 2,
                       "share": {"memoryMiB": 6000, "cores": 30}, "modelMemoryMiB": 4000}],
    },
    "kubeadm-nvidia-dra-argocd": {
        "cluster": {"distribution": "kubeadm", "kubernetesVersion": "1.35"},
        "devicePlugin": {"enabled": False},
        "dra": {"enabled": True, "driver": "nvidia", "claimTemplates": [{"name": "one-gpu"}]},
        "gitops": {"argocd": {"enabled": True, "repoURL": "https://git.example.com/stacks.git"}},
    },
}


RULE_SPECS = sorted((REPO / "tests" / "rules" / "specs").glob("*.yaml"))


def lint(capsys, folder, spec: str) -> tuple[int, str]:
    """Lint a rendered folder with its spec as context (distribution, pools, capacities)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["lint", str(folder), "--spec", spec, "--fail-on", "info"])
    return exit_info.value.code or 0, capsys.readouterr().out


def test_every_example_output_lints_clean(capsys, examples):
    for name, (rendered, _) in examples.items():
        folder = REPO / "output" / rendered.ctx.stack.metadata.name
        code, out = lint(capsys, folder, rendered.ctx.spec_file)
        assert code == 0, f"{name}:\n{out}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variants_lint_clean(capsys, tmp_path, render_spec, variant):
    rendered, tree = render_spec(**VARIANTS[variant])
    write.write_tree(tree, tmp_path / "out")
    code, out = lint(capsys, tmp_path / "out", rendered.ctx.spec_file)
    assert code == 0, out


@pytest.mark.parametrize("spec", RULE_SPECS, ids=[path.stem for path in RULE_SPECS])
def test_every_test_spec_is_refused_or_renders_lint_clean(capsys, tmp_path, spec):
    """What validate accepts, the renderer makes lint-clean (the rule fixtures' cluster specs)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", str(spec)])
    capsys.readouterr()
    if exit_info.value.code:
        return
    with pytest.raises(SystemExit) as exit_info:
        main(["render", str(spec), "-o", str(tmp_path / "out")])
    assert not exit_info.value.code, capsys.readouterr().err
    capsys.readouterr()
    code, out = lint(capsys, tmp_path / "out", str(spec))
    assert code == 0, out


def test_a_large_fleet_gets_a_relabel_interval_that_lints_clean(capsys, tmp_path, render_spec):
    rendered, tree = render_spec(nodePools=[{"name": "g6", "count": 150, "gpu": {"model": "L4"}}])
    assert "sleepInterval: 90s" in tree["helm/node-feature-discovery.values.yaml"]
    assert "sleepInterval: 90s" in tree["helm/nvidia-device-plugin.values.yaml"]
    write.write_tree(tree, tmp_path / "out")
    code, out = lint(capsys, tmp_path / "out", rendered.ctx.spec_file)
    assert code == 0, out
