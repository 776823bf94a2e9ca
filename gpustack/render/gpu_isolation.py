"""Which GPUs an unprivileged container gets: the facts the device plugins, the host toolkit's
steps and the GPU Operator's toolkit share.

The NVIDIA Container Toolkit injects the GPUs a container names, looking in this order
(``CUDA.VisibleDevices``, https://github.com/NVIDIA/nvidia-container-toolkit/blob/v1.20.0/internal/config/image/cuda_image.go):
CDI annotations; volume mounts under ``/var/run/nvidia-container-devices`` when
``accept-nvidia-visible-devices-as-volume-mounts`` is true; then ``NVIDIA_VISIBLE_DEVICES``, which it
takes from a container without CAP_SYS_ADMIN only when
``accept-nvidia-visible-devices-envvar-when-unprivileged`` is true, the toolkit's own default
(api/config/v1/config.go). A pod's own ``env`` comes after the device plugin's in the container's
environment and wins (kubelet, pkg/kubelet/kubelet_pods.go ``GenerateRunContainerOptions``;
containerd's ``oci.WithEnv`` replaces earlier values), so with the plugin's default ``envvar``
strategy any pod of RuntimeClass nvidia with ``NVIDIA_VISIBLE_DEVICES=all`` gets every GPU of its
node, around the scheduler, quotas and HAMi's limits (NVIDIA, "Preventing unprivileged access to
GPUs in Kubernetes", linked from the device plugin's README as the rationale of ``volume-mounts``:
https://docs.google.com/document/d/1uXVF-NWZQXgP1MLb87_kMkQvidpnkNWicdpO2l9g-fw/edit#heading=h.b3ti65rojfy5).
Only a mount of the host's ``/dev/null`` counts as a request, which a pod cannot make without a
``hostPath`` volume (refused by Pod Security's baseline level).

gpustack closes the node side unless the spec opts out (``cluster.acceptVisibleDevicesEnvvar``):
the toolkit refuses the variable from unprivileged containers, and the device plugins that run on
the NVIDIA runtime hand GPUs over as volume mounts, which the toolkit then accepts.
"""

from __future__ import annotations

from gpustack.lint.charts.chartkeys import version_key
from gpustack.lint.facts.runtimeevidence import CDI_BY_DEFAULT
from gpustack.spec.models import GpuStack

# The toolkit's config.toml keys (https://github.com/NVIDIA/nvidia-container-toolkit/blob/v1.20.0/api/config/v1/config.go).
ENVVAR_KEY = "accept-nvidia-visible-devices-envvar-when-unprivileged"
MOUNTS_KEY = "accept-nvidia-visible-devices-as-volume-mounts"
# The device plugins' deviceListStrategy that does not rely on the variable and runs on the
# NVIDIA runtime (https://github.com/NVIDIA/k8s-device-plugin#as-command-line-flags-or-envvars).
VOLUME_MOUNTS = "volume-mounts"
DEVICE_LIST_STRATEGY = "DEVICE_LIST_STRATEGY"


# Talos's nvidia-container-toolkit extension installs the toolkit's binaries and a containerd
# drop-in, no config.toml (https://github.com/siderolabs/extensions/tree/main/nvidia-gpu/nvidia-container-toolkit),
# and /etc is read-only: the toolkit keeps its built-in defaults there.
FIXED_TOOLKIT_DISTRIBUTION = "talos"


def refuses_envvar(stack: GpuStack) -> bool:
    """Whether the nodes' toolkit ignores NVIDIA_VISIBLE_DEVICES from unprivileged containers: unless
    the spec opts out, wherever gpustack can configure it (not on Talos: ``talos_note``)."""
    return not stack.spec.cluster.acceptVisibleDevicesEnvvar and not fixed_toolkit(stack)


def fixed_toolkit(stack: GpuStack) -> bool:
    return stack.spec.cluster.distribution == FIXED_TOOLKIT_DISTRIBUTION


def talos_note(stack: GpuStack) -> str:
    """What the reader of a Talos stack must know and do, since gpustack cannot close it there."""
    if not fixed_toolkit(stack) or stack.spec.cluster.acceptVisibleDevicesEnvvar:
        return ""
    who = "any pod on a GPU node (nvidia is the default runtime)" if stack.spec.cluster.nvidiaDefaultRuntime \
        else "any pod of RuntimeClass nvidia"
    return (
        "The nvidia-container-toolkit extension brings no toolkit config.toml and /etc is read-only, so the "
        f"toolkit keeps its default `{ENVVAR_KEY} = true`: {who} that sets "
        "`NVIDIA_VISIBLE_DEVICES=all` (CUDA images set it in their image config) gets every GPU of its node, around the "
        "scheduler and quotas, and the device plugins keep handing GPUs over in that variable, which this toolkit "
        "reads by default. gpustack cannot change that on Talos: let only workloads you trust with a whole node "
        "use RuntimeClass nvidia (an admission policy that refuses `NVIDIA_VISIBLE_DEVICES` in a pod's env and "
        "RuntimeClass nvidia on pods without a GPU request; `gpustack lint` reports both, GS007 and GS054), or "
        "give untrusted workloads nodes of their own. `cluster.acceptVisibleDevicesEnvvar: true` drops this note."
    )


def plugin_strategy(stack: GpuStack) -> str | None:
    """The deviceListStrategy of a device plugin on the NVIDIA runtime (NVIDIA's standalone chart,
    HAMi's, the GPU Operator's before CDI); None: the chart's default (envvar)."""
    return VOLUME_MOUNTS if refuses_envvar(stack) else None


def operator_plugin_cdi(stack: GpuStack) -> bool:
    """Whether the GPU Operator's device plugin hands GPUs over through CDI: the chart's ``cdi.enabled``,
    on by default from v25.10.0 (gpustack.lint.facts.runtimeevidence), makes it
    ``cdi-annotations,cdi-cri`` (controllers/object_controls.go ``transformDevicePluginCtrForCDI``)."""
    return stack.spec.gpuOperator.enabled and version_key(stack.spec.gpuOperator.version) >= CDI_BY_DEFAULT


def volume_mount_plugins(stack: GpuStack) -> bool:
    """Whether a device plugin on the nodes' toolkit hands GPUs over as volume mounts: HAMi's,
    NVIDIA's standalone one, or the GPU Operator's before CDI."""
    spec = stack.spec
    return spec.sharing.hami.enabled or (spec.devicePlugin.enabled and not operator_plugin_cdi(stack))


def toolkit_settings(stack: GpuStack) -> dict[str, bool]:
    """The toolkit's config keys to set: none when the spec opts out; else the variable refused,
    and volume mounts accepted where a device plugin of the stack hands GPUs over that way."""
    if not refuses_envvar(stack):
        return {}
    return {ENVVAR_KEY: False, **({MOUNTS_KEY: True} if volume_mount_plugins(stack) else {})}


def installer_env(settings: dict[str, bool]) -> list[dict[str, str]]:
    """The same settings as the toolkit container's environment: its installer reads each key
    upper-cased with underscores (``ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED``,
    https://github.com/NVIDIA/nvidia-container-toolkit/blob/v1.20.0/cmd/nvidia-ctk-installer/toolkit/toolkit.go)."""
    return [{"name": key.upper().replace("-", "_"), "value": str(value).lower()} for key, value in settings.items()]
