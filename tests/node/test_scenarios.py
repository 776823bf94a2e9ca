"""The four example nodes, every layer at once: which layer ``gpustack doctor`` blames."""

from __future__ import annotations

import pytest

from gpustack.node import layers

OK, PROBLEM, NA = "ok", "problem", "n/a"
LAYER_NAMES = [layer.LAYER for layer in layers.LAYERS]

EXPECTED = {
    "geforce_pc": dict.fromkeys(LAYER_NAMES, OK) | {"nvml": NA, "fabric-manager": NA, "cdi": NA},
    "l4_vm": dict.fromkeys(LAYER_NAMES, OK) | {"nvml": NA, "fabric-manager": NA},
    "nouveau_node": {
        "pci": OK,
        "secure-boot": OK,
        "nouveau": PROBLEM,
        "driver": PROBLEM,
        "device-nodes": PROBLEM,
        "nvml": NA,
        "fabric-manager": NA,
        "toolkit": PROBLEM,
        "cdi": NA,
        "containerd": PROBLEM,
        "device-plugin": PROBLEM,
    },
    "k3s_without_nvidia": dict.fromkeys(LAYER_NAMES, OK)
    | {"secure-boot": NA, "nvml": NA, "fabric-manager": NA, "toolkit": PROBLEM, "cdi": NA, "containerd": PROBLEM, "device-plugin": PROBLEM},
}


@pytest.mark.parametrize("node", EXPECTED)
def test_every_layer_of_each_seed_node(node: str, request: pytest.FixtureRequest) -> None:
    results = layers.run(request.getfixturevalue(node).root)
    assert {r.layer: r.status.value for r in results} == EXPECTED[node]
    assert layers.healthy(results) == (PROBLEM not in EXPECTED[node].values())


def test_layers_are_walked_in_the_order_a_gpu_comes_up() -> None:
    assert LAYER_NAMES == [
        "pci",
        "secure-boot",
        "nouveau",
        "driver",
        "device-nodes",
        "nvml",
        "fabric-manager",
        "toolkit",
        "cdi",
        "containerd",
        "device-plugin",
    ]


@pytest.mark.parametrize("node", EXPECTED)
def test_every_problem_says_what_to_do_and_links_its_upstream_docs(node: str, request: pytest.FixtureRequest) -> None:
    for result in layers.run(request.getfixturevalue(node).root):
        if result.status.value == PROBLEM:
            assert result.fix and result.docs and result.docs.startswith("https://")
