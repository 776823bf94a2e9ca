"""The .Values paths Go templates read, and the keys values.yaml shows only in comments."""

from __future__ import annotations

from gpustack.lint.charts.declaredkeys import commented_keys
from gpustack.lint.charts.gotemplate import reads

TEMPLATE = """
{{- define "x.sel" -}}
app: {{ .name }}
{{ toYaml .extra }}
{{- end }}
{{- if .Values.noTimestamp }}{{ .Values.sleepInterval | quote }}{{ end }}
{{- with .Values.gfd }}{{ .enabled }}{{ toYaml .nodeSelector | nindent 4 }}{{ else }}{{ .Values.other }}{{ end }}
{{ range $k, $v := .Values.labels }}{{ $k }}: {{ $v.x }}{{ end }}
{{ index .Values "kube-state-metrics" "nameOverride" }}
{{ $root := . }}{{ $root.Values.r.s }}
{{ include "x.sel" .Values.svc }}
{{ include "x.sel" (dict "name" .Values.n "extra" .Values.e) }}
{{ (.Values.p | default dict).q }}
{{ toYaml .Values | sha256sum }}
{{- /* .Values.commented */ -}}
{{ tpl (toYaml .Values.tplme) . }}
{{ index .Values.hosts 0 }}
{{ with .Subcharts.gfd }}{{ .Values.sleepInterval }}{{ end }}
"""


def test_reads_and_passthroughs() -> None:
    found = reads({"t.yaml": TEMPLATE})
    assert found.read >= {
        ("noTimestamp",), ("sleepInterval",), ("gfd", "enabled"), ("other",), ("kube-state-metrics", "nameOverride"),
        ("r", "s"), ("svc", "name"), ("n",), ("p", "q"), ("gfd", "sleepInterval"),
    }
    assert found.passthrough == {
        ("gfd", "nodeSelector"), ("labels",), ("svc", "extra"), ("e",), ("tplme",), ("hosts",),
    }
    assert ("commented",) not in found.read  # a comment
    assert () not in found.passthrough  # a checksum of all values passes nothing through


def test_else_restores_the_dot() -> None:
    found = reads({"t": "{{ with .Values.a }}{{ .b }}{{ else }}{{ .Values.c }}{{ end }}{{ .Values.d }}"})
    assert found.read == {("a",), ("a", "b"), ("c",), ("d",)}


def test_commented_keys_sit_under_their_parents() -> None:
    text = """\
alertmanager:
  alertmanagerSpec:
    ## The secret to use.
    # configSecret:
    script: |
      # notAKey: inside a block scalar
    # ref: https://example.invalid/docs
    list:
      - name: a
        # nested: in a list item
  # Note: prose, capitalised
# topLevel: {}
"""
    assert commented_keys(text) == {("alertmanager", "alertmanagerSpec", "configSecret"), ("topLevel",)}


def test_a_reassigned_variable_follows_every_value() -> None:
    """nvidia-device-plugin 0.14: the plugin's nodeSelector, else GFD's, passed whole."""
    template = """
{{- $nodeSelector := .Values.nodeSelector }}
{{- if and (empty $nodeSelector) .Subcharts.gfd }}
{{- $nodeSelector = .Subcharts.gfd.Values.nodeSelector }}
{{- end }}
{{- with $nodeSelector }}{{ toYaml . }}{{ end }}
"""
    assert reads({"t": template}).passthrough == {("nodeSelector",), ("gfd", "nodeSelector")}


def test_a_list_context_is_taken_apart_by_index() -> None:
    """kube-prometheus-stack 75+: ``kubeVersionOverride`` is read by a helper that receives
    the root inside ``(list $ ...)`` and takes it out with ``index . 0``."""
    template = """
{{- define "kps.kubeVersion" -}}{{ default .Capabilities.KubeVersion.Version .Values.kubeVersionOverride }}{{- end -}}
{{- define "kps.byVersion" -}}
{{- $values := index . 0 -}}{{- $default := index . 2 -}}
{{ include "kps.kubeVersion" $values }}{{ print $default }}
{{- end -}}
{{ include "kps.byVersion" (list . ">= 1.22-0" .Values.insecure) }}
{{ range (list .Values.a .Values.b) }}{{ . }}{{ end }}
"""
    found = reads({"t": template})
    assert {("kubeVersionOverride",), ("insecure",)} <= found.read
    assert found.passthrough == {("a",), ("b",)}  # ranged over: anything below them is used
