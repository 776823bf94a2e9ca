"""The cluster tier: a real control plane (etcd, kube-apiserver, kube-scheduler,
kube-controller-manager) with fake GPU nodes, for applying and scheduling rendered stacks.

`python -m tests.cluster up --spec SPEC --state DIR` / `python -m tests.cluster down --state DIR`.
"""
