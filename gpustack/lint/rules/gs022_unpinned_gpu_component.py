"""GS022: a GPU stack image on ``latest`` or without a tag.

The device plugin, GFD, DCGM Exporter, HAMi and driver images must match the driver, the
toolkit and each other (pin them, e.g. device plugin v0.20.0, DCGM Exporter 4.6.0). A
floating tag changes the stack under a running cluster at the next pull or node replacement.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.components import component_for_image, is_placeholder_image
from gpustack.lint.facts.images import image_tag
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

FIX = "Pin the image to a release tag (e.g. `nvcr.io/nvidia/k8s-device-plugin:v0.20.0`) or a digest."


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not pod.system_component:
        return
    for container in pod.containers():
        image = container.image
        component = component_for_image(image)
        if component is None or is_placeholder_image(image) or "@" in image:
            continue
        tag = image_tag(image)
        if tag is not None and tag != "latest":
            continue
        state = "the floating tag latest" if tag else "no tag (latest)"
        yield Hit(
            pod.resource,
            (*container.path, "image"),
            f"{subject(pod, container)} runs {component.name} image {image} with {state}",
            fix=FIX,
        )


RULE = Rule("GS022", "pod", check)
