"""Chart templates simple enough to render here: value references and ``if`` blocks only.

A chart kept in Git (an Argo CD app-of-apps chart, a small workload chart) holds its objects as
templates, which do not parse as YAML (``server: {{ .Values.spec.destination.server }}``), so
they were input errors and no rule read them. Many use nothing but references to values and
``if``/``else``/``end`` around whole lines. Such a template is rendered as Helm renders it
(https://helm.sh/docs/chart_template_guide/values_files/, https://pkg.go.dev/text/template):

- ``{{ .Values.a.b }}`` (optionally ``| quote``), a string, number or boolean of the chart's
  ``values.yaml`` (the chart folder above ``templates/``); ``.Chart.Name`` and the other fields of
  its ``Chart.yaml``; ``.Release.Name`` and ``.Release.Namespace`` as ``helm template`` gives them
  by default (``release-name``, ``default``);
- ``{{- if .Values.a.b }}`` (``if not …``), ``{{- else }}``, ``{{- end }}`` alone on their lines,
  with Go's truth (false, 0, "", null, an empty list or map are false).

Anything else (``include``, ``toYaml``, ``range``, ``with``, a value that is a map or list, a
value the file does not set printed, another variable) leaves the template as it was (a value not
set is false in an ``if``): an input error
that says so. Every line keeps its number (a directive's line is left empty), so findings point
at the template's lines; the first line carries ``RENDERED_MARK`` so that ``--fix`` leaves the
template alone.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import yaml

RENDERED_MARK = "# gpustack: read from a chart template with its values.yaml"
_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
_VALUE = re.compile(r"^\.(Values|Release|Chart)((?:\.[A-Za-z_][\w-]*)+)(\s*\|\s*quote)?$")
# What ``helm template`` gives a release by default (https://helm.sh/docs/helm/helm_template/).
_RELEASE = {"Name": "release-name", "Namespace": "default", "Service": "Helm", "IsInstall": True, "IsUpgrade": False}
_IF = re.compile(r"^if\s+(not\s+)?\.Values((?:\.[A-Za-z_][\w-]*)+)$")
_DIRECTIVE_LINE = re.compile(r"^\s*\{\{-?\s*(.*?)\s*-?\}\}\s*$")
_MISSING = object()


def chart_root(file: str) -> str | None:
    """The chart folder of a file under its ``templates/`` (a ``Chart.yaml`` beside that), or None."""
    folder = os.path.dirname(file)
    if os.path.basename(folder) != "templates":
        return None
    root = os.path.dirname(folder)
    return root if os.path.isfile(os.path.join(root, "Chart.yaml")) else None


def render(file: str, data: bytes) -> bytes | None:
    """The template rendered with its chart's values, or None where it is not that simple."""
    if b"{{" not in data or not file.endswith((".yaml", ".yml")):
        return None
    root = chart_root(file)
    if root is None:
        return None
    try:
        text = data.decode("utf-8-sig").replace("\r\n", "\n")  # the mark must not fall after a \r
        with open(os.path.join(root, "values.yaml"), encoding="utf-8") as stream:
            values = yaml.safe_load(stream)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    try:
        with open(os.path.join(root, "Chart.yaml"), encoding="utf-8") as stream:
            chart = yaml.safe_load(stream)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    scope = {"Values": values if isinstance(values, dict) else {}, "Release": _RELEASE,
             "Chart": {str(key)[:1].upper() + str(key)[1:]: value for key, value in chart.items()} if isinstance(chart, dict) else {}}
    rendered = _render(text, scope)
    if rendered is None:
        return None
    lines = rendered.split("\n")
    lines[0] = f"{lines[0]}  {RENDERED_MARK}" if lines[0].strip() else RENDERED_MARK
    return "\n".join(lines).encode()


def is_rendered(text: str) -> bool:
    """Whether a file's text is a chart template ``render`` read (``--fix`` must not write it)."""
    return text.split("\n", 1)[0].endswith(RENDERED_MARK)


def _render(text: str, scope: dict[str, Any]) -> str | None:
    out: list[str] = []
    stack: list[bool] = []  # whether each open if's branch at this line is taken
    for line in text.split("\n"):
        shown = all(stack)
        directive = _DIRECTIVE_LINE.match(line)
        if directive and not _VALUE.match(directive.group(1)):
            action = directive.group(1)
            if (condition := _IF.match(action)) is not None:
                found = _lookup(scope["Values"], condition.group(2))  # a value not set is false
                stack.append(_truthy(None if found is _MISSING else found) != bool(condition.group(1)))
            elif action == "else" and stack:
                stack.append(not stack.pop())
            elif action == "end" and stack:
                stack.pop()
            else:
                return None
            out.append("")
            continue
        if not shown:
            out.append("")
            continue
        replaced = _substitute(line, scope)
        if replaced is None:
            return None
        out.append(replaced)
    return "\n".join(out) if not stack else None


def _substitute(line: str, scope: dict[str, Any]) -> str | None:
    failed = False

    def value(match: re.Match[str]) -> str:
        nonlocal failed
        reference = _VALUE.match(match.group(1))
        found = _lookup(scope.get(reference.group(1)), reference.group(2)) if reference else _MISSING
        if reference is None or found is _MISSING or found is None or isinstance(found, dict | list):
            failed = True  # Helm prints maps, lists and nulls in Go's syntax: not YAML to read
            return ""
        text = json.dumps(found) if isinstance(found, bool) else str(found)
        return json.dumps(text) if reference.group(3) else text

    rendered = _ACTION.sub(value, line)
    return None if failed else rendered


def _lookup(values: Any, dotted: str) -> Any:
    node = values
    for key in dotted.strip(".").split("."):
        if not isinstance(node, dict) or key not in node:
            return _MISSING
        node = node[key]
    return node


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and not (isinstance(value, dict | list) and not value)
