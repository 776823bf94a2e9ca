"""gpustack: render a Kubernetes GPU stack from a typed spec, and lint manifests for GPU pitfalls."""

__version__ = "0.1.0"
