"""Every agent of one node, in the order their outputs feed each other: NFD's labels select the
GPU Operator's nodes and the device plugin's; the operator's driver and toolkit come before its
plugin; GFD's feature file reaches the labels through NFD in the next round."""

from __future__ import annotations

from tests.cluster.agents import device_plugin, dra, hami, nfd, operator
from tests.cluster.agents.world import Published, World

AGENTS = (nfd.publish, operator.publish, device_plugin.publish, hami.publish, dra.publish)


def publish(world: World) -> Published:
    out = Published()
    for agent in AGENTS:
        if agent is not nfd.publish:
            world.driver_loaded = world.node.host.driver or out.driver
        try:
            agent(world, out)
        except Exception as error:  # noqa: BLE001 - an agent's config error is its pod's failure, found there
            out.problems.append(f"{agent.__module__}: {error}")
    return out
