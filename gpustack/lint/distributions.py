"""The Kubernetes distributions gpustack knows by name: what ``--distribution`` and the config's
``distribution`` accept. Rules that treat some of them apart (GS004, GS019) name those in
their own tables; this is the one list of all of them, small enough for the command line
to import when it declares the option.
"""

DISTRIBUTIONS = ("k3s", "rke2", "k0s", "kubeadm", "talos", "microk8s", "gke", "eks", "aks", "openshift", "generic")
