"""cluster/k3s-auto-deploy.sh puts the whole stack where K3s auto-deploys it
(https://docs.k3s.io/installation/packaged-components): run against a folder standing in for
/var/lib/rancher/k3s/server/manifests."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from gpustack.render.components.gitops import K3S_MANIFESTS
from gpustack.render.stackfiles import k3s_autodeploy

RFC_1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def _run(tree: dict[str, str], tmp_path: Path) -> Path:
    stack, folder = tmp_path / "stack", tmp_path / "auto-deploy"
    for path, text in tree.items():
        (stack / path).parent.mkdir(parents=True, exist_ok=True)
        (stack / path).write_text(text.replace(f"folder={K3S_MANIFESTS}", f"folder={folder}"), encoding="utf-8")
    subprocess.run(["sh", str(stack / k3s_autodeploy.PATH)], check=True, cwd=tmp_path)
    return folder


def _refs(texts) -> list[tuple[str, str, str]]:
    return sorted(
        (doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"])
        for text in texts for doc in yaml.safe_load_all(text) if doc
    )


def test_every_object_of_the_stack_lands_in_the_folder(examples, tmp_path):
    rendered, tree = examples["hami-vllm"]
    folder = _run(tree, tmp_path)
    copied = sorted(folder.iterdir())
    assert all(RFC_1123.match(path.stem) for path in copied)
    wanted = [obj for path, obj in rendered.objects() if not path.startswith("argocd/")]
    assert _refs(path.read_text() for path in copied) == _refs([yaml.safe_dump_all(wanted)])


def test_only_where_k3s_delivers(examples):
    assert k3s_autodeploy.PATH in examples["k3s-l4"][1]
    # kubeadm, and a K3s stack that Argo CD delivers (k3sHelmCharts: false)
    assert k3s_autodeploy.PATH not in examples["kubeadm-host-driver"][1]
    assert k3s_autodeploy.PATH not in examples["dra-hami"][1]
