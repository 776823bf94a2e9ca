"""``NodeRoot``: paths under --root, and files this user may not read."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from nodetree import NodeTree

from gpustack.errors import GpustackError
from gpustack.node import deviceplugin, layers
from gpustack.node.result import LayerResult, Status, problem
from gpustack.node.root import NodeRoot, Unreadable


def test_root_must_be_a_folder(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(GpustackError, match="not a folder"):
        NodeRoot.open(file)


def test_only_slash_is_live(tree: NodeTree) -> None:
    assert NodeRoot.open("/").is_live
    assert not tree.root.is_live


def test_node_paths_stay_under_the_root(tree: NodeTree) -> None:
    tree.file("/etc/cdi/a.yaml").file("/etc/cdi/b.json")
    assert tree.root.path("/etc/cdi") == tree.base.resolve() / "etc/cdi"
    assert tree.root.entries("/etc/cdi") == ["/etc/cdi/a.yaml", "/etc/cdi/b.json"]
    assert tree.root.entries("/nowhere") == []


def denied(*_: object, **__: object) -> None:
    raise PermissionError


@pytest.mark.parametrize(
    ("target", "name", "replacement", "read"),
    [
        (Path, "read_bytes", denied, lambda root: root.read_text("/proc/modules")),
        (Path, "exists", denied, lambda root: root.exists("/var/lib/kubelet/device-plugins")),
        (os, "access", lambda *_: False, lambda root: root.entries("/proc")),  # glob alone finds nothing
    ],
)
def test_permission_denied_is_unreadable(
    tree: NodeTree,
    monkeypatch: pytest.MonkeyPatch,
    target: object,
    name: str,
    replacement: Callable[..., object],
    read: Callable[[NodeRoot], object],
) -> None:
    tree.file("/proc/modules", "nvidia 1 0\n")
    monkeypatch.setattr(target, name, replacement)
    with pytest.raises(Unreadable, match="run as root to check this layer"):
        read(tree.root)


def test_an_unreadable_layer_is_not_checked_rather_than_broken(
    geforce_pc: NodeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(root: NodeRoot) -> LayerResult:
        raise Unreadable(root.path(deviceplugin.FOLDER))

    monkeypatch.setattr(deviceplugin, "check", unreadable)
    result = layers.run(geforce_pc.root)[-1]
    assert (result.layer, result.status) == ("device-plugin", Status.NA)
    assert "run as root to check this layer" in result.detail


def test_a_problem_must_say_what_to_do() -> None:
    with pytest.raises(ValueError, match="needs a fix"):
        problem("pci", "broken", fix="", docs="https://docs.nvidia.com/")
