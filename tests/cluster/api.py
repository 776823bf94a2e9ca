"""A small Kubernetes REST client (standard library only) for the harness and its fake kubelet.

It speaks to the harness's own API server with a bearer token over TLS checked against the
harness's CA; every error carries the API server's own message (a ``Status`` object's).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MERGE_PATCH = "application/merge-patch+json"


class ApiError(Exception):
    """A request the API server refused: ``code`` and its ``Status`` message."""

    def __init__(self, method: str, path: str, code: int, message: str) -> None:
        super().__init__(f"{method} {path}: {code} {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Api:
    server: str
    token: str
    ca_file: str

    @classmethod
    def from_state(cls, state: Path) -> Api:
        """The client for the cluster whose state folder is ``state`` (``cluster.json`` there)."""
        info = json.loads((state / "cluster.json").read_text())
        return cls(info["server"], info["token"], info["ca"])

    def _open(self, req: urllib.request.Request, timeout: float) -> Any:
        req.add_header("Authorization", f"Bearer {self.token}")
        return urllib.request.urlopen(req, context=ssl.create_default_context(cafile=self.ca_file), timeout=timeout)

    def request(self, method: str, path: str, body: Any = None, *, query: dict[str, Any] | None = None,
                content_type: str = "application/json", timeout: float = 60) -> Any:
        url = self.server + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": content_type, "Accept": "application/json"})
        try:
            with self._open(req, timeout) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            raise ApiError(method, path, error.code, _status_message(error.read())) from None
        try:
            return json.loads(text) if text else None
        except ValueError:  # /readyz and the other health paths answer plain text
            return text.decode(errors="replace")

    def watch(self, path: str, seconds: int, **query: Any) -> Iterator[dict[str, Any]]:
        """The events of one watch of ``path`` (ends after ``seconds`` or at an ERROR event)."""
        query |= {"watch": "1", "timeoutSeconds": seconds}
        req = urllib.request.Request(f"{self.server}{path}?{urllib.parse.urlencode(query)}")
        with self._open(req, seconds + 30) as stream:
            for line in stream:
                event = json.loads(line)
                if event["type"] == "ERROR":  # e.g. 410 Gone: the caller lists again
                    return
                yield event

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", path, query=query or None)

    def items(self, path: str, **query: Any) -> list[dict[str, Any]]:
        return self.get(path, **query)["items"]

    def create(self, path: str, body: Any) -> Any:
        return self.request("POST", path, body)

    def merge_patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, body, content_type=MERGE_PATCH)

    def delete(self, path: str, **query: Any) -> Any:
        return self.request("DELETE", path, query=query or None)


def _status_message(raw: bytes) -> str:
    try:
        return str(json.loads(raw).get("message", raw.decode(errors="replace")))
    except ValueError:
        return raw.decode(errors="replace")
