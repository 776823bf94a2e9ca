"""The GpuStack spec: models, GPU catalogue, loading with positions, cross-field checks."""
