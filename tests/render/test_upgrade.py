"""Upgrade steps: a render into a folder rendered before with other versions lists, in the stack
README, the ordered steps from those versions (stackfiles/upgrade.py), and keeps them in
versions.yaml until the next upgrade."""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.render import app
from gpustack.render.stackfiles import upgrade, versions
from tests.render.render_helpers import REPO, Result, cli

HGX = REPO / "examples" / "kubeadm-hgx-h100.yaml"


def headings(readme: str) -> list[str]:
    return re.findall(r"^### Upgrade \d+\. (.+)$", readme, flags=re.M)


def tree_after(result: Result, earlier: dict[str, Any]) -> dict[str, str]:
    rendered, _ = result
    return app.tree(replace(rendered, ctx=replace(rendered.ctx, earlier_versions=earlier)))


def record(files: dict[str, str]) -> dict[str, Any]:
    return yaml.safe_load(files[versions.PATH])


@pytest.fixture(scope="module")
def hgx(examples: dict[str, Result]) -> Result:
    return examples["kubeadm-hgx-h100"]


def test_first_render_has_no_upgrade_steps(hgx: Result) -> None:
    _, files = hgx
    assert upgrade.HEADING not in files["README.md"]
    assert "previous" not in record(files)
    assert f"- `{versions.PATH}`" in files["README.md"]


def test_kubernetes_and_driver_upgrade_in_upstream_order(hgx: Result) -> None:
    earlier = copy.deepcopy(record(hgx[1]))
    earlier["kubernetes"], earlier["release"] = "1.35", "v1.35.4"
    earlier["pools"]["hgx"]["driver"]["version"] = "580.95"
    files = tree_after(hgx, earlier)
    assert headings(files["README.md"]) == [
        "Back up etcd",
        "Control plane v1.35.4 → v1.36.3",
        "Control-plane kubelets v1.35.4 → v1.36.3",
        "Worker kubelets v1.35.4 → v1.36.3",
        "GPU driver 595.84, with the kernel",
    ]
    section = files["README.md"].split(upgrade.HEADING)[1].split("## Apply order")[0]
    assert "pkgs.k8s.io/core:/stable:/v1.36/deb/" in section and "sudo kubeadm upgrade apply v1.36.3" in section
    assert "pool `hgx`, a node at a time" in section  # h100-mig kept its driver
    lock, upgrade_all = section.index("nvidia-driver-pinning-595.84"), section.index("sudo apt-get dist-upgrade -y")
    assert lock < upgrade_all < section.index("sudo reboot")
    assert section.count(upgrade.DRAIN) == 3
    assert record(files)["previous"] == earlier


def test_chart_upgrade_applies_crds_first_with_helm(hgx: Result) -> None:
    earlier = copy.deepcopy(record(hgx[1]))
    earlier["charts"]["kube-prometheus-stack"] = "kube-prometheus-stack@85.4.0"
    readme = tree_after(hgx, earlier)["README.md"]
    assert headings(readme) == ["Back up etcd", "Charts"]
    crds = readme.index("helm show crds kube-prometheus-stack --repo")
    assert crds < readme.index("# kube-prometheus-stack: kube-prometheus-stack@85.4.0 → kube-prometheus-stack@88.5.3")
    assert "helm show crds gpu-operator" not in readme  # unchanged


def test_flux_upgrades_crds_itself(examples: dict[str, Result]) -> None:
    flux = examples["talos-flux"]
    earlier = copy.deepcopy(record(flux[1]))
    name = next(iter(earlier["charts"]))
    earlier["charts"][name] = earlier["charts"][name].rsplit("@", 1)[0] + "@0.0.1"
    readme = tree_after(flux, earlier)["README.md"]
    assert "Charts" in headings(readme) and "helm show crds" not in readme
    assert "Commit this folder: Flux upgrades" in readme
    assert "talosctl -n \"$NODE\" etcd snapshot" in readme


def test_talos_release_upgrade_takes_the_schematic_installer(examples: dict[str, Result]) -> None:
    flux = examples["talos-flux"]
    earlier = copy.deepcopy(record(flux[1]))
    earlier["release"] = "v1.12.0"
    readme = tree_after(flux, earlier)["README.md"]
    assert headings(readme)[1].startswith("Talos v1.12.0 → ")
    assert 'upgrade --image "factory.talos.dev/' in readme


def test_unchanged_versions_carry_the_previous_ones(hgx: Result) -> None:
    earlier = copy.deepcopy(record(hgx[1]))
    earlier["pools"]["hgx"]["driver"]["version"] = "580.95"
    once = tree_after(hgx, earlier)
    again = tree_after(hgx, record(once))  # a re-render mid-upgrade
    assert again["README.md"] == once["README.md"] and again[versions.PATH] == once[versions.PATH]


@pytest.mark.parametrize(("old", "message"), [("1.34", "skips a minor release"), ("1.37", "not downgraded")])
def test_refused_kubernetes_jumps(hgx: Result, old: str, message: str) -> None:
    earlier = copy.deepcopy(record(hgx[1]))
    earlier["kubernetes"] = old
    with pytest.raises(Exception, match=message):
        tree_after(hgx, earlier)


def test_render_twice_into_one_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI reads the folder's record before replacing it; a refused downgrade leaves it untouched."""
    out = tmp_path / "stack"
    old = tmp_path / "old.yaml"
    old.write_text(HGX.read_text().replace('version: "595.84"', 'version: "580.95"', 1))
    assert cli(capsys, "render", str(old), "-o", str(out))[0] == 0
    assert upgrade.HEADING not in (out / "README.md").read_text()
    assert cli(capsys, "render", str(HGX), "-o", str(out))[0] == 0
    assert headings((out / "README.md").read_text())[-1] == "GPU driver 595.84, with the kernel"
    assert cli(capsys, "render", str(HGX), "--check", "-o", str(out))[0] == 0
    before = (out / "README.md").read_text()
    older = tmp_path / "older.yaml"
    older.write_text(HGX.read_text().replace('"1.36"', '"1.35"').replace("v1.36.3", "v1.35.4"))
    code, _, err = cli(capsys, "render", str(older), "-o", str(out))
    assert code == 2 and "not downgraded" in err
    assert (out / "README.md").read_text() == before


def test_pod_network_upgrade_reruns_its_helm_command(hgx: Result) -> None:
    earlier = copy.deepcopy(record(hgx[1]))
    assert earlier["cni"].startswith("cilium@")
    earlier["cni"] = "cilium@1.19.4"
    readme = tree_after(hgx, earlier)["README.md"]
    assert headings(readme) == ["Back up etcd", f"Pod network cilium@1.19.4 → {record(hgx[1])['cni']}"]
    assert "helm upgrade --install cilium cilium --repo" in readme.split(upgrade.HEADING)[1]


def test_a_record_without_the_pod_network_is_still_read(hgx: Result, tmp_path: Path) -> None:
    earlier = copy.deepcopy(record(hgx[1]))
    del earlier["cni"]
    (tmp_path / versions.PATH).write_text(yaml.safe_dump(earlier))
    assert versions.read(tmp_path) == earlier
    (tmp_path / versions.PATH).write_text(yaml.safe_dump({"kubernetes": "1.36"}))
    assert versions.read(tmp_path) is None  # not a record: no upgrade steps from it


def test_a_new_pod_network_is_a_migration_not_an_install(hgx: Result) -> None:
    """A record from before the stack installed Cilium (its pod network was Flannel)."""
    earlier = copy.deepcopy(record(hgx[1]))
    del earlier["cni"]
    section = tree_after(hgx, earlier)["README.md"].split(upgrade.HEADING)[1].split("## Apply order")[0]
    assert "k8s-install-migration" in section and "helm upgrade --install cilium" not in section


def test_fresh_forgets_the_versions_the_folder_held(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "stack"
    old = tmp_path / "old.yaml"
    old.write_text(HGX.read_text().replace('version: "595.84"', 'version: "580.95"', 1))
    assert cli(capsys, "render", str(old), "-o", str(out))[0] == 0
    assert cli(capsys, "render", str(HGX), "-o", str(out), "--fresh")[0] == 0
    assert upgrade.HEADING not in (out / "README.md").read_text()
    assert "previous" not in yaml.safe_load((out / versions.PATH).read_text())


def test_an_unpinned_kubeadm_upgrades_to_the_minors_newest_patch(render_spec: Any) -> None:
    """Without cluster.kubeadmVersion no pin and no "None": the minor's repository, unpinned
    packages, and the kubeadm just installed names the target."""
    result = render_spec(cluster={"distribution": "kubeadm", "kubernetesVersion": "1.36"})
    earlier = copy.deepcopy(record(result[1]))
    assert earlier["release"] is None
    earlier["kubernetes"] = "1.35"
    section = tree_after(result, earlier)["README.md"].split(upgrade.HEADING)[1].split("## Apply order")[0]
    assert "None" not in section and "Control plane 1.35 → 1.36" in section
    assert "pkgs.k8s.io/core:/stable:/v1.36/deb/" in section and "sudo apt-get install -y kubeadm" in section
    assert 'sudo kubeadm upgrade apply "$(kubeadm version -o short)"' in section
