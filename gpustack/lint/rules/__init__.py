"""The rule registry: every rule's module, listed explicitly (sorted by id).

A test proves this listing and ``policies/GS*.yaml`` describe the same rules. A run imports
the modules through ``listed``: most at once, those in ``DEFERRED`` only where its input holds
an object of the kinds they read (``registry.Deferred``), since most of a one-file lint is
importing.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from gpustack.lint.registry import Deferred, Rule, Scope, rule_of

MODULES: dict[str, str] = {
    "GS001": "gs001_pci_0300_selector",
    "GS002": "gs002_privileged_gpu_pod",
    "GS003": "gs003_gpu_hostpath_mount",
    "GS004": "gs004_missing_runtime_class",
    "GS005": "gs005_rolling_update_on_packed_gpu",
    "GS006": "gs006_gpu_request_limit_mismatch",
    "GS007": "gs007_visible_devices_env",
    "GS008": "gs008_gpu_memory_utilization_virtual_vram",
    "GS009": "gs009_duplicate_gpu_device_plugins",
    "GS010": "gs010_hami_node_label",
    "GS011": "gs011_dra_driver_root",
    "GS012": "gs012_orphan_resource_claim",
    "GS013": "gs013_dra_feature_gate",
    "GS014": "gs014_prometheusrule_not_selected",
    "GS015": "gs015_xid_alert_coverage",
    "GS016": "gs016_gpu_util_as_saturation",
    "GS017": "gs017_gpu_vector_match_without_node",
    "GS018": "gs018_profiler_vs_dcgm",
    "GS019": "gs019_instance_type_selector_on_k3s",
    "GS020": "gs020_s3_streamer_metadata",
    "GS021": "gs021_label_churn",
    "GS022": "gs022_unpinned_gpu_component",
    "GS023": "gs023_gpu_container_hardening",
    "GS024": "gs024_mig_on_non_mig_gpu",
    "GS025": "gs025_plaintext_credentials",
    "GS026": "gs026_unschedulable_gpu_selector",
    "GS027": "gs027_gpu_request_exceeds_node",
    "GS028": "gs028_untolerated_gpu_taint",
    "GS029": "gs029_yaml11_boolean_string",
    "GS030": "gs030_invalid_dra_cel",
    "GS031": "gs031_unknown_chart_value",
    "GS032": "gs032_nfd_label_mismatch",
    "GS033": "gs033_scheduler_version_skew",
    "GS034": "gs034_feature_gate_lifecycle",
    "GS035": "gs035_gpu_operator_driver_on_host_pools",
    "GS036": "gs036_shared_gpu_requests_over_one",
    "GS037": "gs037_multi_gpu_without_shm",
    "GS039": "gs039_monitor_selects_nothing",
    "GS040": "gs040_llm_server_without_readiness",
    "GS041": "gs041_dcgm_gauge_rate",
    "GS042": "gs042_dead_chart_value",
    "GS043": "gs043_dcgm_scraped_labels",
    "GS044": "gs044_nvswitch_without_fabric_manager",
    "GS045": "gs045_whole_gpu_class_admits_mig",
    "GS046": "gs046_hami_scheduler_bypassed",
    "GS047": "gs047_gpu_label_without_labeller",
    "GS048": "gs048_gpu_node_agent_untolerated_gpu_taint",
    "GS049": "gs049_single_gpu_rollout_on_rwo_volume",
    "GS050": "gs050_dcgm_exporter_requests_gpu",
    "GS051": "gs051_chart_value_of_the_wrong_kind",
    "GS052": "gs052_second_dcgm_exporter",
    "GS053": "gs053_device_plugin_switched_off",
    "GS054": "gs054_nvidia_runtime_without_gpu_request",
    "GS055": "gs055_gpu_operator_toolkit_on_talos_toolkit",
    "GS056": "gs056_plugin_strategy_toolkit_ignores",
    "GS057": "gs057_network_policies_not_enforced",
    "GS058": "gs058_gpu_service_on_node_ports",
    "GS059": "gs059_flux_dependency_not_deployed",
    "GS060": "gs060_unserved_gpu_api",
    "GS061": "gs061_removed_scheduler_config",
    "GS062": "gs062_runtimeclass_selects_no_gpu_pool",
    "GS063": "gs063_claim_no_pool_can_satisfy",
    "GS064": "gs064_dcgm_field_not_collected",
    "GS065": "gs065_gpu_software_without_gpu_request",
    "GS066": "gs066_values_file_not_passed",
    "GS067": "gs067_gpu_pod_refused_by_pod_security",
    "GS068": "gs068_retired_gpu_size",
    "GS069": "gs069_mig_parted_config_refused",
    "GS070": "gs070_unknown_gpu_pod_field",
    "GS071": "gs071_runtime_class_not_defined",
}

# The object rules of these kinds that read nothing else, and the set rules that find nothing
# in a set without an object of these kinds: each the scope and kinds of its module's RULE (a
# test compares them).
# PromQL is read from PrometheusRules and from Prometheus rule files, which have no kind (None).
_PROMETHEUS_RULES: frozenset[str | None] = frozenset({"PrometheusRule", None})
_DRA_OBJECTS = frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate"})
DEFERRED: dict[str, tuple[Scope, frozenset[str | None]]] = {
    "GS012": ("set", frozenset({"ResourceClaim"})),
    "GS013": ("object", _DRA_OBJECTS),
    "GS015": ("set", _PROMETHEUS_RULES),
    "GS016": ("object", _PROMETHEUS_RULES | {"HorizontalPodAutoscaler", "ScaledObject"}),
    "GS017": ("object", _PROMETHEUS_RULES),
    "GS030": ("object", _DRA_OBJECTS),
    "GS039": ("set", frozenset({"ServiceMonitor", "PodMonitor"})),
    "GS041": ("object", _PROMETHEUS_RULES),
    "GS043": ("set", _PROMETHEUS_RULES),
    "GS045": ("object", frozenset({"DeviceClass"})),
    "GS057": ("set", frozenset({"NetworkPolicy"})),
    "GS059": ("set", frozenset({"Kustomization", "HelmRelease"})),
    "GS063": ("set", frozenset({"ResourceClaim", "ResourceClaimTemplate"})),
    "GS064": ("set", _PROMETHEUS_RULES),
    "GS066": ("set", frozenset({None})),
    "GS067": ("set", frozenset({"Namespace"})),
    "GS069": ("object", frozenset({"ConfigMap", None})),
}


def listed() -> dict[str, Rule | Deferred]:
    """Every rule for a run, by id: imported, or deferred (``DEFERRED``)."""
    return {
        rule_id: Deferred(rule_id, *DEFERRED[rule_id], _dotted(rule_id)) if rule_id in DEFERRED else load(rule_id)
        for rule_id in MODULES
    }


def load(rule_id: str) -> Rule:
    """The rule, its module imported."""
    return rule_of(_dotted(rule_id))


def _dotted(rule_id: str) -> str:
    return f"{__name__}.{MODULES[rule_id]}"


@cache
def _every_rule() -> dict[str, Rule]:
    return {rule_id: load(rule_id) for rule_id in MODULES}


def __getattr__(name: str) -> Any:
    """``RULES``: every rule by id, imported (tests and tools read it). A module attribute
    built on first use (PEP 562), so that importing this registry imports no rule."""
    if name == "RULES":
        return _every_rule()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
