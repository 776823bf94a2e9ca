"""Shell scripts, setup notes and Terraform that set up the nodes' NVIDIA stack or the cluster,
read as one document each.

Clusters are often set up by a script kept beside the manifests (``scripts/setup-gpu-node.sh``)
or by commands a README gives. Where one of them makes nvidia the container runtime's default,
GPU pods start with their GPUs without ``runtimeClassName`` (GS004's evidence,
``facts/runtimeevidence``). Read, by name (``*.sh``, ``*.bash``, ``*.md``), only when a line
that is not a comment says so:

- ``nvidia-ctk runtime configure ... --set-as-default``
  (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html#configuring-containerd-for-kubernetes);
- containerd's ``default_runtime_name = "nvidia"`` (written by a heredoc or a ``sed``);
- Docker's ``"default-runtime": "nvidia"`` (``daemon.json``, for cri-dockerd) and K3s's or
  RKE2's ``default-runtime: nvidia``.

They also say where the host brings its own driver or toolkit (GS035, GS055: the GPU
Operator's containers would install them a second time,
https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html#pre-installed-nvidia-gpu-drivers):

- the driver from the distribution's or NVIDIA's packages (``apt-get install nvidia-driver-550``,
  ``cuda-drivers``, ``nvidia-open``, ``nvidia-headless-*``, ``nvidia-kernel-dkms``,
  ``dnf install kmod-nvidia``), ``ubuntu-drivers install``, or NVIDIA's ``.run`` installer;
- the toolkit from packages (``apt-get install nvidia-container-toolkit``).

And which managed cloud runs the cluster (``facts/managed``): ``eksctl create cluster``,
``gcloud container node-pools create``, ``az aks nodepool add``, and Terraform's (``*.tf``)
``aws_eks_*``, ``google_container_*`` and ``azurerm_kubernetes_cluster*`` resources or the
``terraform-aws-modules/eks/aws`` module.

GPU nodes a managed cloud creates with the NVIDIA driver in their image (GS035: the GPU
Operator's driver container would install a second one): an AKS GPU node pool whose file
nowhere skips AKS's driver install (``az aks nodepool add --node-vm-size Standard_NC…``,
Terraform's ``vm_size``), a GKE node pool with ``gpu-driver-version=default`` or ``latest``
(Terraform's ``gpu_driver_version``), an EKS node group on an accelerated AMI type
(``AL2023_x86_64_NVIDIA``). A command continued over lines with a trailing backslash is read as
one line.

And the GPU Operator, NVIDIA's device plugin or HAMi installed by hand (``helm install|upgrade``
of their charts, ``kubectl apply -f`` of NVIDIA's static device plugin manifest): GS053's
evidence that the set's GPU requests are advertised.

And the GPU node pools a managed cloud creates, with their taints (``input/cloudpools``: ``az aks
nodepool add``, ``gcloud container node-pools create``, Terraform's node pool resources), and the
helm installs of GPU charts with their values (``releases/commands``): ``helm install|upgrade``
commands, and Terraform's ``helm_release`` resources (``input/terraform``).

And the Talos release a script installs (an installer image ``factory.talos.dev/installer/<id>:v1.7.5``):
which CRI config table its containerd reads (GS004).

And a GPU size its cloud has retired, set as a value (``facts/retiredsizes``: ``--node-vm-size
Standard_NC6``, ``vm_size = "Standard_NC6s_v3"``, ``--accelerator type=nvidia-tesla-k80``), in
scripts, notes, Terraform, Bicep (``*.bicep``) and shell environment files (``*.rc``).

Any other such file is no input. The document holds, per key of ``facts.hostscripts``, the first
line that says it and its number, each key written on that line of the document (a JSON mapping
spread over the file's lines), so that a finding on a key points at the line that says it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts.hostscripts import (
    CLOUD_DRIVER_KEY,
    CLOUD_KEY,
    DRIVER_KEY,
    KEY,
    LOCAL_CLUSTER_KEY,
    PLUGIN_KEY,
    POOL_PREFIX,
    RELEASE_PREFIX,
    RETIRED_KEY,
    RUNTIME_CLASS_KEY,
    TALOS_KEY,
    TOOLKIT_KEY,
)
from gpustack.lint.input import cloudpools, helmcommand, terraform

if TYPE_CHECKING:
    from gpustack.lint.facts.retiredsizes import RetiredSize

# The charts whose helm installs are kept as releases: the GPU stack's own.
GPU_CHART_ROLES = ("device-plugin", "feature-discovery", "gpu-operator", "gpu-sharing", "dra-driver", "metrics-exporter")
KEEP_NAMED = False  # a script named on the command line that sets nothing is no input either
_INSTALL = r"\b(?:apt-get|apt|dnf|yum|zypper|microdnf)\b[^\n]*\binstall\b[^\n]*"
_INSTALLS_DRIVER = re.compile(
    _INSTALL + r"(?<![\w-])(?:nvidia-driver(?:-\d+)?(?:-server|-open)?|cuda-drivers(?:-\d+)?|nvidia-open|"
    r"nvidia-headless-(?:no-dkms-)?\d+\S*|nvidia-kernel-dkms|kmod-nvidia\S*)(?![\w.-])"
    r"|\bubuntu-drivers\s+(?:auto)?install\b"
    r"|NVIDIA-Linux-[\w.-]+\.run\b"
)
_INSTALLS_TOOLKIT = re.compile(_INSTALL + r"(?<![\w-])nvidia-container-toolkit(?![\w-])")
# The GPU Operator, NVIDIA's device plugin or HAMi installed by hand (helm, NVIDIA's static
# manifest) or by Terraform (the chart of a ``helm_release``: the resource's other lines do not
# say which chart).
_INSTALLS_PLUGIN = re.compile(
    r"\bhelm\s+(?:upgrade\s+(?:--install|-i)\b|install\b)[^\n]*(?:gpu-operator|nvidia-device-plugin|\bhami\b)"
    r"|\bkubectl\s+(?:apply|create)\b[^\n]*(?:k8s-device-plugin|nvidia-device-plugin)"
    r"|^\s*chart\s*=\s*\"(?:[^\"]*/)?(?:gpu-operator|nvidia-device-plugin|hami)\"",
    re.IGNORECASE,
)
# Commands and Terraform resources that create a managed cloud's cluster or GPU node pool.
_MANAGED_CLOUD = {
    "eks": re.compile(
        r"\beksctl\s+create\s+(?:cluster|nodegroup)\b|\baws\s+eks\s+create-(?:cluster|nodegroup)\b"
        r"|resource\s+\"aws_eks_(?:cluster|node_group)\"|source\s*=\s*\"terraform-aws-modules/eks/aws\""
    ),
    "gke": re.compile(
        r"\bgcloud\s+(?:beta\s+)?container\s+(?:clusters|node-pools)\s+create\b"
        r"|resource\s+\"google_container_(?:cluster|node_pool)\""
    ),
    "aks": re.compile(r"\baz\s+aks\s+(?:create|nodepool\s+add)\b|resource\s+\"azurerm_kubernetes_cluster(?:_node_pool)?\""),
}
# GPU nodes a managed cloud creates with the NVIDIA driver in their image: AKS GPU node pools
# unless the driver install is skipped (https://learn.microsoft.com/en-us/azure/aks/gpu-cluster),
# GKE node pools that ask for the default or latest driver
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#install-drivers), and EKS node
# groups on the accelerated AMIs
# (https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html).
_CLOUD_DRIVER = {
    "aks": re.compile(
        r"\baz\s+aks\s+(?:create|nodepool\s+add)\b.*--node-vm-size[= ]\s*[\"']?Standard_N[CDV](?![\w-]*as_v4)"
        r"|^\s*vm_size\s*=\s*\"Standard_N[CDV](?![\w-]*as_v4)",
        re.IGNORECASE,
    ),
    "gke": re.compile(r"gpu-driver-version=(?:default|latest)\b|gpu_driver_version\s*=\s*\"(?:DEFAULT|LATEST)\"", re.IGNORECASE),
    "eks": re.compile(r"\b(?:AL2_x86_64_GPU|AL2023_(?:x86_64|ARM_64)_NVIDIA|BOTTLEROCKET_(?:x86_64|ARM_64)_NVIDIA)\b"),
}
# A file that skips AKS's driver install anywhere (a flag, Terraform's ``gpu_driver = "None"``,
# the older ``SkipGPUDriverInstall`` node pool tag, an ARM or Bicep ``gpuProfile.driver: None``).
_SKIPS_CLOUD_DRIVER = re.compile(
    r"--skip-gpu-driver-install|--gpu-driver[= ]\s*none\b|gpu_driver\s*=\s*\"None\"|SkipGPUDriverInstall"
    r"|[\"']?driver[\"']?\s*:\s*[\"']None[\"']",
    re.IGNORECASE,
)
_HINTS = (b"nvidia", b"cuda-drivers", b"ubuntu-drivers", b"eksctl", b"aws eks", b"aws_eks", b"terraform-aws-modules/eks",
          b"gcloud", b"google_container", b"az aks", b"azurerm_kubernetes_cluster", b"standard_n", b"tesla-k80", b"gpu_driver_version",
          b"gpu-driver-version", b"_gpu", b"_nvidia", b"gpu-operator", b"device-plugin", b"hami", b"dcgm-exporter",
          b"node-feature-discovery", b"dra-driver", b"/installer")
_SETS_NVIDIA_DEFAULT = re.compile(
    r"nvidia-ctk\s+runtime\s+configure\b[^\n]*--set-as-default"
    r"|default_runtime_name\s*=\s*\\?[\"']nvidia\\?[\"']"
    r"|[\"']default-runtime[\"']\s*:\s*[\"']nvidia[\"']"
    r"|^\s*default-runtime:\s*[\"']?nvidia\b",
)


def as_document(data: bytes) -> bytes | None:
    """For each thing a script can say (``KEYS``), the first line that says it, as the
    document the loader reads; None when no line says any (or the file is not text)."""
    lowered = data.lower()
    if not any(word in lowered for word in _HINTS):
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    found: dict[str, dict[str, Any]] = {}
    keeps_cloud_driver = not _SKIPS_CLOUD_DRIVER.search(text)
    for number, line in _lines(text):
        for key, pattern in _SAYS.items():
            if key not in found and (said := pattern.search(line)):
                found[key] = {"line": number, "says": line.strip()[:200], "found": said.group(0)[:300]}
        for cloud, pattern in _MANAGED_CLOUD.items():
            if CLOUD_KEY not in found and pattern.search(line):
                found[CLOUD_KEY] = {"line": number, "says": line.strip()[:200], "cloud": cloud}
        if RETIRED_KEY not in found and (size := _retired_size(line)) is not None:
            found[RETIRED_KEY] = {"line": number, "says": line.strip()[:200], "size": size.name}
        for cloud, pattern in _CLOUD_DRIVER.items():
            if CLOUD_DRIVER_KEY not in found and keeps_cloud_driver and pattern.search(line):
                found[CLOUD_DRIVER_KEY] = {"line": number, "says": line.strip()[:200], "cloud": cloud}
        if "helm" in line and (release := _gpu_chart_release(line)) is not None:
            found[f"{RELEASE_PREFIX}{number}"] = {"line": number, "says": line.strip()[:200], **release}
        if (pool := cloudpools.command_pool(line)) is not None:
            found[f"{POOL_PREFIX}{number}"] = {"line": number, "says": line.strip()[:200], **pool}
    for number, pool in cloudpools.terraform_pools(text):
        found.setdefault(f"{POOL_PREFIX}{number}", {"line": number, "says": pool["what"], **pool})
    for release in terraform.helm_releases(text):
        if (entry := _terraform_gpu_release(release)) is not None:
            found.setdefault(f"{RELEASE_PREFIX}{release.line}", entry)
    return _placed(found).encode() if set(found) - {LOCAL_CLUSTER_KEY, RUNTIME_CLASS_KEY} else None


def _gpu_chart_release(line: str) -> dict[str, Any] | None:
    """What a ``helm install|upgrade`` of a GPU chart (device plugin, NFD, GPU Operator, HAMi,
    DRA drivers, DCGM Exporter) on ``line`` says, as ``facts.hostscripts.RELEASE_PREFIX`` keeps it."""
    command = helmcommand.find(line)
    if command is None or command.subcommand == "template" or not _is_gpu_chart(command.chart):
        return None
    return {
        "chart": command.chart, "release": command.release, "namespace": command.namespace,
        "version": command.version or _packaged_version(command.chart), "values": list(command.values_files),
        "set": helmcommand.nested(command.sets), "unknown": command.unknown,
    }


def _terraform_gpu_release(release: terraform.HelmRelease) -> dict[str, Any] | None:
    """A Terraform ``helm_release`` of a GPU chart as ``facts.hostscripts.RELEASE_PREFIX`` keeps
    it: the provider merges ``values`` in order, then each ``set`` as ``helm --set`` (type
    ``string``: ``--set-string``) does."""
    if release.chart is None or not _is_gpu_chart(release.chart):
        return None
    import yaml

    unknown, sets, inline = release.unknown, [], []
    for name, value, kind in release.sets:
        try:
            sets += helmcommand.parse_set(f"{name}={value}", "string" if kind == "string" else "typed")
        except ValueError as exc:
            unknown = unknown or f"a set value Helm would refuse ({exc})"
    for text in release.inline:
        try:
            values = json.loads(json.dumps(yaml.safe_load(text)))
        except (yaml.YAMLError, TypeError, ValueError):
            values = None
        if not isinstance(values, dict):
            unknown = unknown or "inline values that are no YAML mapping"
            continue
        inline.append(values)
    return {
        "line": release.line, "says": f'resource "helm_release" "{release.resource}"', "what": f"Terraform helm_release {release.resource}",
        "chart": release.chart, "release": release.name, "namespace": release.namespace, "version": release.version or _packaged_version(release.chart),
        "values": list(release.files), "inline": inline, "set": helmcommand.nested(sets), "unknown": unknown,
    }


def _is_gpu_chart(spec: str) -> bool:
    """Whether a chart reference (``nvidia/gpu-operator``, ``oci://…``, a packaged file) names a
    chart of ``GPU_CHART_ROLES``."""
    from gpustack.lint.facts.registered import names_of_roles
    from gpustack.lint.releases.release import chart_name

    return chart_name(spec)[0] in names_of_roles(*GPU_CHART_ROLES)


def _packaged_version(spec: str) -> str | None:
    """The version a packaged chart's file name carries (``hami-2.6.0.tgz``)."""
    from gpustack.lint.releases.release import chart_name

    return chart_name(spec)[1]


def _retired_size(line: str) -> RetiredSize | None:
    """The retired GPU size a line sets (``facts/retiredsizes``, imported where a script is read)."""
    from gpustack.lint.facts import retiredsizes

    return retiredsizes.set_in(line)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines that are not comments, each with its number; a command continued with a
    trailing backslash is one line, numbered by its first."""
    first, parts = 0, []
    for number, line in enumerate(text.splitlines(), 1):
        if not parts and line.lstrip().startswith(("#", "//")):
            continue
        first = first or number
        parts.append(line.rstrip().removesuffix("\\"))
        if not line.rstrip().endswith("\\"):
            yield first, " ".join(parts)
            first, parts = 0, []
    if parts:
        yield first, " ".join(parts)


def _placed(found: dict[str, dict[str, Any]]) -> str:
    """``found`` as a JSON mapping whose keys stand on the lines they were found on."""
    parts, at = [], 1
    for key, value in sorted(found.items(), key=lambda item: item[1]["line"]):
        line = value["line"]
        parts.append("\n" * max(line - at, 0) + json.dumps(key) + ": " + json.dumps(value))
        at = max(at, line)
    return "{" + ", ".join(parts) + "}\n"


# A Talos installer image of a release (Image Factory's or Sidero Labs'), as a script writes a
# machine config's ``machine.install.image`` or runs ``talosctl upgrade --image``.
_TALOS_INSTALLER = re.compile(r"\b(?:factory\.talos\.dev|ghcr\.io/siderolabs)/(?:metal-)?installer[^\s:]*:v\d+\.\d+\.\d+")
# A RuntimeClass created by hand: a manifest in a heredoc or guide, kubectl, Terraform's resource.
_CREATES_RUNTIME_CLASS = re.compile(
    r"^\s*kind:\s*[\"']?RuntimeClass\b|\bkubectl\s+(?:create|apply)\b[^\n]*runtime-?class"
    r"|resource\s+\"kubernetes_runtime_class(?:_v1)?\"",
    re.IGNORECASE,
)
# kind (https://kind.sigs.k8s.io/docs/user/quick-start/), NVIDIA's nvkind, k3d, minikube.
_CREATES_LOCAL_CLUSTER = re.compile(r"\b(?:kind|nvkind)\s+create\s+cluster\b|\bk3d\s+cluster\s+create\b|\bminikube\s+start\b")
_SAYS = {LOCAL_CLUSTER_KEY: _CREATES_LOCAL_CLUSTER, RUNTIME_CLASS_KEY: _CREATES_RUNTIME_CLASS, KEY: _SETS_NVIDIA_DEFAULT, DRIVER_KEY: _INSTALLS_DRIVER, TOOLKIT_KEY: _INSTALLS_TOOLKIT, PLUGIN_KEY: _INSTALLS_PLUGIN,
         TALOS_KEY: _TALOS_INSTALLER}
