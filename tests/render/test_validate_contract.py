"""`validate` is the deployability contract: what the linter would flag in a rendered stack,
validate refuses in the spec first; what it accepts renders with every node label in place
and no placeholder text in any file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from render_helpers import EXAMPLES, render_file, spec_document
from test_output_lint import VARIANTS, lint

from gpustack.errors import SpecError
from gpustack.render import app, write
from gpustack.render.component import RenderContext
from gpustack.spec.load import load_spec
from gpustack.yamlio import dump

NVIDIA_DRA = {"devicePlugin": {"enabled": False}, "dra": {"enabled": True, "driver": "nvidia"}}
# Specs that rendered before validate checked them, and whose output the linter flags (None),
# or notes that it cannot check (the note's words).
LINT_WOULD_FLAG: dict[str, tuple[dict[str, Any], str, str | None]] = {
    "dra-selector-unknown-attribute": (
        NVIDIA_DRA | {"dra": {**NVIDIA_DRA["dra"], "claimTemplates": [
            {"name": "l4", "selectors": ["device.attributes['gpu.nvidia.com'].prodName == 'L4'"]}]}},
        "spec.dra.claimTemplates[0].selectors[0]",
        None,
    ),
    "dra-selector-not-cel": (
        NVIDIA_DRA | {"dra": {**NVIDIA_DRA["dra"], "deviceClasses": [
            {"name": "l4.example.com", "selectors": ["device.driver =="]}]}},
        "spec.dra.deviceClasses[0].selectors[0]",
        None,
    ),
    "chart-version-without-key-data": (
        {"devicePlugin": {"version": "0.99.0"}}, "spec.devicePlugin.version",
        "no key data for nvidia-device-plugin 0.99.0",
    ),
}
MIG_POOL = {"name": "a100", "gpu": {"model": "A100-80GB-SXM"}, "mig": {"layout": {"3g.40gb": 2}}}
LABELLED_BY_RENDER = {
    "kubeadm-operator-mig": {
        "cluster": {"distribution": "kubeadm", "kubernetesVersion": "1.36"},
        "gpuOperator": {"enabled": True},
        "nodePools": [MIG_POOL | {"driver": {"source": "operator"}}],
    },
    "k3s-host-mig-and-sharing": {
        "nodePools": [
            MIG_POOL,
            {"name": "l4", "gpu": {"model": "L4"}, "sharing": {"strategy": "timeSlicing", "replicas": 4}},
        ],
    },
}
# Text that only ever comes from code forgetting to fill something in.
PLACEHOLDER = re.compile(r"`its nodes`|<node>|\bTODO\b|\bFIXME\b|\bNone\b|\{[a-z_.]+\}|\bnull\b(?=[^:\n]*`)")


def _spec_file(folder: Path, spec: dict[str, Any]) -> str:
    path = folder / "spec.yaml"
    path.write_text(dump(spec_document(**spec)), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", sorted(LINT_WOULD_FLAG))
def test_validate_refuses_what_the_linter_would_flag_in_the_output(capsys, tmp_path: Path, name: str) -> None:
    spec, path, note = LINT_WOULD_FLAG[name]
    file = _spec_file(tmp_path, spec)
    with pytest.raises(SpecError) as error:
        load_spec(file)
    assert any(p.path == path and p.line for p in error.value.problems), [str(p) for p in error.value.problems]
    # Rendered without those checks, the output is what the linter flags, or cannot check.
    loaded = load_spec(file, render=False)
    write.write_tree(app.tree(app.render(RenderContext(stack=loaded.stack, spec_file=file))), tmp_path / "out")
    code, out = lint(capsys, tmp_path / "out", file)
    if note is None:
        assert code != 0, out
    else:
        assert "note: " in out and note in out, out


@pytest.mark.parametrize("name", sorted(LABELLED_BY_RENDER))
def test_rendered_stacks_with_pool_configs_lint_clean(capsys, tmp_path: Path, name: str) -> None:
    file = _spec_file(tmp_path, LABELLED_BY_RENDER[name])
    _, tree = render_file(Path(file))
    write.write_tree(tree, tmp_path / "out")
    code, out = lint(capsys, tmp_path / "out", file)
    assert code == 0, out


def test_a_kubeadm_mig_pool_registers_with_its_config_labels(tmp_path: Path) -> None:
    _, tree = render_file(Path(_spec_file(tmp_path, LABELLED_BY_RENDER["kubeadm-operator-mig"])))
    join = tree["cluster/join-a100.yaml"]
    assert "value: nvidia.com/device-plugin.config=a100,nvidia.com/mig.config=a100" in join
    assert "kubectl label node \"$NODE\" nvidia.com/device-plugin.config=a100 nvidia.com/mig.config=a100" in tree["README.md"]


def test_k3s_pools_register_with_their_config_labels(tmp_path: Path) -> None:
    _, tree = render_file(Path(_spec_file(tmp_path, LABELLED_BY_RENDER["k3s-host-mig-and-sharing"])))
    readme = tree["README.md"]
    assert "agent --node-label nvidia.com/device-plugin.config=a100\n" in readme  # the host's mig-parted applies MIG
    assert "agent --node-label nvidia.com/device-plugin.config=l4\n" in readme


def _trees(tmp_path: Path) -> dict[str, dict[str, str]]:
    trees = {path.stem: render_file(path)[1] for path in EXAMPLES}
    for name, spec in {**VARIANTS, **LABELLED_BY_RENDER}.items():
        folder = tmp_path / name
        folder.mkdir()
        trees[name] = render_file(Path(_spec_file(folder, spec)))[1]
    return trees


def test_no_placeholder_leaks_into_any_rendered_file(tmp_path: Path) -> None:
    """``Label the nodes of pool `a100` (`its nodes`)`` was rendered into a README."""
    leaks = [
        f"{stack}/{path}:{number}: {line.strip()}"
        for stack, tree in _trees(tmp_path).items()
        for path, text in tree.items()
        for number, line in enumerate(text.splitlines(), start=1)
        if PLACEHOLDER.search(line)
    ]
    assert not leaks, "\n".join(leaks[:20])
