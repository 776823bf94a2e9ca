"""GS009 reports each pair of device plugins once, whichever order the files come in."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.engine import lint
from gpustack.lint.input.load import LoadResult, load_text
from gpustack.lint.policy.config import Config

# NVIDIA's static DaemonSet (nvidia-device-plugin.yml of NVIDIA/k8s-device-plugin), three
# times under three names: three pairs.
PLUGIN = Path(__file__).parent / "fixtures" / "GS009" / "fires-two-plugin-daemonsets.yaml"


def gs009(files: list[tuple[str, str]]) -> list[tuple[str, str]]:
    report = lint(LoadResult.merge(load_text(name, text) for name, text in files), Config())
    return sorted((f.file, f.message.split(" both ")[0]) for f in report.findings if f.rule == "GS009")


def daemonset(name: str) -> str:
    first = PLUGIN.read_text(encoding="utf-8").split("---")[0]
    return first.replace("name: nvidia-device-plugin-daemonset,", f"name: {name},")


def test_each_pair_once() -> None:
    files = [("a.yaml", daemonset("a")), ("b.yaml", daemonset("b")), ("c.yaml", daemonset("c"))]
    found = gs009(files)
    assert [file for file, _ in found] == ["a.yaml", "a.yaml", "b.yaml"]  # a-b, a-c, b-c
    assert gs009(files[::-1]) == found
