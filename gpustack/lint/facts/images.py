"""Container image references: the repository and the tag of an image name."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=4096)  # a set runs the same images in many pods
def image_repository(image: str) -> str:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:…`` -> ``nvcr.io/nvidia/k8s-device-plugin``."""
    name = image.strip().split("@", 1)[0]
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > last_slash:
        name = name[:colon]
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/", "registry.hub.docker.com/"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def image_tag(image: str) -> str | None:
    """The tag of an image reference, or None when it has none."""
    name = image.strip().split("@", 1)[0]
    colon = name.rfind(":")
    return name[colon + 1:] if colon > name.rfind("/") else None
