"""GS001: selecting GPU nodes by NFD's PCI class 0300 (VGA).

NFD names PCI labels ``pci-<class>_<vendor>.present``. GeForce cards are VGA controllers
(0300), datacenter GPUs (L4, A100, H100) are 3D controllers (0302): a selector copied from a
desktop never matches them, and EC2's virtual VGA device (vendor 1d0f) makes a bare
``pci-0300.present`` true on every instance.

Where the set says the GPU nodes are GeForce (or workstation) cards, VGA controllers all,
``pci-0300_10de.present`` is right and the rule stays quiet: the pod (or another pod of the set)
requires a GFD ``nvidia.com/gpu.product`` naming such a card, or every pool of the spec has one.
A bare ``pci-0300.present`` stays wrong there too: a board's own VGA (a BMC, an iGPU) carries it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts.node_labels import set_label_values
from gpustack.lint.facts.podspec import LabelTest, label_value, node_label_tests, subject
from gpustack.lint.model import DeleteKey, Edit, Hit, PodSpec, RenameKey, SetValue, Severity
from gpustack.lint.registry import Rule

NFD = "feature.node.kubernetes.io/"
VGA_GPU_LABELS = frozenset({f"{NFD}pci-0300_10de.present", f"{NFD}pci-0300.present"})
# A required term on one of these, OR'd with the 0300 term, also admits datacenter GPUs.
_DATACENTER_PREFIXES = (f"{NFD}pci-0302", f"{NFD}pci-10de.", "nvidia.com/gpu.")
FIX = (
    "Select GPU nodes by a label every NVIDIA GPU gets: node affinity with two "
    "nodeSelectorTerms, `feature.node.kubernetes.io/pci-0300_10de.present` OR "
    "`feature.node.kubernetes.io/pci-0302_10de.present`, or `feature.node.kubernetes.io/"
    "pci-10de.present` when NFD runs with `deviceLabelFields: [vendor]` (as gpustack's and "
    "NVIDIA's charts configure it); `nvidia.com/gpu.product` (GFD) selects a model."
)
PRODUCT = "nvidia.com/gpu.product"
# GFD products of VGA-class cards (display outputs): GeForce, TITAN, Quadro, RTX Axxxx.
VGA_PRODUCT = re.compile(r"GeForce|TITAN|Quadro|RTX-A\d{4}", re.IGNORECASE)
# A GeForce or workstation model as users write it in their own node labels: rtx-3090, RTX4090, gtx1080.
CONSUMER_MODEL = re.compile(r"(?<![a-z0-9])(?:rtx|gtx)[-_ ]?\d{4}(?![0-9])", re.IGNORECASE)


def _is_vga_test(test: LabelTest) -> bool:
    if not test.required or test.key not in VGA_GPU_LABELS:
        return False
    return test.operator == "Exists" or (test.operator == "In" and "true" in test.values)


def _product_edits(pod: PodSpec, test: LabelTest, tests: list[LabelTest], ctx: LintContext) -> tuple[Edit, ...]:
    """Select the spec's GPU products instead, where GFD labels the nodes (autofix
    only with a spec). A nodeSelector holds one value, so it needs a single product."""
    cluster = ctx.cluster
    if cluster is None or not cluster.gfd or not cluster.pools:
        return ()
    products = sorted({pool.gpu.product for pool in cluster.pools})
    if test.term is None:  # a nodeSelector entry
        if PRODUCT in pod.spec["nodeSelector"]:
            return (DeleteKey(test.path),)  # the product already selects the nodes
        return (RenameKey(test.path, PRODUCT), SetValue(test.path, products[0])) if len(products) == 1 else ()
    if any(other.key == PRODUCT and other.term == test.term for other in tests):
        return ()
    expression = test.path[:-1]
    return (
        SetValue((*expression, "key"), PRODUCT),
        SetValue((*expression, "operator"), "In"),
        SetValue((*expression, "values"), products),
    )


def _requires_vga_product(tests: list[LabelTest]) -> bool:
    """Whether a pod requires a GFD ``nvidia.com/gpu.product`` that only VGA-class cards have."""
    return any(
        test.required and test.key == PRODUCT and test.operator == "In" and test.values
        and all(VGA_PRODUCT.search(value) for value in test.values)
        for test in tests
    )


def _geforce_evidence(tests: list[LabelTest], ctx: LintContext) -> bool:
    """Whether the pod, the spec or another pod of the set says the GPU nodes are VGA-class cards."""
    if _requires_vga_product(tests):
        return True
    return ctx.set_fact(_vga_nodes)


def _vga_nodes(ctx: LintContext) -> bool:
    """Whether the spec's GPUs, another pod of the set, or the node labels the set applies (a
    ``gpu-class: rtx-3090``) say the GPU nodes hold VGA-class cards."""
    if ctx.cluster is not None and ctx.cluster.pools:
        return all(pool.gpu.pci_class == "0300" for pool in ctx.cluster.pools)
    return any(_requires_vga(pod) for pod in ctx.pod_specs) or any(
        VGA_PRODUCT.search(value) or CONSUMER_MODEL.search(value) for value in set_label_values(ctx))


def _requires_vga(pod: PodSpec) -> bool:
    """``_requires_vga_product`` of the pod's label tests, read from its node selector alone
    where it has no affinity: the test runs on every pod of a large set."""
    if "affinity" in pod.spec:
        return _requires_vga_product(list(node_label_tests(pod)))
    selector = pod.spec.get("nodeSelector")
    return isinstance(selector, Mapping) and PRODUCT in selector and bool(VGA_PRODUCT.search(label_value(selector[PRODUCT])))


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    tests = list(node_label_tests(pod))
    datacenter_terms = {
        t.term for t in tests if t.term is not None and t.selects and t.key.startswith(_DATACENTER_PREFIXES)
    }
    # A term that asks for no VGA label (NotIn, DoesNotExist, or other labels only) admits them too.
    vga_terms = {t.term for t in tests if _is_vga_test(t)}
    datacenter_terms |= {t.term for t in tests if t.required and t.term is not None and t.term not in vga_terms}
    for test in filter(_is_vga_test, tests):
        if test.term is not None and datacenter_terms - {test.term}:
            continue  # OR'd with a nodeSelectorTerm that datacenter GPUs satisfy
        if test.key.endswith("pci-0300.present"):
            why = "any VGA device matches it, EC2's virtual VGA (vendor 1d0f) included"
        elif _geforce_evidence(tests, ctx):
            continue  # GeForce nodes: their cards are VGA controllers
        else:
            why = (
                "datacenter GPUs (L4, A100, H100) are PCI class 0302 and never carry it; it fits only GeForce and "
                "workstation cards (VGA controllers)"
            )
        yield Hit(
            pod.resource,
            test.path,
            f"{subject(pod)} selects GPU nodes by {test.key}: {why}",
            # Without a spec the GPUs of the cluster are unknown.
            severity=Severity.WARNING if ctx.cluster is None else None,
            fix=FIX,
            edits=_product_edits(pod, test, tests, ctx),
        )


RULE = Rule("GS001", "pod", check, set_fact=_vga_nodes)
