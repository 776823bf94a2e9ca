"""For each gpustack alert, a case that must fire and one that must stay silent, per sharing mode.

One source: the cases are Python data (series from cluster_series, expected alerts computed from
the same labels), written out as ``promtool test rules`` files by test_promtool.py. Times are
minutes, one sample a minute; ``for``/``keep_firing_for`` come from the rendered rule itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cluster_series import Scrape, Series, Slice, Workload, hami_series, labels_of

from gpustack.render.components import dcgm_exporter, xid
from gpustack.render.components.alert_series import NODE
from gpustack.spec.labelling import duration_seconds
from gpustack.spec.models import GpuStack

TRAINER = Workload("ml", "trainer-0", "trainer")
SECOND_TRAINER = Workload("ml", "trainer-1", "trainer")
SERVER = Workload("serving", "vllm-0", "vllm")
# H100 MIG layout of examples/kubeadm-mig-fleet.yaml: 2 × 1g.10gb, 2g.20gb, 3g.40gb (GPU instance
# ids as nvidia-smi mig -lgi numbers them for these profiles).
MIG_LAYOUT = (("9", "1g.10gb"), ("10", "1g.10gb"), ("5", "2g.20gb"), ("2", "3g.40gb"))
PER_GPU = ("gpu", "UUID", "modelName")
# A HAMi share's memory (1 GiB), reported for longer than any case runs.
SHARE_BYTES = 1024**3
SHARE_MINUTES = 200


@dataclass
class Check:
    """One evaluation: at ``minute``, exactly ``alerts`` (label sets) are firing."""

    minute: int
    alerts: list[dict[str, str]]


@dataclass
class Case:
    alert: str
    kind: str  # "fires" or "silent"
    series: Series
    checks: list[Check] = field(default_factory=list)


@dataclass(frozen=True)
class Mode:
    """A sharing mode as the exporter sees it: the GPU under test and whether pods are attributed."""

    name: str
    model: str
    mig: bool = False
    shared: bool = False
    attributed: bool = True
    hami_shares: bool = False  # HAMi's vGPU monitor names the pods on each GPU (joined on its UUID)

    def slices(self, pods: tuple[Workload, ...]) -> list[Slice]:
        """The GPU (or its MIG instances), ``pods`` on the first one (both pods when time-sliced)."""
        if self.mig:
            return [
                Slice("n1", 0, self.model, instance_id=gid, profile=profile, pods=pods if i == 0 else ())
                for i, (gid, profile) in enumerate(MIG_LAYOUT)
            ]
        return [Slice("n1", 0, self.model, pods=pods)]


def modes(stack: GpuStack) -> list[Mode]:
    """The sharing modes an example's pools use."""
    spec = stack.spec
    found: dict[str, Mode] = {}
    for pool in spec.nodePools:
        model = f"NVIDIA {pool.gpu.model}"
        sharing = pool.sharing or spec.devicePlugin.sharing
        if spec.dra.enabled:
            mode = Mode("dra", model, attributed=dcgm_exporter.attributes_dra(stack))
        elif spec.sharing.hami.enabled and (spec.sharing.hami.pools is None or pool.name in spec.sharing.hami.pools):
            mode = Mode("hami", model, attributed=False, hami_shares=True)
        elif pool.mig is not None:
            mode = Mode("mig", model, mig=True)
        elif sharing.strategy == "timeSlicing":
            mode = Mode("time-slicing", model, shared=True)
        else:
            mode = Mode("whole-gpu", model)
        found.setdefault(mode.name, mode)
    return list(found.values())


def minutes(duration: str | None) -> int:
    return int(duration_seconds(duration) // 60) if duration else 0


class Builder:
    """Cases of one mode against one rendered rule set."""

    def __init__(self, mode: Mode, scrape: Scrape, rules: dict[str, dict[str, Any]]):
        self.mode, self.scrape, self.rules = mode, scrape, rules

    def pods(self, *pods: Workload) -> tuple[Workload, ...]:
        return pods + ((SECOND_TRAINER,) if self.mode.shared and pods == (TRAINER,) else ())

    def series(self, metric: str, slices: list[Slice], samples: str, **extra: str) -> Series:
        result = Series()
        for piece in slices:
            result.add(self.scrape.series(metric, piece, **extra), samples)
        return result

    def gpu_series(self, metric: str, slices: list[Slice], samples: str, **extra: str) -> Series:
        """``series`` for a per-GPU alert; under HAMi also the monitor's share of each pod on the GPU."""
        result = self.series(metric, slices, samples, **extra)
        if self.mode.hami_shares:
            for piece in slices:
                shares = [hami_series("hami_container_device_memory_bytes", piece.node, pod) for pod in piece.pods]
                result.add(shares, f"{SHARE_BYTES}x{SHARE_MINUTES}")
        return result

    def expect_per_gpu(self, alert: str, slices: list[Slice], **extra: str) -> list[dict[str, str]]:
        """One alert per workload on the GPU, or one without workload labels (XIDs keep their
        code: under HAMi they are not joined with the shares, alert_series.per_gpu)."""
        first = labels_of(self.scrape.series("X", slices[0])[0])
        base = {key: first[key] for key in (NODE, *PER_GPU)} | extra | self.rule_labels(alert)
        seen = self.scrape.attributes or (self.mode.hami_shares and "xid" not in extra)
        pods = {pod for piece in slices for pod in piece.pods} if seen else set()
        if not pods:
            return [base]
        return [base | {"exported_namespace": p.namespace, "exported_pod": p.pod} for p in sorted(pods, key=str)]

    def expect_per_series(self, alert: str, selectors: list[str]) -> list[dict[str, str]]:
        return [labels_of(selector) | self.rule_labels(alert) for selector in selectors]

    def rule_labels(self, alert: str) -> dict[str, str]:
        return {"alertname": alert, **self.rules[alert]["labels"]}

    def utilisation(self, slices: list[Slice], percent: int, length: int) -> tuple[Series, list[str]]:
        """GPU_UTIL, or on MIG instances (which have none) GR_ENGINE_ACTIVE, and its selectors."""
        if self.mode.mig:
            series = self.series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", slices, f"{percent / 100}x{length}")
        else:
            series = self.series("DCGM_FI_DEV_GPU_UTIL", slices, f"{percent}x{length}")
        return series, list(series.values)


def merge(*parts: Series) -> Series:
    result = Series()
    for part in parts:
        result.values.update(part.values)
    return result


def gpu_cases(builder: Builder) -> list[Case]:
    """Fire/silent cases of every alert on DCGM series that the rule set has, for one mode."""
    cases: list[Case] = []
    for name in builder.rules:
        if name in _GPU_CASES:
            cases += _GPU_CASES[name](builder)
        elif name in xid_alerts():
            cases += _xid(builder, name)
    return cases


def target_cases(builder: Builder) -> list[Case]:
    """Fire/silent cases of the alerts on the scrape target and kube-state-metrics (mode-independent)."""
    cases = _exporter_down(builder) + _exporter_absent(builder)
    if "GPUUnallocatable" in builder.rules:
        cases += _unallocatable(builder)
    return cases


def xid_alerts() -> set[str]:
    return {bucket.alert for bucket in xid.catalogue()} | {"GPUXidListed"}


def _temperature(b: Builder) -> list[Case]:
    """Near the GPU's own slowdown temperature (below the fallback threshold: the model's own counts),
    not near it (above the fallback: ignored), and the fallback where the GPU reports none."""
    name, wait = "GPUHighTemperature", minutes(b.rules["GPUHighTemperature"].get("for"))
    slices = b.mode.slices(b.pods(TRAINER))
    length = f"x{wait + 5}"

    def reading(temperature: int, slowdown: int | None) -> Series:
        series = b.gpu_series("DCGM_FI_DEV_GPU_TEMP", slices, f"{temperature}{length}")
        if slowdown is None:
            return series
        return merge(series, b.series("DCGM_FI_DEV_SLOWDOWN_TEMP", slices, f"{slowdown}{length}"))

    fires = [Check(wait - 1, []), Check(wait, b.expect_per_gpu(name, slices))]
    return [
        Case(name, "fires", reading(84, 87), fires),
        Case(name, "silent", reading(88, 95), [Check(wait + 2, [])]),
        Case(name, "fires", reading(90, None), fires),
        # A GPU that reports 0 (no threshold) is held to the fallback.
        Case(name, "silent", reading(70, 0), [Check(wait + 2, [])]),
    ]


def _memory(b: Builder) -> list[Case]:
    name, wait = "GPUMemoryNearFull", minutes(b.rules["GPUMemoryNearFull"].get("for"))
    length = wait + 5

    def memory(pods: tuple[Workload, ...], used: int, free: int) -> tuple[Series, list[str]]:
        slices = b.mode.slices(pods)[:1]
        used_series = b.series("DCGM_FI_DEV_FB_USED", slices, f"{used}x{length}")
        return merge(used_series, b.series("DCGM_FI_DEV_FB_FREE", slices, f"{free}x{length}")), list(used_series.values)

    full, selectors = memory(b.pods(TRAINER), 9500, 300)
    cases = [
        Case(name, "fires", full, [Check(wait - 1, []), Check(wait, b.expect_per_series(name, selectors))]),
        Case(name, "silent", memory(b.pods(TRAINER), 4000, 5800)[0], [Check(wait + 2, [])]),
    ]
    if b.scrape.attributes:
        # vLLM reserves --gpu-memory-utilization (0.9) of the memory at start: by design, not a warning.
        cases.append(Case(name, "silent", memory((SERVER,), 9500, 300)[0], [Check(wait + 2, [])]))
    return cases


def _idle(b: Builder) -> list[Case]:
    name, wait = "GPUIdleButAllocated", minutes(b.rules["GPUIdleButAllocated"].get("for"))
    length = wait + 5

    def idle(pods: tuple[Workload, ...], held: int) -> tuple[Series, list[str]]:
        slices = b.mode.slices(pods)[:1]
        busy, selectors = b.utilisation(slices, 0, length)
        return merge(busy, b.series("DCGM_FI_DEV_FB_USED", slices, f"{held}x{length}")), selectors

    held, selectors = idle(b.pods(TRAINER), 2048)
    silent = [
        Case(name, "silent", idle(b.pods(TRAINER), 0)[0], [Check(wait + 2, [])]),
    ]
    if not b.scrape.attributes:
        # No pod on the series: nothing says the GPU is allocated, so the alert cannot fire.
        return [*silent, Case(name, "silent", held, [Check(wait + 2, [])])]
    # An inference server without traffic is idle by design.
    silent.append(Case(name, "silent", idle((SERVER,), 8000)[0], [Check(wait + 2, [])]))
    fires = Case(name, "fires", held, [Check(wait - 1, []), Check(wait, b.expect_per_series(name, selectors))])
    return [fires, *silent]


def _underfilled(b: Builder) -> list[Case]:
    name, wait = "GPUBusyButUnderfilled", minutes(b.rules["GPUBusyButUnderfilled"].get("for"))
    length = wait + 5
    slices = b.mode.slices(b.pods(TRAINER))[:1]

    def run(sm_active: float) -> tuple[Series, list[str]]:
        busy, selectors = b.utilisation(slices, 100, length)
        return merge(busy, b.series("DCGM_FI_PROF_SM_ACTIVE", slices, f"{sm_active}x{length}")), selectors

    low, selectors = run(0.3)
    return [
        Case(name, "fires", low, [Check(wait - 1, []), Check(wait, b.expect_per_series(name, selectors))]),
        Case(name, "silent", run(0.9)[0], [Check(wait + 2, [])]),
    ]


def _remap_failure(b: Builder) -> list[Case]:
    name = "GPURowRemapFailure"
    slices = b.mode.slices(b.pods(TRAINER))
    return [
        Case(name, "fires", b.gpu_series("DCGM_FI_DEV_ROW_REMAP_FAILURE", slices, "0 1x5"),
             [Check(0, []), Check(1, b.expect_per_gpu(name, slices))]),
        Case(name, "silent", b.gpu_series("DCGM_FI_DEV_ROW_REMAP_FAILURE", slices, "0x5"), [Check(5, [])]),
    ]


def _remapped_rows(b: Builder) -> list[Case]:
    name = "GPURowsRemappedUncorrectable"
    slices = b.mode.slices(b.pods(TRAINER))
    metric = "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"
    return [
        # Two rows remapped before the window (old news), one more at minute 3.
        Case(name, "fires", b.gpu_series(metric, slices, "2x2 3x5"),
             [Check(2, []), Check(3, b.expect_per_gpu(name, slices))]),
        Case(name, "silent", b.gpu_series(metric, slices, "2x70"), [Check(70, [])]),
    ]


def _lost(b: Builder) -> list[Case]:
    name, wait = "GPULost", minutes(b.rules["GPULost"].get("for"))
    slices = b.mode.slices(b.pods(TRAINER))
    up = b.scrape.target("n1")
    up_selector = "up{" + ",".join(f'{k}="{v}"' for k, v in up.items()) + "}"
    length = wait + 10
    # The GPU's series end (Prometheus writes staleness markers when a series leaves the scrape)
    # while the exporter is still scraped.
    lost = b.gpu_series("DCGM_FI_DEV_GPU_TEMP", slices, "40x3 stale")
    lost.values[up_selector] = f"1x{length}"
    # A drained node: exporter and GPU series go together; GPUExporterDown/absence say why, not this.
    drained = b.gpu_series("DCGM_FI_DEV_GPU_TEMP", slices, "40x3 stale")
    drained.values[up_selector] = "1x3 stale"
    return [
        Case(name, "fires", lost, [Check(4 + wait - 1, []), Check(4 + wait, b.expect_per_gpu(name, slices))]),
        Case(name, "silent", drained, [Check(4 + wait + 1, [])]),
    ]


def _xid(b: Builder, name: str) -> list[Case]:
    rule = b.rules[name]
    code = int(rule["expr"].split('xid=~"')[1].split('"')[0].split("|")[0])
    keep = minutes(rule.get("keep_firing_for"))
    slices = b.mode.slices(b.pods(TRAINER))
    metric = xid.XID_COUNT_METRIC
    # The exporter counts the XID in its 5-minute window, then the window empties.
    seen = b.gpu_series(metric, slices, f"0 1x5 0x{keep + 10}", xid=str(code))
    expected = b.expect_per_gpu(name, slices, xid=str(code))
    checks = [Check(0, []), Check(1, expected)]
    if keep:
        checks += [Check(6 + keep - 1, expected), Check(6 + keep + 1, [])]
    else:
        checks.append(Check(7, []))
    other = 999  # a code no bucket lists
    return [
        Case(name, "fires", seen, checks),
        Case(name, "silent", b.gpu_series(metric, slices, "1x5", xid=str(other)), [Check(3, [])]),
    ]


def _up(b: Builder) -> tuple[str, dict[str, str]]:
    labels = b.scrape.target("n1")
    return "up{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}", labels


def _exporter_down(b: Builder) -> list[Case]:
    name, wait = "GPUExporterDown", minutes(b.rules["GPUExporterDown"].get("for"))
    selector, labels = _up(b)
    return [
        Case(name, "fires", Series({selector: f"1x2 0x{wait + 5}"}),
             [Check(3 + wait - 1, []), Check(3 + wait, [labels | b.rule_labels(name)])]),
        Case(name, "silent", Series({selector: f"1x{wait + 5}"}), [Check(wait + 2, [])]),
    ]


def _exporter_absent(b: Builder) -> list[Case]:
    name, wait = "GPUExporterAbsent", minutes(b.rules["GPUExporterAbsent"].get("for"))
    selector, _ = _up(b)
    # Prometheus scrapes something else (kube-state-metrics) but no exporter target.
    other = 'up{job="kube-state-metrics",namespace="monitoring",instance="10.0.0.9:8080"}'
    return [
        Case(name, "fires", Series({other: f"1x{wait + 5}"}),
             [Check(wait - 1, []), Check(wait, [{"job": b.scrape.job} | b.rule_labels(name)])]),
        Case(name, "silent", Series({selector: f"1x{wait + 5}", other: f"1x{wait + 5}"}), [Check(wait + 2, [])]),
    ]


def _unallocatable(b: Builder) -> list[Case]:
    """kube-state-metrics' node series
    (https://github.com/kubernetes/kube-state-metrics/blob/main/docs/metrics/cluster/node-metrics.md)."""
    name, wait = "GPUUnallocatable", minutes(b.rules["GPUUnallocatable"].get("for"))
    ksm = 'job="kube-state-metrics",namespace="monitoring",unit="integer"'
    capacity = f'kube_node_status_capacity{{node="n1",resource="nvidia_com_gpu",{ksm}}}'
    allocatable = f'kube_node_status_allocatable{{node="n1",resource="nvidia_com_gpu",{ksm}}}'
    cpu = 'kube_node_status_allocatable{node="n1",resource="cpu",unit="core",job="kube-state-metrics"}'
    length = wait + 8
    # A comparison matched on(node, resource) keeps only those labels.
    expected = {"node": "n1", "resource": "nvidia_com_gpu"} | b.rule_labels(name)
    return [
        Case(name, "fires", Series({capacity: f"8x{length}", allocatable: f"8x2 7x{length - 2}", cpu: f"95x{length}"}),
             [Check(3 + wait - 1, []), Check(3 + wait, [expected])]),
        Case(name, "silent", Series({capacity: f"8x{length}", allocatable: f"8x{length}"}), [Check(wait + 2, [])]),
    ]


def _hami_idle(b: Builder) -> list[Case]:
    """HAMi's vGPU monitor: seconds since the container's last kernel (grows one minute a minute) and its memory."""
    name = "GPUShareIdleButAllocated"
    expr = b.rules[name]["expr"]
    idle_after = int(expr.split(" > ")[1].split()[0]) // 60

    def share(pod: Workload, memory: int) -> tuple[Series, str]:
        last_kernel = hami_series("hami_container_last_kernel_elapsed_seconds", "n1", pod)
        held = hami_series("hami_container_device_memory_bytes", "n1", pod)
        length = idle_after + 5
        return Series({last_kernel: f"0+60x{length}", held: f"{memory}x{length}"}), last_kernel

    idle, selector = share(TRAINER, 2 * 1024**3)
    return [
        Case(name, "fires", idle,
             [Check(idle_after, []), Check(idle_after + 1, b.expect_per_series(name, [selector]))]),
        Case(name, "silent", share(TRAINER, 0)[0], [Check(idle_after + 3, [])]),
        # vLLM without traffic launches no kernel: idle by design.
        Case(name, "silent", share(SERVER, 8 * 1024**3)[0], [Check(idle_after + 3, [])]),
    ]


def _nvlink(b: Builder) -> list[Case]:
    """A recovery or a data CRC error counts; a count that only stands (errors before the window) or
    replays (the link retries itself) do not."""
    name = "GPUNvlinkErrors"
    slices = b.mode.slices(b.pods(TRAINER))
    expected = b.expect_per_gpu(name, slices)

    def counted(metric: str, samples: str) -> Series:
        return b.gpu_series(f"DCGM_FI_DEV_NVLINK_{metric}_ERROR_COUNT_TOTAL", slices, samples)

    return [
        Case(name, "fires", counted("RECOVERY", "0 0 1x25"), [Check(1, []), Check(2, expected), Check(20, [])]),
        Case(name, "fires", counted("CRC_DATA", "4 4 9x25"), [Check(1, []), Check(2, expected)]),
        Case(name, "silent", counted("RECOVERY", "3x25"), [Check(20, [])]),
        Case(name, "silent", counted("REPLAY", "0 50 900x25"), [Check(3, [])]),
    ]


def _fabric_manager(b: Builder) -> list[Case]:
    """Status 4 (failure) for ``for``; at boot 1 (not started) and 2 (training) before 3 (success),
    and 0 on a GPU Fabric Manager does not manage, never."""
    name, wait = "GPUFabricManagerDown", minutes(b.rules["GPUFabricManagerDown"].get("for"))
    slices = b.mode.slices(b.pods(TRAINER))
    length = wait + 5

    def status(samples: str) -> Series:
        return b.gpu_series("DCGM_FI_DEV_FABRIC_MANAGER_STATUS", slices, samples)

    return [
        Case(name, "fires", status(f"3 3 4x{length}"),
             [Check(2 + wait - 1, []), Check(2 + wait, b.expect_per_gpu(name, slices))]),
        Case(name, "silent", status(f"1 2 3x{length}"), [Check(1, []), Check(wait + 2, [])]),
        Case(name, "silent", status(f"0x{length}"), [Check(wait + 2, [])]),
    ]


_GPU_CASES: dict[str, Callable[[Builder], list[Case]]] = {
    "GPUNvlinkErrors": _nvlink,
    "GPUFabricManagerDown": _fabric_manager,
    "GPUShareIdleButAllocated": _hami_idle,
    "GPUHighTemperature": _temperature,
    "GPUMemoryNearFull": _memory,
    "GPUIdleButAllocated": _idle,
    "GPUBusyButUnderfilled": _underfilled,
    "GPURowRemapFailure": _remap_failure,
    "GPURowsRemappedUncorrectable": _remapped_rows,
    "GPULost": _lost,
}
