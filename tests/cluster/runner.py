"""Container commands the harness runs, so that what a Job makes exists afterwards:

- a ``python3 -c`` script in a Python image (the rendered Secrets Job's), run for real by this
  machine's Python against the cluster's API server with what the kubelet would give the
  container: its plain ``env``, ``KUBERNETES_SERVICE_HOST`` and ``_PORT``, and the service
  account's token, namespace and CA (a TokenRequest for the pod's service account, so RBAC is
  the real one) in a folder standing for the projected volume at
  ``/var/run/secrets/kubernetes.io/serviceaccount/``
  (https://kubernetes.io/docs/tasks/run-application/access-api-from-pod/#directly-accessing-the-rest-api);
- ``kube-webhook-certgen create`` (the charts' admission hook Jobs): a port of what it does, a
  Secret ``--secret-name`` in ``--namespace`` with the CA, certificate and key under ``ca`` and
  ``--cert-name``/``--key-name`` (https://github.com/jet/kube-webhook-certgen, cmd/create.go);
  ``patch`` (the caBundle of a webhook nobody serves here) exits 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from tests.cluster.api import Api, ApiError
from tests.cluster.refusals import Exit

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount/"
TIMEOUT_SECONDS = 60


def runnable(container: dict[str, Any]) -> str | None:
    """The script of a ``python3 -c SCRIPT`` container of a Python image, else None."""
    words = [*container.get("command", []), *container.get("args", [])]
    image = container.get("image", "").rsplit("/", 1)[-1]
    if image.startswith("python:") and len(words) == 3 and words[0] in ("python", "python3") and words[1] == "-c":
        return words[2]
    return None


def certgen(api: Api, container: dict[str, Any]) -> Exit | None:
    """kube-webhook-certgen's ``create``: the Secret it makes (None: not certgen)."""
    if "kube-webhook-certgen" not in container.get("image", ""):
        return None
    words = [*container.get("command", []), *container.get("args", [])]
    if "create" not in words:
        return Exit(0, "Completed", "")
    flags = dict(w.removeprefix("--").split("=", 1) for w in words if w.startswith("--") and "=" in w)
    pem = "-----BEGIN CERTIFICATE-----\nZ3B1c3RhY2stdGVzdA==\n-----END CERTIFICATE-----\n"
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": flags["secret-name"]},
            "stringData": {"ca": pem, flags.get("cert-name", "cert"): pem, flags.get("key-name", "key"): pem}}
    try:
        api.create(f"/api/v1/namespaces/{flags['namespace']}/secrets", body)
    except ApiError as error:
        if error.code != 409:
            return Exit(1, "Error", str(error))
    return Exit(0, "Completed", "")


def run(api: Api, state: Path, pod: dict[str, Any], container: dict[str, Any]) -> Exit | None:
    """Run the container's command if the harness can; its exit (None: not runnable here)."""
    made = certgen(api, container)
    if made is not None:
        return made
    script = runnable(container)
    if script is None:
        return None
    namespace = pod["metadata"]["namespace"]
    account = pod["spec"].get("serviceAccountName") or "default"
    try:
        token = api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
                            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                             "spec": {"expirationSeconds": 3600}})["status"]["token"]
    except ApiError as error:
        return Exit(1, "Error", f"no service account token: {error}")
    server = urlparse(json.loads((state / "cluster.json").read_text())["server"])
    with tempfile.TemporaryDirectory() as folder:
        mounted = Path(folder)
        (mounted / "token").write_text(token)
        (mounted / "namespace").write_text(namespace)
        (mounted / "ca.crt").write_bytes(Path(api.ca_file).read_bytes())
        env = {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}
        env |= {"KUBERNETES_SERVICE_HOST": server.hostname or "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(server.port)}
        try:
            done = subprocess.run([sys.executable, "-c", script.replace(SERVICE_ACCOUNT_DIR, f"{folder}/")],
                                  env=env, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            return Exit(137, "Error", f"still running after {TIMEOUT_SECONDS} s")
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return Exit(done.returncode, "Error", last)
    return Exit(0, "Completed", done.stdout.strip())
