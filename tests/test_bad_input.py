"""Bad input never crashes gpustack or loses data: one test per way it was seen to, and a fuzz test.

Each case goes through the command line (``cli.main``) where the user would meet it: a
message naming the file (and line), the documented exit code, no traceback, and nothing
that gpustack did not write is deleted or changed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gpustack import cli
from gpustack.render import write
from gpustack.render.stackfiles import readme

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "k3s-l4.yaml").read_text(encoding="utf-8")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``gpustack ARGS``: exit code, standard output, standard error (never a traceback)."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    code = exit_info.value.code
    return (0 if code is None else code), out, err


def rendered(version: str, files: dict[str, str]) -> dict[str, str]:
    """``files`` and a generated README that lists them, as render writes it."""
    listing = "".join(f"- `{path}`\n" for path in sorted(files))
    return {readme.PATH: f"{readme.MARKER} {version} -->\n{readme.GENERATED}\n\n{listing}\n## Apply order\n", **files}


OLD = rendered("old", {"manifests/a.yaml": "a: 1\n", "helm/x.values.yaml": "x: 1\n"})
NEW = rendered("new", {"manifests/a.yaml": "a: 2\n"})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- render never deletes what it did not write ---------------------------------------------


@pytest.mark.parametrize(
    ("added", "named"),
    [
        ({"manifests/overlay.yaml": "kind: Patch\n"}, "manifests/overlay.yaml"),
        ({".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n"}, ".git/"),
        ({"notes/todo.md": "mine\n"}, "notes/"),
    ],
)
def test_render_refuses_a_folder_holding_files_it_did_not_write(tmp_path, added, named):
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    for path, text in added.items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(text)
    before = snapshot(target)
    with pytest.raises(write.GpustackError, match="holds files gpustack did not write") as error:
        write.write_tree(NEW, target)
    assert named in str(error.value)
    assert snapshot(target) == before


def test_render_refuses_a_link_in_its_folder(tmp_path):
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    (tmp_path / "elsewhere.yaml").write_text("mine\n")
    (target / "manifests" / "a.yaml").unlink()
    (target / "manifests" / "a.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    with pytest.raises(write.GpustackError, match="manifests/a.yaml"):
        write.write_tree(NEW, target)
    assert (tmp_path / "elsewhere.yaml").read_text() == "mine\n"


def test_render_replaces_its_own_output_and_lints_cache(tmp_path):
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    (target / ".gpustack_cache").mkdir()
    (target / ".gpustack_cache" / "entry").write_bytes(b"\0")
    write.write_tree(NEW, target)
    assert snapshot(target) == {path: text.encode() for path, text in NEW.items()}


def test_render_command_names_the_foreign_files_and_exits_2(tmp_path, capsys, monkeypatch):
    """Through the command: refused before cdk8s is even started."""
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    (target / "kustomization.yaml").write_text("resources: [manifests]\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    monkeypatch.setattr("gpustack.render.app.render", lambda ctx: None)
    monkeypatch.setattr("gpustack.render.app.tree", lambda rendered: dict(NEW))
    monkeypatch.setattr("gpustack.commands.render.require_render_tools", lambda: None)
    code, _, err = run(capsys, "render", str(spec), "-o", str(target))
    assert code == 2
    assert f"{target} holds files gpustack did not write: kustomization.yaml" in err
    assert (target / "kustomization.yaml").read_text() == "resources: [manifests]\n"


_KILLED_RENDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from gpustack.render import write

    real = Path.write_text
    def slow(self, *args, **kwargs):
        real(self, *args, **kwargs)
        print("writing", flush=True)
        time.sleep(60)
    Path.write_text = slow
    write.write_tree({"README.md": "x\\n"}, Path(sys.argv[1]))
    """
)


def test_a_killed_render_leaves_temporary_folders_the_next_one_removes(tmp_path):
    target = tmp_path / "out" / "stack"
    write.write_tree(OLD, target)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RENDER, str(target)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None and process.stdout.readline() == "writing\n"
    # While that render runs, another one leaves its temporary folder alone.
    live = [p.name for p in (tmp_path / "out").iterdir() if p.name != "stack"]
    assert len(live) == 1 and live[0].startswith(".stack.") and live[0].endswith(".tmp")
    write.write_tree(OLD, tmp_path / "out" / "stack")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(["stack", *live])
    process.send_signal(signal.SIGKILL)
    process.wait()
    write.write_tree(NEW, target)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["stack"]
    assert snapshot(target) == {path: text.encode() for path, text in NEW.items()}


def test_a_stale_old_tree_is_removed(tmp_path):
    """The previous output, renamed aside when the render was killed before it was removed."""
    write.write_tree(OLD, tmp_path / ".stack.abcd1234.old")
    write.write_tree(NEW, tmp_path / "stack")
    assert [p.name for p in tmp_path.iterdir()] == ["stack"]


def test_render_with_an_unusable_tmpdir_says_so(tmp_path, capsys, monkeypatch):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setattr("gpustack.commands.render.require_render_tools", lambda: None)
    started = time.monotonic()
    code, _, err = run(capsys, "render", str(spec), "-o", str(tmp_path / "out"))
    assert code == 2
    assert f"TMPDIR={tmp_path / 'missing'} is not a writable folder" in err
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()


# --- spec files that are not what they should be ---------------------------------------------


DESCRIPTION_LINE = next(n for n, line in enumerate(SPEC.splitlines(), 1) if "description:" in line)


def write_spec(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (SPEC.replace("description:", "description: café #").encode("latin-1"), f":{DESCRIPTION_LINE}: cannot read the spec: not UTF-8 (byte 0xe9)"),
        (SPEC.encode("utf-16"), ":1: cannot read the spec: UTF-16 or UTF-32 text (byte-order mark): not read; save it as UTF-8"),
        (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), ": cannot read the spec: binary file (holds NUL bytes): not read"),
    ],
    ids=["latin-1", "utf-16", "binary"],
)
@pytest.mark.parametrize("command", ["validate", "lint"])
def test_a_spec_that_is_not_utf8_is_named_and_the_rest_still_checked(tmp_path, capsys, content, message, command):
    bad = write_spec(tmp_path, "bad.yaml", content)
    good = write_spec(tmp_path, "good.yaml", SPEC)
    if command == "validate":
        code, out, err = run(capsys, "validate", str(bad), str(good))
        assert f"{good}: ok" in out
    else:
        code, out, err = run(capsys, "lint", "--spec", str(bad), str(REPO / "examples" / "manifests"))
    assert code == 2
    assert f"error: {bad}{message}" in err.splitlines()


def test_render_names_a_spec_that_is_not_utf8(tmp_path, capsys, monkeypatch):
    bad = write_spec(tmp_path, "bad.yaml", SPEC.encode("utf-16"))
    monkeypatch.setattr("gpustack.commands.render.require_render_tools", lambda: None)
    code, _, err = run(capsys, "render", str(bad), "-o", str(tmp_path / "out"))
    assert code == 2 and f"error: {bad}:1: cannot read the spec: UTF-16" in err


def test_a_spec_larger_than_its_limit_is_refused_unread(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("gpustack.userinput.MAX_SPEC_BYTES", len(SPEC) - 1)
    spec = write_spec(tmp_path, "big.yaml", SPEC)
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2 and f"error: {spec}: cannot read the spec: larger than" in err


def test_a_spec_from_standard_input_gets_the_same_checks(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"kind: \xff\n")))
    code, _, err = run(capsys, "validate", "-")
    assert code == 2 and "error: -:1: cannot read the spec: not UTF-8 (byte 0xff)" in err


@pytest.mark.parametrize("text", ["!!int", "kind: !!float\n"])
def test_a_tagged_value_ruamel_cannot_construct_is_refused(tmp_path, capsys, text):
    """Found by the fuzz test below: ruamel raised an IndexError on a bare ``!!int``."""
    spec = write_spec(tmp_path, "tagged.yaml", text)
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2 and f"error: {spec}: invalid YAML: a value it cannot construct" in err


def test_a_lone_surrogate_escape_is_refused_at_its_key(tmp_path, capsys):
    """Found by the fuzz test below: ``"\\ud83d\\ude00"`` (JSON's way to write one emoji) is two
    lone surrogates to YAML, which render could not write (UnicodeEncodeError)."""
    spec = write_spec(tmp_path, "s.yaml", SPEC.replace("description: ", 'description: "\\ud83d\\ude00" #', 1))
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2
    assert f"error: {spec}:{DESCRIPTION_LINE}:3: metadata.description: holds half of a UTF-16 surrogate pair" in err


@pytest.mark.parametrize(("levels", "column"), [(65, 71), (5000, 1007)])
def test_a_deeply_nested_spec_is_refused_at_once(tmp_path, capsys, levels, column):
    """5,000 levels ended in a RecursionError after 5.7 s; libyaml stops at 1,000 levels."""
    spec = write_spec(tmp_path, "deep.yaml", SPEC + "extra: " + "[" * levels + "]" * levels + "\n")
    started = time.monotonic()
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2
    assert f"error: {spec}:{SPEC.count(chr(10)) + 1}:{column}: nested deeper than 64 levels: not read" in err
    assert time.monotonic() - started < 2


def test_a_spec_nested_as_deep_as_allowed_is_read(tmp_path, capsys):
    spec = write_spec(tmp_path, "deep.yaml", SPEC + "extra: " + "[" * 63 + "]" * 63 + "\n")
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2 and "extra: unknown key" in err


def _parse_seconds(text: str) -> float:
    from gpustack.yamlio import load_positioned

    started = time.perf_counter()
    load_positioned(text, "spec.yaml")
    return time.perf_counter() - started


def test_spec_reading_is_linear_in_comment_lines():
    """20,000 comment lines inside a mapping took 2.2 s, 100,000 took 44 s (quadratic)."""
    lines = SPEC.splitlines(keepends=True)
    cut = lines.index("  cluster:\n") + 1

    def commented(count: int) -> str:
        return "".join(lines[:cut]) + "    # a comment\n" * count + "".join(lines[cut:])

    small = min(_parse_seconds(commented(5_000)) for _ in range(3))
    large = _parse_seconds(commented(40_000))
    assert large < 8 * small * 4, (small, large)  # 8 times the lines: linear is 8 times, quadratic 64


def test_positions_survive_comments(tmp_path, capsys):
    spec = write_spec(tmp_path, "s.yaml", SPEC.replace("        count: 1\n", "        # one\n        count: 0  # none\n"))
    code, _, err = run(capsys, "validate", str(spec))
    line = spec.read_text().splitlines().index("        count: 0  # none") + 1
    assert code == 2 and f"error: {spec}:{line}:9: spec.nodePools[0].gpu.count: Input should be greater than or equal to 1" in err


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('kubernetesVersion: "1.36"', 'kubernetesVersion: "1.20"', "Kubernetes 1.20 is not one gpustack renders: 1.25 to 1.37"),
        ('kubernetesVersion: "1.36"', 'kubernetesVersion: "1.99"', "Kubernetes 1.99 is not one gpustack renders: 1.25 to 1.37"),
        ("        count: 1\n", "        count: true\n", "spec.nodePools[0].gpu.count: Input should be a valid integer"),
        ("    - name: g6\n", "    - name: g6\n      count: 100000000000\n", "spec.nodePools[0].count: Input should be less than or equal to 5000"),
        ("    - name: g6\n", '    - name: g6\n      count: "3"\n', "spec.nodePools[0].count: Input should be a valid integer"),
    ],
)
def test_validate_refuses_what_render_cannot_do(tmp_path, capsys, old, new, message):
    assert old in SPEC
    spec = write_spec(tmp_path, "s.yaml", SPEC.replace(old, new, 1))
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2 and message in err


def test_the_supported_minors_are_those_render_knows():
    from gpustack.spec.featuregates import GATES
    from gpustack.spec.models.base import NEWEST_MINOR, OLDEST_MINOR

    assert NEWEST_MINOR == max(minor for gate in GATES.values() for minor in gate.states)
    validate = pytest.importorskip("kubernetes_validate.utils")
    shipped = {int(version.split(".")[1]) for version in validate.all_versions()}
    assert OLDEST_MINOR in shipped and NEWEST_MINOR in shipped


# --- lint and --fix -------------------------------------------------------------------------

PITFALLS = (REPO / "examples" / "manifests" / "seed-pitfalls.yaml").read_text(encoding="utf-8")


def test_a_named_pipe_in_a_linted_folder_is_named_not_waited_on(tmp_path):
    (tmp_path / "a.yaml").write_text(PITFALLS)
    os.mkfifo(tmp_path / "pipe.yaml")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "gpustack", "lint", "--no-cache", "--fail-on", "error", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 1  # an unreadable file, as the README says
    assert f"{tmp_path / 'pipe.yaml'}: error: not a regular file (a named pipe, socket or device): not read" in done.stdout
    assert "GS00" in done.stdout  # a.yaml was still linted


def test_duplicate_keys_in_a_manifest_are_reported_with_their_line(tmp_path, capsys):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\nspec:\n  containers: []\n")
    code, out, _ = run(capsys, "lint", "--no-cache", str(manifest))
    assert code == 1
    assert f"{manifest}:5:3: error: duplicate key 'name' (first at line 4): kubectl and Helm refuse the document" in out


def test_a_charts_templates_folder_gets_a_hint_to_pipe_helm_template(tmp_path, capsys):
    templates = tmp_path / "chart" / "templates"
    templates.mkdir(parents=True)
    (templates / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"
    )
    code, out, _ = run(capsys, "lint", "--no-cache", str(templates))
    assert code == 2  # nothing readable
    assert "deployment.yaml:4:10: error: " in out
    assert "a Helm template? lint what it renders to: `helm template CHART | gpustack lint -`" in out


def fixable(tmp_path: Path, mode: int = 0o640) -> Path:
    manifest = tmp_path / "pitfalls.yaml"
    manifest.write_text(PITFALLS)
    manifest.chmod(mode)
    return manifest


def test_fix_writes_in_place_keeping_inode_mode_and_hard_links(tmp_path, capsys):
    manifest = fixable(tmp_path)
    os.link(manifest, tmp_path / "pitfalls.yaml.link")
    if os.geteuid() == 0:
        os.chown(manifest, 1234, 1234)
    before = os.stat(manifest)
    code, _, err = run(capsys, "lint", "--no-cache", "--fix", str(manifest))
    after = os.stat(manifest)
    assert (after.st_ino, after.st_nlink, after.st_mode, after.st_uid, after.st_gid) == (
        before.st_ino, 2, before.st_mode, before.st_uid, before.st_gid,
    )
    assert manifest.read_text() != PITFALLS
    assert (tmp_path / "pitfalls.yaml.link").read_text() == manifest.read_text()
    assert "fixed 2 findings in 1 file" in err and code == 1


def test_fix_leaves_a_read_only_file_alone_and_does_not_count_it(tmp_path, capsys):
    manifest = fixable(tmp_path, 0o444)
    code, out, err = run(capsys, "lint", "--no-cache", "--show-info", "--fix", str(manifest))
    assert manifest.read_text() == PITFALLS and manifest.stat().st_mode & 0o777 == 0o444
    assert f"{manifest}: error: not fixed: the file is read-only (mode 0444)" in out
    assert "fixed 0 findings in 0 files" in err
    assert code == 1 and "GS004" in out  # the findings are still reported


def test_fix_on_a_read_only_file_system_reports_and_goes_on(tmp_path, capsys, monkeypatch):
    import builtins
    import errno

    manifest = fixable(tmp_path)
    real_open = builtins.open

    def read_only_file_system(file, mode="r", *args, **kwargs):
        if "+" in mode or "w" in mode:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), file)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", read_only_file_system)
    code, out, err = run(capsys, "lint", "--no-cache", "--show-info", "--fix", str(manifest))
    monkeypatch.undo()
    assert manifest.read_text() == PITFALLS
    assert f"{manifest}: error: not fixed: cannot write it: Read-only file system" in out
    assert "fixed 0 findings in 0 files" in err
    assert code == 1 and "GS004" in out


# --- doctor on a node without a GPU -----------------------------------------------------------


def test_doctor_without_a_gpu_reports_one_problem_and_blocks_the_rest(tmp_path, capsys):
    (tmp_path / "proc").mkdir()  # a node's tree with nothing GPU-related in it
    code, out, _ = run(capsys, "doctor", "--root", str(tmp_path))
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("problem  pci") and lines[-1] == "1 problem(s): pci"
    assert all("not checked: blocked by the pci layer" in line for line in lines[1:-1])
    assert not any(line.startswith("ok") for line in lines)


def test_doctor_does_not_call_an_absent_file_ok(tmp_path):
    from gpustack.node import modules
    from gpustack.node.result import Status
    from gpustack.node.root import NodeRoot

    assert modules.check(NodeRoot.open(str(tmp_path))).status is Status.NA


# --- fuzz: spec loading, validate, render -----------------------------------------------------

from typing import Any  # noqa: E402

from fuzz_support import scalars, yaml_like  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gpustack.errors import GpustackError  # noqa: E402

SPEC_WORDS = [
    "apiVersion", "kind", "metadata", "name", "spec", "cluster", "distribution", "kubernetesVersion",
    "nodePools", "gpu", "model", "count", "driver", "source", "host", "operator", "toolkit", "mode", "sharing",
    "strategy", "timeSlicing", "mps", "replicas", "mig", "layout", "1g.10gb", "labels", "taints", "k3s",
    "kubeadm", "L4", "H100", "1.36", "1.3", "gpustack.io/v1alpha1", "GpuStack", "dra", "hami", "enabled",
    "monitoring", "gitops", "argocd", "true", "~", "0", "-1", "1e400", "0x10", "&a", "*a", "<<", "!!int",
]  # fmt: skip
spec_scalars = scalars(SPEC_WORDS, text_size=10, nan=True)
spec_data = yaml_like(SPEC_WORDS, spec_scalars, width=3, max_leaves=20)
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


def loads_or_refuses(path: Path, *, render: bool = True):
    """``load_spec``: a spec, or a ``GpustackError`` (located); nothing else may come out."""
    from gpustack.spec.load import load_spec

    try:
        return load_spec(str(path), render=render)
    except GpustackError as error:
        assert error.problems and all(problem.file == str(path) for problem in error.problems), error.problems
        return None


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*path, index))
    return found


def mutated(document: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = dict(document) if isinstance(document, dict) else list(document)
    if delete and not rest:
        del copy[head]
    else:
        copy[head] = mutated(document[head], tuple(rest), value, delete)
    return copy


@FUZZ
@given(st.lists(st.sampled_from(list("ab:-[]{}&*!|>'\"#\n \t,?%@`") + SPEC_WORDS), max_size=60))
def test_fuzz_yaml_like_text_is_loaded_or_refused(tmp_path_factory, tokens):
    spec = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    spec.write_text("".join(tokens))
    loads_or_refuses(spec)


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_bytes_are_loaded_or_refused(tmp_path_factory, content):
    spec = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    spec.write_bytes(content)
    loads_or_refuses(spec)


def _example(index: int) -> Any:
    import yaml

    return yaml.safe_load(EXAMPLES[index % len(EXAMPLES)].read_text(encoding="utf-8"))


@FUZZ
@given(st.data())
def test_fuzz_examples_with_one_value_changed_validate_or_are_refused(tmp_path_factory, data):
    """Every example with one value replaced by random data (or one key removed): validated,
    for render and for lint's context, or refused with located problems."""
    import json

    document = _example(data.draw(st.integers(0, len(EXAMPLES) - 1), label="example"))
    path = data.draw(st.sampled_from(_paths(document)), label="path")
    changed = mutated(document, path, data.draw(spec_data, label="value"), data.draw(st.booleans(), label="delete"))
    spec = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    spec.write_text(json.dumps(changed, allow_nan=True))
    loads_or_refuses(spec, render=data.draw(st.booleans(), label="render"))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_render_of_changed_examples_renders_or_refuses(tmp_path_factory, data):
    """Render is slow (cdk8s, Node): a handful of changed examples, each rendered into a
    folder, or refused with a message."""
    pytest.importorskip("cdk8s")
    import json

    from gpustack.render import app
    from gpustack.render.component import RenderContext

    document = _example(data.draw(st.integers(0, len(EXAMPLES) - 1), label="example"))
    leaves = [path for path in _paths(document) if not isinstance(_get(document, path), (dict, list))]
    path = data.draw(st.sampled_from(leaves), label="path")
    value = data.draw(st.one_of(st.just(_get(document, path)), spec_scalars), label="value")
    changed = mutated(document, path, value, False)
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "spec.yaml").write_text(json.dumps(changed, allow_nan=True))
    loaded = loads_or_refuses(folder / "spec.yaml")
    if loaded is None:
        return
    try:
        write.write_tree(app.tree(app.render(RenderContext(stack=loaded.stack, spec_file=loaded.file))), folder / "out")
    except GpustackError as error:
        assert error.problems
    else:
        assert (folder / "out" / readme.PATH).is_file()


def _get(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]
    return document
