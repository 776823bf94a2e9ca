"""The loader: every input shape, every kind of bad input, and exact positions."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpustack import userinput
from gpustack.lint.input.load import load_bytes, load_text
from gpustack.lint.model import InputError

from lint_support import load_paths


def one(text: str):
    result = load_text("f.yaml", text)
    assert result.errors == ()
    assert len(result.resources) == 1
    return result.resources[0]


def error_of(text: str | bytes) -> InputError:
    result = load_bytes("f.yaml", text if isinstance(text, bytes) else text.encode())
    assert result.resources == ()
    [error] = result.errors
    return error


def test_multi_document_stream_with_source_comments_and_empty_documents() -> None:
    text = (
        "---\n"
        "# Source: gpu/templates/a.yaml\n"
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata: {name: a}\n"
        "---\n"
        "# only a comment\n"
        "---\n"
        "---\n"
        "# Source: gpu/templates/b.yaml\n"
        "apiVersion: v1\n"
        "kind: Service\n"
        "metadata: {name: b}\n"
        "...\n"
        "---\n"
        "apiVersion: v1\n"
        "kind: Secret\n"
    )
    result = load_text("stream.yaml", text)
    assert result.errors == ()
    assert [(r.kind, r.document, r.source_comment) for r in result.resources] == [
        ("ConfigMap", 0, "gpu/templates/a.yaml"),
        ("Service", 3, "gpu/templates/b.yaml"),
        ("Secret", 4, None),
    ]
    assert [r.locate(("metadata", "name")) for r in result.resources[:2]] == [(5, 12), (13, 12)]
    assert result.texts == {"stream.yaml": text}


def test_list_items_become_resources_located_inside_the_list() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: p\n  - 7\n"
    result = load_text("list.yaml", text)
    [pod] = result.resources
    assert pod.ref.name == "p"
    assert pod.locate(("metadata", "name")) == (7, 7)
    assert pod.locate(()) == (4, 5)
    assert result.errors == (InputError("list.yaml", "items[1] is not a Kubernetes object", 8, 5),)


def test_positions_are_of_keys_and_items_and_fall_back_to_the_nearest_ancestor() -> None:
    resource = one("a:\n  b:\n    - x\n    - {c: 1}\n")
    assert resource.locate(()) == (1, 1)
    assert resource.locate(("a",)) == (1, 1)
    assert resource.locate(("a", "b")) == (2, 3)
    assert resource.locate(("a", "b", 1)) == (4, 7)
    assert resource.locate(("a", "b", 1, "c")) == (4, 8)
    assert resource.locate(("a", "b", 1, "missing")) == (4, 7)
    assert resource.locate(("a", "b", 9)) == (2, 3)
    assert resource.locate(("nothing", "here")) == (1, 1)


def test_kubernetes_yaml_11_scalars() -> None:
    data = one(
        "a: on\nb: 'on'\nc: y\nd: No\ne: 0777\nf: 1e3\ng: 2001-01-01\nh: 1_000\ni: !!str 12\n"
        "j: ~\nk: 0x1F\nl: .5\nm: 1:20\np: +\no: 08\n"
    ).data
    assert data == {
        "a": True, "b": "on", "c": True, "d": False, "e": 511, "f": 1000.0, "g": "2001-01-01",
        "h": 1000, "i": "12", "j": None, "k": 31, "l": 0.5, "m": "1:20", "p": "+", "o": 8.0,
    }  # fmt: skip


def test_keys_are_strings_as_in_json() -> None:
    # sigs.k8s.io/yaml: go-yaml v2 reads the key `y` as a boolean, then JSON makes it "true".
    assert one("on: 1\n3: 2\n~: 3\ny: 4\n'n': 5\n").data == {"true": 4, "3": 2, "null": 3, "n": 5}


def test_merge_keys_explicit_keys_win_and_positions_follow_the_merge() -> None:
    resource = one("base: &b {x: 1, w: 2}\nm:\n  <<: [*b, {z: 3, x: 9}]\n  w: 0\n")
    assert resource.data["m"] == {"w": 0, "x": 1, "z": 3}
    assert resource.locate(("m", "w")) == (4, 3)
    assert resource.locate(("m", "x")) == (1, 11)
    assert resource.locate(("m", "z")) == (3, 13)


def test_aliases_share_values() -> None:
    data = one("a: &x {b: [1]}\nc: *x\n").data
    assert data["a"] == data["c"] == {"b": [1]}


def test_duplicate_keys_keep_the_last_locate_it_and_are_reported() -> None:
    result = load_text("f.yaml", "a: 1\na: 2\n'a': 3\nb: {c: 1, c: 2}\n")
    [resource] = result.resources
    assert resource.data == {"a": 3, "b": {"c": 2}}
    assert resource.locate(("a",)) == (3, 1)
    first = "kubectl and Helm refuse the document"
    assert result.errors == (
        InputError("f.yaml", f"duplicate key 'a' (first at line 1): {first}", 2, 1),
        InputError("f.yaml", f"duplicate key 'a' (first at line 2): {first}", 3, 1),
        InputError("f.yaml", f"duplicate key 'c' (first at line 4): {first}", 4, 11),
    )


def test_json_with_tabs() -> None:
    assert one('{\n\t"kind": "Pod",\n\t"spec": {"a": "x\\/y"}\n}\n').data == {"kind": "Pod", "spec": {"a": "x/y"}}


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        ("a: [\n", "invalid YAML: while parsing a flow node: did not find expected node content", 2),
        ("a: b\n c: d\n", "invalid YAML: mapping values are not allowed in this context", 2),
        (b"kind: Pod\x00\x01", "binary file (holds NUL bytes): not read", None),
        (b"a: 1\nb: \xff\n", "not UTF-8 (byte 0xff)", 2),
        (b"\xff\xfea\x00", "UTF-16 or UTF-32 text (byte-order mark): not read; save it as UTF-8", 1),
        ("a: &a [*a]\n", "alias *a refers to no anchor defined before it", 1),
        ("a: *nowhere\n", "alias *nowhere refers to no anchor defined before it", 1),
        ("{[1]: 2}\n", "a mapping key must be a plain value, not a mapping or list", 1),
        ("a:\n  <<: 3\n", "a merge key (<<) must hold a mapping or a list of mappings", 2),
        ("[" * 300 + "]" * 300, "nested deeper than 200 levels: not read", 1),
    ],
)
def test_bad_input_becomes_an_error_with_a_line(content: str | bytes, message: str, line: int | None) -> None:
    error = error_of(content)
    assert (error.message, error.line) == (message, line)


def test_alias_bomb() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(9)]
    error = error_of("\n".join(lines))
    assert error.message.startswith("aliases expand to more than 100000 nodes")
    assert error.line == 5  # e: the fifth level passes the budget


def test_documents_that_are_not_mappings_are_errors_and_the_others_are_read() -> None:
    result = load_text("f.yaml", "- 1\n---\nkind: Pod\n---\njust text\n")
    assert [r.kind for r in result.resources] == ["Pod"]
    assert result.errors == (
        InputError("f.yaml", "document is a list, not a Kubernetes object", 1, 1),
        InputError("f.yaml", "document is a scalar, not a Kubernetes object", 5, 1),
    )


def test_another_tools_list_is_not_an_error_a_list_of_objects_is() -> None:
    """Ansible tasks (a list of mappings, none an object) are no input error; a list of
    Kubernetes objects, which kubectl does not apply, is."""
    tasks = "- name: install the driver\n  ansible.builtin.apt: {name: nvidia-driver-550}\n"
    assert load_text("tasks/main.yml", tasks).errors == ()
    assert load_text("tasks/main.yml", tasks).resources == ()
    objects = "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n"
    assert load_text("pods.yaml", objects).errors == (
        InputError("pods.yaml", "document is a list, not a Kubernetes object", 1, 1),
    )


def test_a_json_patch_file_is_not_an_error() -> None:
    """kustomize ``patches: [{path: patch-channel.yaml}]`` files hold JSON 6902 operations."""
    patch = "- op: replace\n  path: /spec/channel\n  value: stable\n"
    assert load_text("patch-channel.yaml", patch).errors == ()
    assert load_text("odd.yaml", patch + "- 1\n").errors == (
        InputError("odd.yaml", "document is a list, not a Kubernetes object", 1, 1),
    )


def test_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(userinput, "MAX_FILE_BYTES", 10)
    assert load_bytes("big.yaml", b"a: 12345678901").errors == (InputError("big.yaml", "larger than 0 MiB: not read"),)


def test_byte_order_mark_is_skipped() -> None:
    assert load_bytes("f.yaml", b"\xef\xbb\xbfkind: Pod\n").resources[0].data == {"kind": "Pod"}


def test_folders_are_searched_recursively_sorted_hidden_files_skipped(tmp_path: Path) -> None:
    for name in ("b.yaml", "a/c.yml", "a/d.json", "a/e.txt", ".git/f.yaml", "a/.hidden/g.yaml", "a/.h.yaml"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("kind: ConfigMap\n")
    result = load_paths([str(tmp_path)])
    names = [Path(r.file).relative_to(tmp_path).as_posix() for r in result.resources]
    assert names == ["a/c.yml", "a/d.json", "b.yaml"]
    assert result.files == 3
    assert [r.file for r in load_paths([str(tmp_path / "a/.h.yaml")]).resources] == [str(tmp_path / "a/.h.yaml")]


def test_explicit_files_are_read_whatever_their_suffix_and_excludes_apply(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("kind: Pod\n")
    (tmp_path / "skip").mkdir()
    (tmp_path / "skip" / "x.yaml").write_text("kind: Pod\n")
    result = load_paths([str(tmp_path / "m.txt"), str(tmp_path)], excluded=lambda path: path.endswith("skip"))
    assert [Path(r.file).name for r in result.resources] == ["m.txt"]


def test_missing_and_unreadable_paths_do_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("kind: Pod\n")
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    result = load_paths([str(tmp_path / "missing.yaml"), str(tmp_path / "ok.yaml")])
    assert [r.kind for r in result.resources] == ["Pod"]
    assert result.errors == (InputError(str(tmp_path / "missing.yaml"), "no such file or folder"),)


def test_stdin() -> None:
    result = load_paths(["-"], stdin=io.BytesIO(b"kind: Pod\n---\nkind: Service\n"))
    assert [(r.file, r.kind) for r in result.resources] == [("<stdin>", "Pod"), ("<stdin>", "Service")]


def test_empty_input_is_read_and_holds_nothing() -> None:
    result = load_paths(["-"], stdin=io.BytesIO(b""))
    assert (result.resources, result.errors, result.files) == ((), (), 1)


def test_positions_are_recomputed_after_the_cache_forgot_them() -> None:
    sources = [load_text(f"f{i}.yaml", f"a:\n  b{i}: 1\n").resources[0] for i in range(40)]
    assert [r.locate(("a", f"b{i}")) for i, r in enumerate(sources)] == [(2, 3)] * 40
    assert sources[0].locate(("a", "b0")) == (2, 3)
