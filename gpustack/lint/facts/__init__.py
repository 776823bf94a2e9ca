"""Facts: what a rule may know about the objects and the cluster, computed once.

Pod specs and their GPU consumers (``podspec``, ``consumers``, ``quantities``, ``claims``),
system components and images, node pools and where a pod can land (``pools``, ``scheduling``,
``placement``, ``from_spec``), runtime evidence, PromQL, and pods that chart values create.
Rules import from here; nothing here imports a rule.
"""
