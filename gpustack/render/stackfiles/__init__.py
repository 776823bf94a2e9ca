"""Stack files: what is written from the merged render rather than by one component.

The cluster configuration (``cluster_config``), the README with its host steps
(``readme``, ``host_steps``, ``nvidia_driver``, ``host_os``, ``kubernetes_steps``, ``step``) and the stack's own
``.gpustack.yaml`` for ``gpustack lint`` (``lint_config``).
"""
