"""``gpustack lint --kubeconfig``, ``--cluster`` and ``--print-rbac``: a live cluster, read
list-only, as context for the cluster-aware rules and as the workloads to lint.

``reads`` is the one table of what is read (the client reads it, ``--print-rbac`` prints
it); ``client`` reads it with lightkube (the ``cluster`` extra, imported only here);
``pools`` turns the nodes into the rules' ``ClusterFacts`` and compares them with a spec;
``workloads`` turns the running workloads into the linted input.
"""
