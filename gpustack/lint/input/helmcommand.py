"""One ``helm install|upgrade|template`` command line, read as Helm reads its words.

Scripts and READMEs install charts with commands users copy; ``releases/outside.py`` ties the
values files they name to the chart, and ``input/hostscripts`` keeps the GPU charts' installs
with their ``--set`` values so that a release declared by a command is judged like one a GitOps
object declares (``releases/commands.py``).

``--set`` is parsed as Helm's ``strvals`` parser does (https://helm.sh/docs/intro/using_helm/#the-format-and-limitations-of---set):
comma-separated ``key=value`` pairs, dotted keys (``\\.`` escapes a dot), list indices
(``a[0].b``), ``{x,y}`` lists, and typed values (``true``, ``false``, ``null``, integers);
``--set-string`` and ``--set-literal`` keep strings, ``--set-json`` takes JSON. A value that
depends on the shell (``$VAR``, ``$(...)``) or ``--set-file`` makes the command's values unknown.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

# helm flags that take a value (the next word, unless written --flag=value), so that their
# values are not taken for the release or the chart.
_VALUE_FLAGS = frozenset({
    "-f", "--values", "--version", "-n", "--namespace", "--set", "--set-string", "--set-file", "--set-json",
    "--set-literal", "--repo", "--timeout", "--kube-context", "--kubeconfig", "-o", "--output", "--post-renderer",
    "--post-renderer-args", "--description", "--username", "--password", "--ca-file", "--cert-file", "--key-file",
    "--keyring", "--name-template", "--history-max", "--api-versions", "-a", "--kube-version", "--show-only", "-s",
    "--output-dir", "--release-name", "--labels", "-l", "--wait-for", "--registry-config", "--repository-config",
    "--repository-cache", "--kube-token", "--kube-apiserver", "--kube-as-user", "--kube-as-group", "--kube-ca-file",
    "--kube-tls-server-name", "--burst-limit", "--qps",
})
# Short flags whose value may be written attached (``-nfoo``, ``-fvalues.yaml``), as Helm's flag parser takes them.
_ATTACHED = ("-f", "-n")
# Flags that take the values from the release installed before: what the set holds is not all of them.
_REUSED = frozenset({"--reuse-values", "--reset-then-reuse-values"})
_MAX_INDEX = 65536  # Helm's strvals refuses a list index above this (``MaxIndex``)
_SUBCOMMANDS = frozenset({"install", "upgrade", "template"})
_HELM = re.compile(r"(?:^|[\s;&|(`$])helm\s")
_SET_FLAGS = {"--set": "typed", "--set-string": "string", "--set-literal": "literal", "--set-json": "json"}
_SHELL = re.compile(r"\$|`")
_PUNCTUATION = frozenset("();<>|&")
_INTEGER = re.compile(r"^[-+]?(?:0|[1-9]\d*)$")
_INDEX = re.compile(r"^(.*?)\[(\d+)\]$")

SetPath = tuple[str | int, ...]


@dataclass(frozen=True)
class HelmCommand:
    """What a helm command installs: the chart reference as written, the release name, the
    namespace, the version, the values files in order and the ``--set`` pairs in order."""

    subcommand: str
    chart: str
    release: str | None
    namespace: str | None
    version: str | None
    values_files: tuple[str, ...]
    sets: tuple[tuple[SetPath, Any], ...] = ()
    unknown: str | None = None  # why its values cannot be known (a shell variable, a file read by --set-file)
    flags: frozenset[str] = field(default_factory=frozenset)


def find(line: str) -> HelmCommand | None:
    """The helm command a script's or note's line runs, if any: after ``&&``, ``$(`` or inside
    Markdown's inline code (which ends at the next backtick)."""
    match = _HELM.search(line)
    if match is None:
        return None
    command = line[match.start():].lstrip(" ;&|(`$")
    if line[: match.start() + 1].count("`") % 2:  # inside Markdown's inline code: it ends at the next backtick
        command = command.split("`", 1)[0]
    return parse(command)


def parse(line: str) -> HelmCommand | None:
    """The helm command at the start of ``line``; None when it is none or its words do not parse."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    if len(words) < 3 or words[0] != "helm" or words[1] not in _SUBCOMMANDS:
        return None
    positional: list[str] = []
    values: list[str] = []
    sets: list[tuple[SetPath, Any]] = []
    flags: set[str] = set()
    version = namespace = unknown = None
    generate_name = False
    index = 2
    while index < len(words):
        word = words[index]
        if word and all(char in _PUNCTUATION for char in word):
            break  # the command ends at a shell operator: ;, &&, |, a redirection
        if "`" in word:
            unknown = unknown or "a command substitution"
        if word[:2] in _ATTACHED and len(word) > 2 and not word.startswith("--"):
            word = f"{word[:2]}={word[2:]}"
        flag, equals, inline = word.partition("=")
        if not flag.startswith("-"):
            positional.append(word)
            index += 1
            continue
        flags.add(flag)
        value = inline if equals else None
        if value is None and flag in _VALUE_FLAGS and index + 1 < len(words):
            index += 1
            value = words[index]
        index += 1
        if flag in ("-f", "--values") and value:
            for part in (part for part in value.split(",") if part):
                if _SHELL.search(part) or "://" in part or part == "-":
                    unknown = unknown or f"values file {part}"
                else:
                    values.append(part)
        elif flag == "--version" and value:
            version = None if _SHELL.search(value) else value
        elif flag in ("-n", "--namespace") and value:
            namespace = None if _SHELL.search(value) else value
        elif flag in ("-g", "--generate-name"):
            generate_name = True
        elif flag == "--set-file":
            unknown = unknown or f"--set-file {value}"
        elif flag in _REUSED:
            unknown = unknown or f"{flag}: the values of the release before"
        elif flag in _SET_FLAGS and value is not None:
            try:
                sets += parse_set(value, _SET_FLAGS[flag])
            except ValueError as exc:
                unknown = unknown or f"{flag} {value} ({exc})"
    skip = 0 if generate_name or (words[1] == "template" and len(positional) == 1) else 1
    if len(positional) <= skip or _SHELL.search(positional[skip]):
        return None
    release = positional[0] if skip and not _SHELL.search(positional[0]) else None
    return HelmCommand(words[1], positional[skip], release, namespace, version, tuple(values), tuple(sets), unknown,
                       frozenset(flags))


def parse_set(text: str, kind: str = "typed") -> list[tuple[SetPath, Any]]:
    """``a.b=1,c[0]=x`` → ``[(("a", "b"), 1), (("c", 0), "x")]``; ValueError for what Helm
    would refuse or what the shell decides."""
    if _SHELL.search(text):
        raise ValueError("a shell expansion")
    if kind == "json":
        key, equals, raw = text.partition("=")
        if not equals:
            raise ValueError("no '='")
        try:
            return [(_key_path(key), json.loads(raw))]
        except RecursionError as exc:
            raise ValueError("JSON nested too deep") from exc
    pairs = [text] if kind == "literal" else _split(text, ",")
    found = []
    for pair in pairs:
        key, equals, raw = pair.partition("=")
        if not equals or not key:
            raise ValueError(f"{pair!r} is no key=value")
        found.append((_key_path(key), _value(raw, kind)))
    return found


def nested(sets: tuple[tuple[SetPath, Any], ...] | list[tuple[SetPath, Any]]) -> dict[str, Any]:
    """The ``--set`` pairs as the values mapping Helm builds of them (later pairs win)."""
    root: dict[str, Any] = {}
    for path, value in sets:
        _put(root, path, value)
    return root


def _put(node: Any, path: SetPath, value: Any) -> None:
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        while len(node) <= head:
            node.append(None)
        if not rest:
            node[head] = value
            return
        if not isinstance(node[head], dict | list) or isinstance(node[head], list) != isinstance(rest[0], int):
            node[head] = [] if isinstance(rest[0], int) else {}
        _put(node[head], rest, value)
        return
    if not rest:
        node[head] = value
        return
    child = node.get(head)
    if not isinstance(child, dict | list) or isinstance(child, list) != isinstance(rest[0], int):
        node[head] = [] if isinstance(rest[0], int) else {}
    _put(node[head], rest, value)


def _key_path(key: str) -> SetPath:
    path: list[str | int] = []
    for part in _split(key, "."):
        indices: list[int] = []
        while (match := _INDEX.match(part)) is not None:
            part, index = match.group(1), int(match.group(2))
            if index > _MAX_INDEX:
                raise ValueError(f"index {index} above Helm's {_MAX_INDEX}")
            indices.insert(0, index)
        if not part:
            raise ValueError(f"empty key in {key!r}")
        path += [part, *indices]
    return tuple(path)


def _value(raw: str, kind: str) -> Any:
    if kind == "literal":
        return raw
    if raw.startswith("{") and raw.endswith("}"):  # a list, for --set and --set-string alike
        return [_value(item, kind) for item in _split(raw[1:-1], ",")] if raw != "{}" else []
    raw = re.sub(r"\\(.)", r"\1", raw)  # Helm drops the backslash before any character
    if kind != "typed":
        return raw
    if raw.lower() in ("true", "false"):  # Helm compares with strings.EqualFold
        return raw.lower() == "true"
    if raw.lower() == "null":
        return None
    if _INTEGER.match(raw) and -(2**63) <= int(raw) < 2**63:  # an int64, else Helm keeps the string
        return int(raw)
    return raw


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside braces, a backslash keeping the next character
    (kept in the part, as Helm's parser reads it next)."""
    parts, current, depth, escaped = [], [], 0, False
    for char in text:
        if escaped:
            current.append(char if separator == "." and char == "." else "\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "{":
            depth += 1
            current.append(char)
        elif char == "}":
            depth -= 1
            current.append(char)
        elif char == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts
