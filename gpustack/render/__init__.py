"""Render: compile a GpuStack spec into cluster config, manifests, Helm values and delivery objects."""
