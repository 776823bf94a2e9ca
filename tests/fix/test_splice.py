"""Splicing edits into text: the style of the place they go into, everything else untouched,
and edits that would change something else refused."""

from __future__ import annotations

from gpustack.lint.fix.splice import Fix, Spliced, splice
from gpustack.lint.input.load import load_text
from gpustack.lint.model import AppendItem, DeleteKey, Edit, RenameKey, SetValue


def spliced(text: str, *edits: Edit, document: int = 0) -> Spliced:
    result = splice(text, [Fix(document, (edit,)) for edit in edits])
    assert not load_text("spliced.yaml", result.text).errors, result.text
    return result


def test_block_insert_nests_with_the_files_indentation_and_sequence_style() -> None:
    text = "spec:\n    containers:\n    -   name: a\n        image: x:1\n"
    result = spliced(text, AppendItem(("spec", "containers", 0, "securityContext", "capabilities", "drop"), "ALL"))
    assert result.text == (
        "spec:\n    containers:\n    -   name: a\n        image: x:1\n"
        "        securityContext:\n            capabilities:\n                drop:\n                -   ALL\n"
    )


def test_append_to_an_indentless_sequence_of_mappings() -> None:
    text = "env:\n- name: A\n  value: a  # first\n# the end\n"
    result = spliced(text, AppendItem(("env",), {"name": "B", "value": "true"}))
    assert result.text == 'env:\n- name: A\n  value: a  # first\n- name: B\n  value: "true"\n# the end\n'


def test_flow_collections_take_flow_values_and_keep_their_padding() -> None:
    text = "a: { b: 1 }\nc: [ x ]\nd: {}\ne: []\n"
    result = spliced(
        text,
        SetValue(("a", "f"), {"g": [1, 2]}),
        AppendItem(("c",), "z"),
        SetValue(("d", "h"), "on"),
        AppendItem(("e",), "ALL"),
    )
    assert result.text == 'a: { b: 1, f: { g: [ 1, 2 ] } }\nc: [ x, z ]\nd: {h: "on"}\ne: [ALL]\n'


def test_a_block_mapping_whose_values_are_flow_gets_a_flow_value() -> None:
    text = "resources:\n  requests: {nvidia.com/gpu: 1}\n"
    result = spliced(text, SetValue(("resources", "limits", "nvidia.com/gpu"), 1))
    assert result.text == "resources:\n  requests: {nvidia.com/gpu: 1}\n  limits: {nvidia.com/gpu: 1}\n"


def test_null_values_become_what_is_set_and_keep_their_comment() -> None:
    text = "sc:   # to do\nenv: ~\nlabels:\n"
    result = spliced(
        text,
        SetValue(("sc", "allowPrivilegeEscalation"), False),
        AppendItem(("env",), "X"),
        SetValue(("labels", "a"), "b"),
    )
    assert result.text == "sc:   # to do\n  allowPrivilegeEscalation: false\nenv:\n  - X\nlabels:\n  a: b\n"


def test_replaced_scalars_keep_their_quotes_and_strings_that_read_as_else_get_quoted() -> None:
    text = "a: 'x'\nb: \"y\"\nc: z\non: 1\n"
    result = spliced(
        text, SetValue(("a",), "it's"), SetValue(("b",), "w"), SetValue(("c",), "true"), SetValue(("d", "on"), "1")
    )
    assert result.text == "a: 'it''s'\nb: \"w\"\nc: \"true\"\non: 1\nd:\n  \"on\": \"1\"\n"
    assert load_text("q.yaml", result.text).resources[0].data == {
        "a": "it's", "b": "w", "c": "true", "true": 1, "d": {"on": "1"},
    }  # fmt: skip


def test_delete_and_rename_keys_in_block_and_flow_mappings() -> None:
    text = "s:\n  type: A  # t\n  rolling:\n    max: 1\n  other: 2\n"
    text += "f: {rolling: {max: 1}, type: A}\nsel:\n  old: v  # c\n"
    result = spliced(
        text, DeleteKey(("s", "rolling")), DeleteKey(("f", "rolling")), RenameKey(("sel", "old"), "new")
    )
    assert result.text == "s:\n  type: A  # t\n  other: 2\nf: {type: A}\nsel:\n  new: v  # c\n"


def test_commented_out_entries_stay_with_their_block() -> None:
    text = "c:\n  limits:\n    gpu: 1  # whole\n    # gpucores: 10\n\n  # about ports\n  ports: []\n"
    result = spliced(text, SetValue(("c", "limits", "mem"), 2), SetValue(("c", "ports2"), 3))
    assert result.text == (
        "c:\n  limits:\n    gpu: 1  # whole\n    mem: 2\n    # gpucores: 10\n\n"
        "  # about ports\n  ports: []\n  ports2: 3\n"
    )
    text = "c:\n  limits:\n    gpu: 1\n    # gpucores: 10\n  # the end"
    result = spliced(text, SetValue(("c", "sc"), 1))
    assert result.text == "c:\n  limits:\n    gpu: 1\n    # gpucores: 10\n  sc: 1\n  # the end"


def test_crlf_line_breaks_and_a_missing_final_line_break_are_kept() -> None:
    result = spliced("spec:\r\n  a: 1\r\n  b: 2", SetValue(("spec", "c"), 3))
    assert result.text == "spec:\r\n  a: 1\r\n  b: 2\r\n  c: 3"


def test_inserts_after_block_scalars_leave_their_text_alone() -> None:
    text = "a:\n  s: |\n    line\n\n  k: |+\n    kept\n\n"
    result = spliced(text, SetValue(("a", "z"), 1))
    assert result.text == "a:\n  s: |\n    line\n\n  k: |+\n    kept\n\n  z: 1\n"
    assert load_text("b.yaml", result.text).resources[0].data["a"]["k"] == "kept\n\n"


def test_insertions_at_one_point_go_deepest_first() -> None:
    text = "spec:\n  containers:\n    - name: a\n"
    result = spliced(
        text, SetValue(("spec", "runtimeClassName"), "nvidia"), SetValue(("spec", "containers", 0, "b"), 1)
    )
    assert result.text == "spec:\n  containers:\n    - name: a\n      b: 1\n  runtimeClassName: nvidia\n"


def test_edits_address_their_document() -> None:
    text = "a: 1\n---\n# second\nb: 2\n"
    assert spliced(text, SetValue(("c",), 3), document=1).text == "a: 1\n---\n# second\nb: 2\nc: 3\n"


def test_two_findings_adding_the_same_missing_key_merge() -> None:
    text = "resources:\n  requests:\n    a: 1\n    b: 2\n"
    result = spliced(text, SetValue(("resources", "limits", "a"), 1), SetValue(("resources", "limits", "b"), 2))
    assert result.text == text + "  limits:\n    a: 1\n    b: 2\n"
    assert result.applied == {0, 1}


def test_disagreeing_fixes_collide_and_the_later_waits() -> None:
    result = spliced("a: 1\n", SetValue(("a",), 2), SetValue(("a",), 3))
    assert (result.text, result.applied, list(result.refused)) == ("a: 2\n", {0}, [1])
    assert "collide" in result.refused[1]


def test_anchored_nodes_and_merged_keys_are_not_edited() -> None:
    text = "base: &sc {runAsUser: 1}\nc1:\n  sc: *sc\nc2:\n  <<: {sc: {x: 1}}\n"
    result = spliced(
        text,
        SetValue(("c1", "sc", "allowPrivilegeEscalation"), False),
        SetValue(("c2", "sc", "allowPrivilegeEscalation"), False),
        DeleteKey(("base",)),
    )
    assert (result.text, result.applied) == (text, frozenset())
    assert "anchor" in result.refused[0] and "merge key" in result.refused[1] and "anchor" in result.refused[2]


def test_a_key_on_a_list_items_dash_line_is_not_deleted() -> None:
    result = spliced("items:\n  - a: 1\n    b: 2\n", DeleteKey(("items", 0, "a")))
    assert result.applied == frozenset() and "dash" in result.refused[0]


def test_a_key_is_not_renamed_to_one_the_mapping_has() -> None:
    result = spliced("sel:\n  a: 1\n  b: 2\n", RenameKey(("sel", "a"), "b"))
    assert result.applied == frozenset() and "already has b" in result.refused[0]


def test_deleting_what_is_absent_changes_nothing() -> None:
    assert spliced("a: 1\n", DeleteKey(("b", "c"))).text == "a: 1\n"


def test_nothing_is_inserted_where_an_alias_stands() -> None:
    text = "tol: &tol [x]\npod:\n  containers: []\n  tolerations: *tol\nflow: {a: 1, b: *tol}\n"
    result = spliced(text, SetValue(("pod", "runtimeClassName"), "nvidia"), SetValue(("flow", "c"), 1))
    assert (result.text, result.applied) == (text, frozenset())
    assert all("alias" in why for why in result.refused.values())
