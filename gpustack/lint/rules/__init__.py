"""The rule registry: every rule module, listed explicitly (sorted by id).

A test proves this dict and ``policies/GS*.yaml`` describe the same rules.
"""

from __future__ import annotations

from gpustack.lint.registry import Rule
from gpustack.lint.rules import gs001_pci_0300_selector
from gpustack.lint.rules import gs002_privileged_gpu_pod
from gpustack.lint.rules import gs003_gpu_hostpath_mount
from gpustack.lint.rules import gs004_missing_runtime_class
from gpustack.lint.rules import gs005_rolling_update_on_packed_gpu
from gpustack.lint.rules import gs006_gpu_request_limit_mismatch
from gpustack.lint.rules import gs007_visible_devices_env
from gpustack.lint.rules import gs008_gpu_memory_utilization_virtual_vram
from gpustack.lint.rules import gs009_duplicate_gpu_device_plugins
from gpustack.lint.rules import gs010_hami_node_label
from gpustack.lint.rules import gs011_dra_driver_root
from gpustack.lint.rules import gs012_orphan_resource_claim
from gpustack.lint.rules import gs013_dra_feature_gate
from gpustack.lint.rules import gs014_prometheusrule_not_selected
from gpustack.lint.rules import gs015_xid_alert_coverage
from gpustack.lint.rules import gs016_gpu_util_as_saturation
from gpustack.lint.rules import gs017_gpu_vector_match_without_node
from gpustack.lint.rules import gs018_profiler_vs_dcgm
from gpustack.lint.rules import gs019_instance_type_selector_on_k3s
from gpustack.lint.rules import gs020_s3_streamer_metadata
from gpustack.lint.rules import gs021_label_churn
from gpustack.lint.rules import gs022_unpinned_gpu_component
from gpustack.lint.rules import gs023_gpu_container_hardening
from gpustack.lint.rules import gs024_mig_on_non_mig_gpu
from gpustack.lint.rules import gs025_plaintext_credentials
from gpustack.lint.rules import gs026_unschedulable_gpu_selector
from gpustack.lint.rules import gs027_gpu_request_exceeds_node
from gpustack.lint.rules import gs028_untolerated_gpu_taint
from gpustack.lint.rules import gs029_yaml11_boolean_string
from gpustack.lint.rules import gs030_invalid_dra_cel
from gpustack.lint.rules import gs031_unknown_chart_value
from gpustack.lint.rules import gs032_nfd_label_mismatch
from gpustack.lint.rules import gs033_scheduler_version_skew
from gpustack.lint.rules import gs034_feature_gate_lifecycle
from gpustack.lint.rules import gs035_gpu_operator_driver_on_host_pools
from gpustack.lint.rules import gs036_shared_gpu_requests_over_one
from gpustack.lint.rules import gs037_multi_gpu_without_shm
from gpustack.lint.rules import gs039_monitor_selects_nothing
from gpustack.lint.rules import gs040_llm_server_without_readiness
from gpustack.lint.rules import gs041_dcgm_gauge_rate
from gpustack.lint.rules import gs042_dead_chart_value
from gpustack.lint.rules import gs043_dcgm_scraped_labels
from gpustack.lint.rules import gs044_nvswitch_without_fabric_manager
from gpustack.lint.rules import gs045_whole_gpu_class_admits_mig
from gpustack.lint.rules import gs046_hami_scheduler_bypassed
from gpustack.lint.rules import gs047_gpu_label_without_labeller
from gpustack.lint.rules import gs048_gpu_node_agent_untolerated_gpu_taint
from gpustack.lint.rules import gs049_single_gpu_rollout_on_rwo_volume
from gpustack.lint.rules import gs050_dcgm_exporter_requests_gpu
from gpustack.lint.rules import gs051_chart_value_of_the_wrong_kind
from gpustack.lint.rules import gs052_second_dcgm_exporter
from gpustack.lint.rules import gs053_device_plugin_switched_off
from gpustack.lint.rules import gs054_nvidia_runtime_without_gpu_request
from gpustack.lint.rules import gs055_gpu_operator_toolkit_on_talos_toolkit
from gpustack.lint.rules import gs056_plugin_strategy_toolkit_ignores
from gpustack.lint.rules import gs057_network_policies_not_enforced
from gpustack.lint.rules import gs058_gpu_service_on_node_ports
from gpustack.lint.rules import gs059_flux_dependency_not_deployed
from gpustack.lint.rules import gs060_unserved_gpu_api
from gpustack.lint.rules import gs061_removed_scheduler_config
from gpustack.lint.rules import gs062_runtimeclass_selects_no_gpu_pool
from gpustack.lint.rules import gs063_claim_no_pool_can_satisfy
from gpustack.lint.rules import gs064_dcgm_field_not_collected
from gpustack.lint.rules import gs065_gpu_software_without_gpu_request
from gpustack.lint.rules import gs066_values_file_not_passed
from gpustack.lint.rules import gs067_gpu_pod_refused_by_pod_security

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        gs001_pci_0300_selector.RULE,
        gs002_privileged_gpu_pod.RULE,
        gs003_gpu_hostpath_mount.RULE,
        gs004_missing_runtime_class.RULE,
        gs005_rolling_update_on_packed_gpu.RULE,
        gs006_gpu_request_limit_mismatch.RULE,
        gs007_visible_devices_env.RULE,
        gs008_gpu_memory_utilization_virtual_vram.RULE,
        gs009_duplicate_gpu_device_plugins.RULE,
        gs010_hami_node_label.RULE,
        gs011_dra_driver_root.RULE,
        gs012_orphan_resource_claim.RULE,
        gs013_dra_feature_gate.RULE,
        gs014_prometheusrule_not_selected.RULE,
        gs015_xid_alert_coverage.RULE,
        gs016_gpu_util_as_saturation.RULE,
        gs017_gpu_vector_match_without_node.RULE,
        gs018_profiler_vs_dcgm.RULE,
        gs019_instance_type_selector_on_k3s.RULE,
        gs020_s3_streamer_metadata.RULE,
        gs021_label_churn.RULE,
        gs022_unpinned_gpu_component.RULE,
        gs023_gpu_container_hardening.RULE,
        gs024_mig_on_non_mig_gpu.RULE,
        gs025_plaintext_credentials.RULE,
        gs026_unschedulable_gpu_selector.RULE,
        gs027_gpu_request_exceeds_node.RULE,
        gs028_untolerated_gpu_taint.RULE,
        gs029_yaml11_boolean_string.RULE,
        gs030_invalid_dra_cel.RULE,
        gs031_unknown_chart_value.RULE,
        gs032_nfd_label_mismatch.RULE,
        gs033_scheduler_version_skew.RULE,
        gs034_feature_gate_lifecycle.RULE,
        gs035_gpu_operator_driver_on_host_pools.RULE,
        gs036_shared_gpu_requests_over_one.RULE,
        gs037_multi_gpu_without_shm.RULE,
        gs039_monitor_selects_nothing.RULE,
        gs040_llm_server_without_readiness.RULE,
        gs041_dcgm_gauge_rate.RULE,
        gs042_dead_chart_value.RULE,
        gs043_dcgm_scraped_labels.RULE,
        gs044_nvswitch_without_fabric_manager.RULE,
        gs045_whole_gpu_class_admits_mig.RULE,
        gs046_hami_scheduler_bypassed.RULE,
        gs047_gpu_label_without_labeller.RULE,
        gs048_gpu_node_agent_untolerated_gpu_taint.RULE,
        gs049_single_gpu_rollout_on_rwo_volume.RULE,
        gs050_dcgm_exporter_requests_gpu.RULE,
        gs051_chart_value_of_the_wrong_kind.RULE,
        gs052_second_dcgm_exporter.RULE,
        gs053_device_plugin_switched_off.RULE,
        gs054_nvidia_runtime_without_gpu_request.RULE,
        gs055_gpu_operator_toolkit_on_talos_toolkit.RULE,
        gs056_plugin_strategy_toolkit_ignores.RULE,
        gs057_network_policies_not_enforced.RULE,
        gs058_gpu_service_on_node_ports.RULE,
        gs059_flux_dependency_not_deployed.RULE,
        gs060_unserved_gpu_api.RULE,
        gs061_removed_scheduler_config.RULE,
        gs062_runtimeclass_selects_no_gpu_pool.RULE,
        gs063_claim_no_pool_can_satisfy.RULE,
        gs064_dcgm_field_not_collected.RULE,
        gs065_gpu_software_without_gpu_request.RULE,
        gs066_values_file_not_passed.RULE,
        gs067_gpu_pod_refused_by_pod_security.RULE,
    )
}
