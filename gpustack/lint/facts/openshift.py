"""What in a set says it runs on OpenShift (or OKD), where CRI-O, not containerd, runs the pods.

Without ``--distribution openshift``, the set may say so itself:

- an object of an API group that only OpenShift (OKD, MicroShift) serves (``API_GROUPS``:
  ``route.openshift.io`` Routes, ``security.openshift.io`` SecurityContextConstraints,
  ``config.openshift.io`` cluster config, ``machine.openshift.io`` MachineSets,
  ``image.openshift.io`` ImageStreams, ``build.openshift.io`` BuildConfigs…;
  https://docs.redhat.com/en/documentation/openshift_container_platform/4.14/html/api_overview/api-index).
  Not every ``*.openshift.io`` group: operators born on OpenShift run on any cluster under their
  old group (the SR-IOV Network Operator's ``sriovnetwork.openshift.io``);
- an OLM ``Subscription`` from a catalog in ``openshift-marketplace``, the namespace of
  OpenShift's OperatorHub catalogs (``certified-operators`` holds the GPU Operator,
  https://docs.nvidia.com/datacenter/cloud-native/openshift/latest/index.html);
- a GPU Operator chart release with ``platform.openshift: true``;
- an object the OpenShift web console wrote (``openshift.io/generated-by: OpenShiftWebConsole``,
  an annotation only that console sets).

Each is plain evidence (an object and the field that says it); GS004 reads it through
``runtimeevidence``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpustack.lint.facts import registered
from gpustack.lint.model import Path, Resource, get_value
from gpustack.lint.releases import dispatch

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

# The platform's own API groups (the API index above), served by its API server and operators.
API_GROUPS = frozenset({
    "apps.openshift.io", "authorization.openshift.io", "build.openshift.io", "config.openshift.io",
    "console.openshift.io", "image.openshift.io", "imageregistry.operator.openshift.io", "machine.openshift.io",
    "machineconfiguration.openshift.io", "oauth.openshift.io", "operator.openshift.io", "project.openshift.io",
    "quota.openshift.io", "route.openshift.io", "samples.operator.openshift.io", "security.openshift.io",
    "template.openshift.io", "user.openshift.io",
})
MARKETPLACE = "openshift-marketplace"
GENERATED_BY = "openshift.io/generated-by"  # the web console's annotation on what it creates


def evidence(ctx: LintContext) -> Iterator[tuple[Resource, Path, str]]:
    """Each place in the set that says OpenShift, with what it says (for messages)."""
    for resource in ctx.resources:
        group = (resource.api_version or "").rpartition("/")[0]
        if resource.kind and group in API_GROUPS:
            yield resource, ("apiVersion",), f"{resource.kind} {resource.ref.name} is an OpenShift API ({group})"
        elif (resource.kind == "Subscription" and group == "operators.coreos.com"
              and resource.get(("spec", "sourceNamespace")) == MARKETPLACE):
            yield resource, ("spec", "sourceNamespace"), f"Subscription {resource.ref.name} installs from OpenShift's {MARKETPLACE}"
        elif resource.kind and resource.get(("metadata", "annotations", GENERATED_BY)) == "OpenShiftWebConsole":
            yield resource, ("metadata", "annotations", GENERATED_BY), f"{resource.ref} was created in OpenShift's web console"
    for release in dispatch.releases(ctx):
        if release.chart == registered.chart_of_role("gpu-operator") and get_value(release.values, "platform", "openshift") is True:
            resource, path = release.where("platform", "openshift")
            yield resource, path, f"{release} sets platform.openshift: true"
