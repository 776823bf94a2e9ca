"""GS058: the GPU stack's own control and metrics Services published on every node's port.

A Service of type NodePort opens its port on every node's address, LoadBalancer on an external
address as well (https://kubernetes.io/docs/concepts/services-networking/service/#type-nodeport).
The GPU stack's endpoints behind them answer anyone who reaches a node, unauthenticated:

- HAMi's chart publishes its scheduler's Service (the scheduler extender and the admission
  webhook on 443, the scheduler's metrics) as NodePorts 31998 and 31993, and the device
  plugin's vGPU monitor (every container's vGPU memory and cores) as 31992: ``type`` defaults to
  NodePort in templates/scheduler/service.yaml and templates/device-plugin/monitorservice.yaml,
  from 2.6 through ``scheduler.service.type`` / ``devicePlugin.service.type``, before 2.6
  written into the templates; from 2.8 ``dra.enabled`` renders neither
  (https://github.com/Project-HAMi/HAMi/tree/master/charts/hami).
  No client needs them there: kube-scheduler reaches the extender in its own pod
  (templates/scheduler/configmap.yaml: ``urlPrefix: https://127.0.0.1:443``), the API server
  the webhook through the Service (templates/scheduler/webhook.yaml: ``clientConfig.service``),
  Prometheus the monitor through the Service's endpoints.
- DCGM exporter serves every GPU's metrics, with the namespace and pod of each GPU's user, on
  plain HTTP unless its web config asks for basic auth
  (https://github.com/NVIDIA/dcgm-exporter/tree/main/deployment: ``service.type: ClusterIP``,
  ``basicAuth.users``); the GPU Operator's ``dcgmExporter.service.type`` is ClusterIP too
  (https://github.com/NVIDIA/gpu-operator/blob/main/api/nvidia/v1/clusterpolicy_types.go:
  ``DCGMExporterServiceConfig``).

The rule reads releases of these charts (their values over the chart's default ``type``), the
ClusterPolicy, and the set's Services of type NodePort or LoadBalancer whose selector picks
the pods of a GPU system component in the set (``data/system-components.yaml``). Quiet for an
exporter with a web config (basic auth or TLS), and for files a Kustomization leaves out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from gpustack.lint.charts import chartversions
from gpustack.lint.context import LintContext
from gpustack.lint.facts import components, podspec, registered
from gpustack.lint.facts.clusterpolicy import cluster_policies
from gpustack.lint.facts.labelselectors import selector_matches
from gpustack.lint.model import Hit, Path, PodSpec, Resource, get_value, nonempty_text, scalar_text
from gpustack.lint.registry import Rule
from gpustack.lint.releases import deployed, dispatch
from gpustack.lint.releases.release import HelmChartRelease

PUBLISHED = ("NodePort", "LoadBalancer")
CLUSTER_IP = "ClusterIP"
FIREWALL = "a firewall outside the set may close it"
# The exporters read a web config (TLS, basic auth) from this variable or flag: dcgm-exporter
# (https://github.com/NVIDIA/dcgm-exporter/tree/main/deployment: templates/daemonset.yaml,
# ``--web-config-file``), nvidia_gpu_exporter through Prometheus' exporter-toolkit
# (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md).
WEB_CONFIG_ENV = "DCGM_EXPORTER_WEB_CONFIG_FILE"
WEB_CONFIG_FLAGS = ("--web-config-file", "--web.config.file")
# Components whose Services serve unauthenticated control or metrics endpoints. Node Feature
# Discovery's master is left out: it is no GPU component, and its gRPC can ask for mutual TLS.
SERVED = frozenset({"hami", "dcgm-exporter", "nvidia-gpu-exporter", "device-plugin", "gke-device-plugin", "gpu-operator",
                    "dra-kubelet-plugin"})


@dataclass(frozen=True)
class ChartService:
    """A Service a chart renders from its values: where its type is set and what it serves."""

    role: str  # the chart's role in specs/charts.yaml
    type_key: tuple[str, ...]
    default: str  # the type when the values leave it unset
    serves: str
    ports: tuple[tuple[tuple[str, ...], int], ...] = ()  # node port keys and their defaults (type NodePort)
    absent: tuple[tuple[tuple[str, ...], bool], ...] = ()  # the chart renders no Service where a key holds this
    auth: tuple[str, ...] | None = None  # a non-empty value here asks the endpoint for credentials


CHART_SERVICES = (
    ChartService(
        "gpu-sharing", ("scheduler", "service", "type"), "NodePort",
        "HAMi's scheduler extender and admission webhook, and the scheduler's metrics",
        ((("scheduler", "service", "schedulerPort"), 31998), (("scheduler", "service", "monitorPort"), 31993)),
        absent=((("dra", "enabled"), True),),
    ),
    ChartService(
        "gpu-sharing", ("devicePlugin", "service", "type"), "NodePort",
        "HAMi's vGPU monitor (every container's GPU memory and cores)",
        ((("devicePlugin", "service", "httpPort"), 31992),),
        absent=((("devicePlugin", "enabled"), False), (("dra", "enabled"), True)),
    ),
    ChartService(
        "metrics-exporter", ("service", "type"), CLUSTER_IP, "DCGM exporter's GPU metrics (with each GPU's pod)",
        absent=((("service", "enable"), False),), auth=("basicAuth", "users"),
    ),
    ChartService(
        "gpu-operator", ("dcgmExporter", "service", "type"), CLUSTER_IP,
        "DCGM exporter's GPU metrics (with each GPU's pod)", absent=((("dcgmExporter", "enabled"), False),),
    ),
)
POLICY_TYPE = ("spec", "dcgmExporter", "service", "type")
# Pod labels a component sets on its own pods at run time, so no template carries them: HAMi's
# scheduler Service (chart 2.6 on) selects ``hami.io/scheduler-role: leader``, which the elected
# scheduler writes on its pod (https://github.com/Project-HAMi/HAMi/blob/master/pkg/util/types.go:
# HAMiRoleLabel).
RUNTIME_LABELS = frozenset({"hami.io/scheduler-role"})


def _published(ctx: LintContext) -> Iterator[Hit]:
    """Every GPU Service the set publishes on node ports: chart values, ClusterPolicy, Services."""
    for release in dispatch.releases(ctx):
        yield from _release_hits(ctx, release)
    for policy in cluster_policies(ctx):
        kind = policy.get(POLICY_TYPE)
        if kind in PUBLISHED and policy.get(("spec", "dcgmExporter", "enabled")) is not False:
            yield Hit(
                policy, POLICY_TYPE,
                f"ClusterPolicy {policy.ref.name} publishes DCGM exporter's GPU metrics (with each GPU's pod) as a "
                f"{kind} Service, {_exposed(kind, 'a node port')} ({FIREWALL})",
                fix=f"Set `dcgmExporter.service.type: {CLUSTER_IP}`; Prometheus scrapes the Service's endpoints.",
            )
    services = ctx.of_kind("Service")
    if services:
        open_pods = _open_gpu_pods(ctx)
        for service in services:
            yield from _service_hit(service, open_pods)


class _Published(NamedTuple):
    """A Service a release's values publish: where the type is decided, what the message says,
    the values key to set, and the first chart version that reads it (where this one does not)."""

    resource: Resource
    path: Path
    text: str
    key: str
    upgrade_to: str | None


def _release_hits(ctx: LintContext, release: HelmChartRelease) -> Iterator[Hit]:
    """One hit per place in the release's values: HAMi's two Services at the chart's defaults
    are one finding at its chart reference."""
    found: dict[tuple[int, Path], list[_Published]] = {}
    for service in CHART_SERVICES:
        if release.chart in registered.names_of_roles(service.role):
            item = _release_service(ctx, release, service)
            if item is not None:
                found.setdefault((id(item.resource), item.path), []).append(item)
    for items in found.values():
        upgrade = next((item.upgrade_to for item in items if item.upgrade_to), None)
        settings = " and ".join(f"`{item.key}: {CLUSTER_IP}`" for item in items)
        yield Hit(
            items[0].resource, items[0].path,
            f"{release} publishes " + "; and ".join(item.text for item in items) + f" ({FIREWALL})",
            fix=(f"Upgrade to chart {upgrade} or later, which reads the type, and set " if upgrade else "Set ")
            + f"{settings}. In-cluster clients reach it through the Service; read it with `kubectl port-forward`.",
        )


def _release_service(ctx: LintContext, release: HelmChartRelease, service: ChartService) -> _Published | None:
    """How the release publishes ``service`` on node ports; None where it does not."""
    values = release.values
    if any(get_value(values, *key) is value for key, value in service.absent):
        return None
    if service.auth is not None and get_value(values, *service.auth):
        return None
    keys = chartversions.resolve(release.chart, release.version, ctx.chart_values).keys
    fixed = keys is not None and not keys.reads(service.type_key)  # the template writes the type itself
    written = None if fixed else nonempty_text(get_value(values, *service.type_key))
    kind = written or service.default
    if kind not in PUBLISHED:
        return None
    key = ".".join(service.type_key)
    upgrade_to = None
    if keys is not None and fixed:
        how = f"chart {keys.version} writes it into its template"
        upgrade_to = next(iter(keys.versions_reading(service.type_key)), None)
    else:
        how = f"`{key}: {kind}`" if written else "the chart's default"
    ports = [scalar_text(get_value(values, *k, default=default)) for k, default in service.ports if kind == "NodePort"]
    resource, path = release.where(*service.type_key)
    text = f"{service.serves} as a {kind} Service ({how}), {_exposed(kind, _node_ports(ports, 'a node port'))}"
    return _Published(resource, path, text, key, upgrade_to)


def _open_gpu_pods(ctx: LintContext) -> list[tuple[PodSpec, list[str]]]:
    """The set's pods of GPU components that serve without authentication, with the components'
    names: worked out once per set, then matched against each Service's selector."""
    found = []
    for pod in ctx.pod_specs:
        if not pod.system_component or _authenticated(pod):
            continue
        names = [c.summary for c in components.pod_components(pod) if c.name in SERVED]
        if names:
            found.append((pod, names))
    return found


def _service_hit(service: Resource, open_pods: list[tuple[PodSpec, list[str]]]) -> Iterator[Hit]:
    kind = service.get(("spec", "type"))
    selector = service.get(("spec", "selector"))
    if kind not in PUBLISHED or not isinstance(selector, Mapping) or not selector:
        return
    names = sorted({name for pod, pod_names in open_pods if _selects(service, selector, pod) for name in pod_names})
    if not names:
        return
    ports = [
        scalar_text(port["nodePort"])
        for port in service.get(("spec", "ports")) or ()
        if isinstance(port, Mapping) and "nodePort" in port
    ]
    where = _exposed(kind, _node_ports(ports, "a node port the API server picks"))
    yield Hit(
        service, ("spec", "type"),
        f"{service.ref} publishes the pods of {' and '.join(names)} as a {kind} Service, {where} ({FIREWALL})",
        fix=f"Set `type: {CLUSTER_IP}` (and drop `nodePort`); Prometheus scrapes its endpoints, people use "
        "`kubectl port-forward`.",
    )


def _node_ports(ports: list[str], unknown: str) -> str:
    if not ports:
        return unknown
    return f"node port {ports[0]}" if len(ports) == 1 else f"node ports {', '.join(ports[:-1])} and {ports[-1]}"


def _exposed(kind: str, where: str) -> str:
    """Who reaches the endpoint: every node's address, and a LoadBalancer's external one."""
    outside = "on the load balancer's address and " if kind == "LoadBalancer" else ""
    return f"unauthenticated {outside}on {where} of every node"


def _selects(service: Resource, selector: Mapping[str, Any], pod: PodSpec) -> bool:
    """Whether the Service's selector picks the pod: same namespace (either unset counts), every
    label, where a label the pod sets on itself at run time (``RUNTIME_LABELS``) counts as set."""
    theirs, ours = pod.resource.ref.namespace, service.ref.namespace
    if theirs and ours and theirs != ours:
        return False
    labels = pod.template_metadata.get("labels")
    if not isinstance(labels, Mapping):
        return False
    static = {key: value for key, value in selector.items() if key in labels or key not in RUNTIME_LABELS}
    return selector_matches({"matchLabels": static}, labels)


def _authenticated(pod: PodSpec) -> bool:
    """An exporter with a web config (basic auth or TLS): not taken for an open endpoint."""
    for container in pod.containers():
        envs = container.data.get("env")
        if isinstance(envs, list) and any(isinstance(env, Mapping) and env.get("name") == WEB_CONFIG_ENV for env in envs):
            return True
        if any(part.startswith(WEB_CONFIG_FLAGS) for _, part in podspec.command_parts(container)):
            return True
    return False


def check(ctx: LintContext) -> Iterator[Hit]:
    left_out = deployed.left_out(ctx)
    for hit in _published(ctx):
        if hit.resource.file not in left_out:
            yield hit


RULE = Rule("GS058", "set", check)
