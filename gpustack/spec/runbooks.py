"""Where the alerts' runbook links point: the rendered README, by an absolute URL where one is known.

Alertmanager, Slack and PagerDuty show ``runbook_url`` as a link; only an absolute URL is
clickable there. ``monitoring.alerts.runbookBaseUrl`` says it; without it, a stack delivered by
Argo CD from a GitHub or GitLab repository gets the README's page in that repository (the two
hosts' file-view paths: ``/blob/<revision>/<path>`` and ``/-/blob/<revision>/<path>``).

A stack delivered from another Git host is refused without ``runbookBaseUrl``
(component_checks.check_runbook_base): the README does have a page there, but file-view paths differ per host
(Gitea ``/src/branch/…``, Bitbucket ``/src/<revision>/…``), and guessing would render links that
404, which is worse than asking. A stack with no Git repository at all keeps the relative
``README.md`` (the README ships only in the rendered folder, so no absolute URL exists to derive):
each alert's description carries the runbook text itself, and the rendered README says how to
make the links absolute.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from gpustack.spec.models import GpuStack

RELATIVE = "README.md"
_BLOB_PATHS = {"github": "blob", "gitlab": "-/blob"}


def readme_url(stack: GpuStack) -> str:
    """The runbook base: the spec's URL, the README in the Argo CD repository, or ``README.md``."""
    alerts = stack.spec.monitoring.alerts
    if alerts.runbookBaseUrl:
        return alerts.runbookBaseUrl
    return repository_readme(stack) or RELATIVE


def repository_readme(stack: GpuStack) -> str | None:
    """The rendered README's page in the Argo CD repository on GitHub or GitLab; None elsewhere."""
    argocd = stack.spec.gitops.argocd
    if not argocd.enabled or not argocd.repoURL:
        return None
    parts = urlsplit(argocd.repoURL)
    host = parts.hostname or ""
    blob = next((path for name, path in _BLOB_PATHS.items() if name in host.split(".")), None)
    if parts.scheme != "https" or blob is None:
        return None
    repository = parts.path.removesuffix("/").removesuffix(".git")
    folder = stack.spec.gitops.stack_path(stack.metadata.name)
    return f"https://{host}{repository}/{blob}/{argocd.targetRevision}/{folder}/README.md"

