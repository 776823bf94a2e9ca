"""GS045: a DeviceClass of NVIDIA's DRA driver whose selectors admit whole GPUs and MIG devices alike.

A claim for such a class meant a whole GPU (a class of whole GPUs that forgot ``type``) or a
MIG slice, never "either": the scheduler then hands out whichever is free, so a training pod
gets a 1g.10gb slice, or a MIG class takes a whole GPU. NVIDIA's own classes select
``type == 'gpu'`` (``gpu.nvidia.com``) and ``type == 'mig'`` (``mig.nvidia.com``). Judged by
evaluating the selectors on a whole GPU they mean and on a MIG device of it
(``facts.dradevices``): the rule fires when both are admitted.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import dradevices
from gpustack.lint.model import Hit, Resource
from gpustack.lint.registry import Rule


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    selectors = resource.get(("spec", "selectors"))
    if not isinstance(selectors, list):
        return
    expressions = [
        str(s["cel"]["expression"])
        for s in selectors
        if isinstance(s, dict) and isinstance(s.get("cel"), dict) and "expression" in s["cel"]
    ]
    if not any(dradevices.DRIVER in expression for expression in expressions):
        return
    gpu, mig = dradevices.witnesses(expressions)
    if dradevices.admits(expressions, gpu) and dradevices.admits(expressions, mig):
        product = gpu["attributes"][dradevices.DRIVER]["productName"]
        yield Hit(
            resource,
            ("spec", "selectors"),
            f"{resource.ref} admits a whole {product} and a MIG device of it alike (a MIG device "
            "publishes its parent's productName, architecture and versions; only `type` and `profile` differ): a "
            "claim for a whole GPU may get a MIG slice, or a MIG claim a whole GPU",
            fix=f"Add `device.attributes['{dradevices.DRIVER}'].type == 'gpu'` for whole GPUs, or `type == 'mig'` "
            "with a `profile` for MIG devices, as the driver's own classes gpu.nvidia.com and mig.nvidia.com do.",
        )


RULE = Rule("GS045", "object", check, kinds=frozenset({"DeviceClass"}))
