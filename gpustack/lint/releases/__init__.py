"""Releases: Helm releases as GitOps tools declare them, one module per format.

``dispatch`` picks the format of an object (K3s HelmChart, Argo CD Application, Flux
HelmRelease, kustomize helmCharts) and settles the releases of the whole set; ``release``
is the common shape and ``helmvalues`` Helm's merge of values layers. A new format is one
module and one entry in ``dispatch.FORMATS``.
"""
