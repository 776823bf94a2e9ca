"""Bad specs exit 2 with file:line:col and the offending key, no traceback, and nothing written."""

from __future__ import annotations

import pytest

from gpustack.cli import main

GOOD = """\
apiVersion: gpustack.io/v1alpha1
kind: GpuStack
metadata:
  name: t
spec:
  cluster:
    distribution: k3s
    kubernetesVersion: "1.36"
  nodePools:
    - name: a
      gpu:
        model: L4
        count: 1
"""

# (what is wrong, replaced text, replacement, expected "line:col: path" and message fragment)
BAD = [
    ("unknown key", "        count: 1\n", "        count: 1\n        colour: green\n",
     "14:9: spec.nodePools[0].gpu.colour", "unknown key"),
    ("wrong type", "count: 1", "count: many", "13:9: spec.nodePools[0].gpu.count", "integer"),
    ("unknown GPU model", "model: L4", "model: L5", "12:9: spec.nodePools[0].gpu.model", "unknown GPU model"),
    ("unquoted version", '"1.36"', "1.30", "8:5: spec.cluster.kubernetesVersion", 'quote it, "1.30"'),
    ("invalid YAML", "  nodePools:\n", "  nodePools: [\n", "10:5", "invalid YAML"),
]


@pytest.mark.parametrize(("what", "old", "new", "where", "fragment"), BAD, ids=[b[0] for b in BAD])
def test_bad_spec_exits_2_and_writes_nothing(tmp_path, capsys, what, old, new, where, fragment):
    assert old in GOOD
    spec = tmp_path / "spec.yaml"
    spec.write_text(GOOD.replace(old, new, 1), encoding="utf-8")
    target = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main(["render", str(spec), "-o", str(target)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{spec}:{where}" in err, err
    assert fragment in err
    assert "Traceback" not in err
    assert not target.exists()


def test_bad_spec_leaves_previous_output_untouched(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(GOOD, encoding="utf-8")
    target = tmp_path / "out"
    with pytest.raises(SystemExit):
        main(["render", str(spec), "-o", str(target)])
    before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()}
    spec.write_text(GOOD.replace("model: L4", "model: L5"), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["render", str(spec), "-o", str(target)])
    assert exit_info.value.code == 2
    assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "spec.yaml"]


def test_missing_spec_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["render", str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert "cannot read the spec" in capsys.readouterr().err
