"""Which LLM inference server a container runs (``data/llm-servers.yaml``): by its command and
args (``vllm serve``, ``python -m sglang.launch_server``, ``text-generation-launcher``,
``tritonserver``, ``llama-server``, whatever the image), else by an image whose entrypoint
starts the server, also when it is pulled through a registry mirror
(``mirror.example/docker.io/vllm/vllm-openai``), and the port it listens on."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpustack.lint.model import Container
from gpustack.shipped import lint_data

_REGISTRY_HOST = re.compile(r"localhost(:\d+)?|[^/]*[.:][^/]*")

@dataclass(frozen=True)
class Server:
    name: str
    images: tuple[re.Pattern[str], ...]
    commands: tuple[re.Pattern[str], ...]
    health: str
    port: int | None
    port_flags: tuple[str, ...]
    port_env: str | None


@cache
def servers() -> tuple[Server, ...]:
    data = lint_data("llm-servers.yaml")
    return tuple(
        Server(
            name,
            tuple(re.compile(p) for p in item.get("images", ())),
            tuple(re.compile(p) for p in item.get("commands", ())),
            item["health"],
            item.get("port"),
            tuple(item.get("portFlags", ())),
            item.get("portEnv"),
        )
        for name, item in data["servers"].items()
    )


def _words(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(item) for item in value if isinstance(item, (str, int))] if isinstance(value, list) else []


def server_of(container: Container) -> Server | None:
    """The server the container runs: by its command and args, or by an image whose entrypoint
    starts it when the container sets no command."""
    command = _words(container.data.get("command"))
    text = " ".join(command + _words(container.data.get("args")))
    for server in servers():
        if any(pattern.search(text) for pattern in server.commands):
            return server
    if command:
        return None
    paths = list(image_paths(container.image))
    return next((s for s in servers() if any(p.search(path) for p in s.images for path in paths)), None)


def image_paths(image: str) -> Iterator[str]:
    """The image as written, then without each leading registry host a mirror puts before the
    upstream reference (``mirror.example/docker.io/vllm/vllm-openai:v0.6`` is also
    ``docker.io/vllm/vllm-openai:v0.6`` and ``vllm/vllm-openai:v0.6``): a first path part with a
    dot or a port, or ``localhost``, names a registry (as container image references do)."""
    yield image
    rest = image
    while "/" in rest:
        first, rest = rest.split("/", 1)
        if not _REGISTRY_HOST.fullmatch(first):
            return
        yield rest



def listening_port(server: Server, container: Container) -> int | None:
    """The port the server listens on: its flag in the args, its environment variable (a value
    without a port keeps the default), or its default; None when a flag names no number."""
    words = " ".join(_words(container.data.get("command")) + _words(container.data.get("args"))).split()
    for index, word in enumerate(words):
        for flag in server.port_flags:
            value = word[len(flag) + 1 :] if word.startswith(f"{flag}=") else None
            if word == flag and index + 1 < len(words):
                value = words[index + 1]
            if value is not None:
                return int(value) if value.isdigit() else None
    env = container.data.get("env")
    for item in env if isinstance(env, list) else ():
        if isinstance(item, Mapping) and item.get("name") == server.port_env and server.port_env:
            digits = str(item.get("value", "")).rsplit(":", 1)[-1]  # "8080", "0.0.0.0:11434"
            if digits.isdigit():
                return int(digits)
    return server.port
