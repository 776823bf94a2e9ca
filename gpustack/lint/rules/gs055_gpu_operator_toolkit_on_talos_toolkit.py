"""GS055: the GPU Operator's toolkit container on Talos nodes whose extension already is the toolkit.

Up to Talos v1.13 the ``nvidia-container-toolkit`` system extension carries the NVIDIA Container
Toolkit and registers the ``nvidia`` containerd runtime itself (``facts.talos``). NVIDIA's
operator takes a pre-installed toolkit as ``toolkit.enabled: false``; its own toolkit container,
on by default, would install a second one into the host and rewrite containerd's configuration,
which Talos's read-only root and generated containerd config do not allow, and the operands that
wait for it never start. Stated only where the set names both: the extension (a schematic,
``machine.install.extensions`` or talhelper's schematics) and a release up to v1.13 (the
installer image's tag or talhelper's ``talosVersion``); from v1.15 the extension no longer holds
the toolkit and the operator's is the one to run. A script's host install of the toolkit
(assumed to prepare the GPU nodes) is a warning; one in a script that creates a kind, k3d or
minikube cluster describes that cluster only, and is paired with its own helm commands alone.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import hostdriver, hostscripts, operands, talos
from gpustack.lint.model import Hit, Resource, Severity
from gpustack.lint.registry import Rule


def check(ctx: LintContext) -> Iterator[Hit]:
    found = hostdriver.host_stack(ctx)
    extensions = [evidence for evidence in found.toolkit if not evidence.assumed]
    scripts = [evidence for evidence in found.toolkit if evidence.assumed]
    releases = [release for _, release in found.releases]
    if extensions and releases and max(releases) <= talos.TOOLKIT_IN_EXTENSION_UNTIL:
        evidence = f"{extensions[0]} on Talos v{'.'.join(map(str, max(releases)))}, per {found.releases[0][0]}"
        for place in operands.operator_deploys(ctx, "container-toolkit"):
            yield place.hit(
                f"the nodes already have the NVIDIA Container Toolkit: {evidence}",
                fix="Set `toolkit.enabled: false` (and `driver.enabled: false`): the Talos extensions bring both.",
            )
    elif scripts and not releases:
        for place in operands.operator_deploys(ctx, "container-toolkit"):
            evidence = [found for found in scripts if _same_cluster(found.resource, place.resource)]
            if not evidence:
                continue
            yield place.hit(
                f"{evidence[0]}: the operator installs a second toolkit and rewrites the container runtime's config "
                "over the host's (assumed: the script prepares the GPU nodes)",
                fix="Set `toolkit.enabled: false`: NVIDIA's guide for a pre-installed toolkit.",
                severity=Severity.WARNING,
            )


def _same_cluster(script: Resource, release: Resource) -> bool:
    """Whether a script's host install describes the nodes a release deploys to: not where the
    script creates a cluster of containers on its own machine (kind, k3d, minikube) and the
    release is another file's, which a repository keeps for its real cluster."""
    return script.file == release.file or not hostscripts.creates_local_cluster(script)


RULE = Rule("GS055", "set", check)
