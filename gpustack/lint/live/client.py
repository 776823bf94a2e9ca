"""Read a live cluster, list-only, with lightkube's kubeconfig handling (the ``cluster`` extra).

lightkube reads the kubeconfig as kubectl does (contexts, certificates, tokens, exec
credential plugins) and gives an HTTP client signed in to the server; the reads themselves are
plain paginated GETs of ``reads.READS``, so each object stays the server's JSON and Helm's
release Secrets are read as metadata only (their payloads never travel). Every failure is a
``ClusterError`` whose message says what to do; a list cut short (a ``continue`` token the
server then refuses, 410 Gone) is an error too, never a silently partial context.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gpustack.errors import GpustackError
from gpustack.lint.live.reads import CONTEXT, VERSION_PATH, WORKLOADS, Read

if TYPE_CHECKING:
    import httpx2

EXTRA = "kube-gpustack[cluster]"
PAGE = 500  # objects a list request returns at most; the rest comes with its continue token
TIMEOUT_SECONDS = 10.0
# lightkube runs exec credential plugins of client.authentication.k8s.io/v1alpha1 and v1beta1
# (the version the cloud providers' kubeconfigs name: aws eks, gke-gcloud-auth-plugin, kubelogin).
EXEC_V1_HINT = (
    "lightkube runs exec credential plugins of apiVersion client.authentication.k8s.io/v1beta1: "
    "name that version in the kubeconfig user's exec section if the plugin supports it"
)
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"


class ClusterError(GpustackError):
    """The cluster could not be read: unreachable, slow, unauthorised, forbidden, cut short."""


@dataclass
class Snapshot:
    """What was read: objects by read, the server's version, and what optional reads missed."""

    where: str  # the kubeconfig context, for messages
    version: dict[str, Any] = field(default_factory=dict)
    objects: dict[Read, list[dict[str, Any]]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # optional reads not made, and why

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [item for read, items in self.objects.items() if read.kind == kind for item in items]


def read_cluster(
    kubeconfig: str | None, context: str | None, *, workloads: bool = False, timeout: float = TIMEOUT_SECONDS
) -> Snapshot:
    """The cluster context (and with ``workloads`` the running workloads) of ``context`` in
    ``kubeconfig`` (None: $KUBECONFIG, else ~/.kube/config, as kubectl reads them)."""
    http, where = _connect(kubeconfig, context, timeout)
    snapshot = Snapshot(where)
    with http:
        snapshot.version = _get(http, VERSION_PATH, where)
        for read in CONTEXT:
            _read_into(snapshot, http, read)
        if workloads:
            versions = {_crd_name(item): _stored_version(item) for item in snapshot.of("CustomResourceDefinition")}
            for read in WORKLOADS:
                if not read.crd:
                    _read_into(snapshot, http, read)
                elif versions.get(str(read)):  # installed: read at the version it stores
                    _read_into(snapshot, http, replace(read, version=versions[str(read)]))
    return snapshot


def _crd_name(crd: dict[str, Any]) -> str:
    return str((crd.get("metadata") or {}).get("name", ""))


def _stored_version(crd: dict[str, Any]) -> str | None:
    """The version a CRD stores its objects at (served, so it can be listed), else one served."""
    served = [v for v in (crd.get("spec") or {}).get("versions") or () if isinstance(v, dict) and v.get("served")]
    stored = [v for v in served if v.get("storage")] or served
    return str(stored[0]["name"]) if stored and stored[0].get("name") else None


def _connect(kubeconfig: str | None, context: str | None, timeout: float) -> tuple[httpx2.Client, str]:
    try:
        import httpx2
        from lightkube.config import client_adapter
        from lightkube.config.kubeconfig import KubeConfig
        from lightkube.core.exceptions import ConfigError
    except ImportError:
        raise ClusterError(
            f"reading a live cluster needs the Kubernetes client: pip install '{EXTRA}'"
        ) from None
    try:
        config = KubeConfig.from_file(kubeconfig) if kubeconfig else KubeConfig.from_env()
        single = config.get(context_name=context) if context else config.get()
        if single is None:
            raise ConfigError("no current-context: name one with --context")
        # trust_env: HTTPS_PROXY and NO_PROXY apply, as they do to kubectl
        params = client_adapter.ConnectionParams(timeout=httpx2.Timeout(timeout), trust_env=True)
        http = client_adapter.Client(single, params)
    except KeyError as exc:  # lightkube's lookup of a context, cluster or user by name
        raise ClusterError(f"{kubeconfig or 'the default kubeconfig'}: no {exc} in it; check --context") from None
    except Exception as exc:  # a file that is no kubeconfig fails in lightkube's reading in many ways
        where = kubeconfig or "the default kubeconfig"
        mark = getattr(exc, "problem_mark", None)  # a YAML syntax error says where
        where += f":{mark.line + 1}" if mark is not None else ""
        raise ClusterError(f"{where}: not a usable kubeconfig ({_reason(exc)}); check the file and --context") from None
    return http, f"{single.cluster.server} (context {single.context_name})"


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _read_into(snapshot: Snapshot, http: httpx2.Client, read: Read) -> None:
    try:
        snapshot.objects[read] = list(_list(http, read, snapshot.where))
    except _Refused as refused:
        if not read.optional:
            raise ClusterError(refused.message) from None
        snapshot.missing.append(refused.message)


class _Refused(Exception):
    """A refused request: forbidden or not served, which an optional read may survive."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _list(http: httpx2.Client, read: Read, where: str) -> Iterator[dict[str, Any]]:
    path = f"/apis/{read.group}/{read.version}" if read.group else f"/api/{read.version}"
    path += f"/{read.resource}"
    query: dict[str, Any] = {"limit": PAGE, **({"labelSelector": read.labels} if read.labels else {})}
    headers = {"Accept": METADATA_ONLY} if read.kind == "Secret" else {}
    pages = 0
    while True:
        page = _get(http, path, where, query=query, headers=headers, read=read, paged=pages > 0)
        # An empty list may come with items null or none at all (a PartialObjectMetadataList's)
        items = page.get("items") or ([] if str(page.get("kind", "")).endswith("List") else None)
        if not isinstance(items, list):
            raise ClusterError(f"{where}: list {read} answered without items; is this a Kubernetes API server?")
        for item in items:
            if isinstance(item, dict):
                yield {"apiVersion": read.api_version, "kind": read.kind, **item}
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return
        query = {**query, "continue": token}
        pages += 1


def _get(
    http: httpx2.Client,
    path: str,
    where: str,
    *,
    query: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    read: Read | None = None,
    paged: bool = False,
) -> dict[str, Any]:
    import httpx2

    what = f"list {read}" if read else f"get {path}"
    try:
        response = http.get(path, params=query, headers=headers)
    except httpx2.TimeoutException:
        raise ClusterError(
            f"{where}: {what} got no answer in {http.timeout.read or TIMEOUT_SECONDS:g} s; is the server up "
            "and reachable from here? (--request-timeout waits longer)"
        ) from None
    except (httpx2.HTTPError, OSError) as exc:
        raise ClusterError(f"{where}: cannot reach the server ({_reason(exc)}); check the kubeconfig's "
                           "server address and that the cluster is up") from None
    except Exception as exc:  # an exec credential plugin that fails raises lightkube's own errors
        hint = EXEC_V1_HINT if "exec api version" in str(exc) else "check the kubeconfig's user"
        raise ClusterError(f"{where}: cannot sign in ({_reason(exc)}); {hint}") from None
    if response.status_code == 200:
        try:
            body = response.json()
        except ValueError:
            raise ClusterError(f"{where}: {what} answered with something not JSON; is this a Kubernetes API "
                               "server?") from None
        if isinstance(body, dict):
            return body
        raise ClusterError(f"{where}: {what} answered with something not an object")
    raise _failure(response.status_code, _status_message(response), where, what, read, paged)


def _failure(code: int, message: str, where: str, what: str, read: Read | None, paged: bool) -> Exception:
    if paged:  # 410 Gone (the continue token expired) or any failure after the first page
        return ClusterError(f"{where}: {what} was cut short after its first page ({code} {message}): the "
                            "context would be partial; run again")
    if code == 401:
        return ClusterError(f"{where}: unauthorised ({message}); the kubeconfig's credentials are wrong or expired")
    if code == 403:
        text = f"{where}: forbidden to {what} ({message}); grant the role `gpustack lint --print-rbac` prints"
        return _Refused(text) if read is not None else ClusterError(text)
    if code == 404 and read is not None:
        return _Refused(f"{where}: the server does not serve {read.api_version} {read.resource}")
    return ClusterError(f"{where}: {what}: {code} {message}")


def _status_message(response: Any) -> str:
    """The message of the server's ``Status`` object, else the body's first line."""
    try:
        body = response.json()
        if isinstance(body, dict) and body.get("message"):
            return str(body["message"])
    except ValueError:
        pass
    return (response.text or response.reason_phrase or "").strip().splitlines()[0] if response.text else ""
