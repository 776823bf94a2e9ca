"""Chart templates of value references and if blocks are read as Helm renders them with the
chart's values.yaml; anything else stays an input error, and --fix never writes a template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack.lint.input import charttemplates

from lint_support import gpustack, write_tree

CHART = "apiVersion: v2\nname: apps\nversion: 0.1.0\n"
VALUES = (
    "spec:\n  destination:\n    server: https://kubernetes.default.svc\n"
    "gpu:\n  enabled: true\nmonitoring:\n  enabled: false\nreplicas: 2\nresources:\n  limits: {cpu: 1}\n"
)
APPLICATION = """{{- if .Values.gpu.enabled }}
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: gpu-operator
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://helm.ngc.nvidia.com/nvidia
    targetRevision: v24.9.2
    chart: gpu-operator
    helm:
      values: |
        cdi.enabled: true
  destination:
    namespace: gpu-operator
    server: {{ .Values.spec.destination.server }}
{{- end }}
"""


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Chart.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: cuda}}
  template:
    metadata: {labels: {app: cuda}}
    spec:
      containers:
        - name: cuda
          image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
          resources:
            requests: {nvidia.com/gpu: 1}
"""


def _chart(tmp_path: Path, template: str) -> Path:
    return write_tree(tmp_path, {"apps/Chart.yaml": CHART, "apps/values.yaml": VALUES, "apps/templates/t.yaml": template})


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("server: {{ .Values.spec.destination.server }}\n", "server: https://kubernetes.default.svc\n"),
        ("replicas: {{ .Values.replicas }}\nname: {{ .Chart.Name }}-{{ .Release.Name | quote }}\n",
         'replicas: 2\nname: apps-"release-name"\n'),
        ("a: 1\n{{- if .Values.monitoring.enabled }}\nb: 2\n{{- else }}\nc: 3\n{{- end }}\n", "a: 1\n\n\n\nc: 3\n\n"),
        ("{{- if not .Values.missing }}\nd: 4\n{{- end }}\n", "\nd: 4\n\n"),  # unset is false
    ],
)
def test_simple_templates_render_line_for_line(tmp_path: Path, template: str, expected: str) -> None:
    root = _chart(tmp_path, template)
    rendered = charttemplates.render(str(root / "apps/templates/t.yaml"), template.encode())
    assert rendered is not None
    lines = rendered.decode().split("\n")
    assert lines[0].endswith(charttemplates.RENDERED_MARK) and charttemplates.is_rendered(rendered.decode())
    lines[0] = lines[0].removesuffix(charttemplates.RENDERED_MARK).rstrip()
    assert "\n".join(lines) == expected


@pytest.mark.parametrize(
    "template",
    [
        "resources: {{ .Values.resources }}\n",  # a map: Helm prints Go's syntax
        "name: {{ include \"apps.fullname\" . }}\n",
        "{{- toYaml .Values.resources | nindent 2 }}\n",
        "x: {{ .Values.nothing }}\n",
        "{{- if .Values.gpu.enabled }}\nunclosed: true\n",
        "{{- range .Values.list }}\n- {{ . }}\n{{- end }}\n",
    ],
)
def test_anything_else_stays_a_template(tmp_path: Path, template: str) -> None:
    root = _chart(tmp_path, template)
    assert charttemplates.render(str(root / "apps/templates/t.yaml"), template.encode()) is None


def test_windows_line_endings_keep_the_line_numbers(tmp_path: Path) -> None:
    template = "a: 1\r\nserver: {{ .Values.spec.destination.server }}\r\nc: 3\r\n"
    root = _chart(tmp_path, template)
    rendered = charttemplates.render(str(root / "apps/templates/t.yaml"), template.encode())
    assert rendered is not None and rendered.decode().split("\n")[1:] == ["server: https://kubernetes.default.svc", "c: 3", ""]


def test_a_file_outside_a_charts_templates_is_not_rendered(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"templates/t.yaml": "a: {{ .Values.x }}\n"})  # no Chart.yaml beside
    assert charttemplates.render(str(root / "templates/t.yaml"), b"a: {{ .Values.x }}\n") is None


def test_an_app_of_apps_template_is_linted_and_never_fixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _chart(tmp_path, APPLICATION)
    template = root / "apps/templates/t.yaml"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _, out, _ = gpustack(capsys, "lint", str(root / "apps"), "--format", "json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "GS031"]
    assert finding["line"] == 15 and "nested maps, not dotted paths" in finding["fix"]
    (root / "apps/templates/deployment.yaml").write_text(DEPLOYMENT)
    _, out, _ = gpustack(capsys, "lint", str(root / "apps"), "--format", "json")
    assert any(f["rule"] == "GS006" and f["file"].endswith("deployment.yaml") for f in json.loads(out)["findings"])
    _, out, err = gpustack(capsys, "lint", str(root / "apps"), "--fix")
    assert "GS006 is not fixed: its file is a chart template" in out + err
    assert template.read_text() == APPLICATION
    assert (root / "apps/templates/deployment.yaml").read_text() == DEPLOYMENT
