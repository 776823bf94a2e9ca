"""The e2e tier's own helpers: strict CRD schemas, leaves and their changes, volatile lines."""

from __future__ import annotations

from real_charts import CrdSchemas, changed, leaves, perturbed, volatile_lines, with_leaf

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget"},
        "versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "note": {"type": "string", "nullable": True},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            }}},
        }}}],
    },
}


def widget(**spec):
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "labels": {"a": "b"}}, "spec": spec}


def test_a_field_the_api_server_would_prune_is_an_error_unless_the_schema_keeps_unknown_fields():
    schemas = CrdSchemas()
    schemas.add([CRD])
    assert schemas.problems(widget(size=1, note=None, free={"any": {"thing": 1}})) == []
    assert schemas.problems(widget(size=1, sise=2)) == ["spec: Additional properties are not allowed ('sise' was unexpected)"]
    assert schemas.problems(widget(size="1")) == ["spec.size: '1' is not of type 'integer'"]


def test_every_leaf_is_found_and_changed_in_a_copy():
    values = {"a": {"b": True, "c": [1, "x"], "d": {}}, "e": "one\ntwo\n"}
    assert [path for path, _ in leaves(values)] == [("a", "b"), ("a", "c", 0), ("a", "c", 1), ("a", "d"), ("e",)]
    for path, value in leaves(values):
        copy = with_leaf(values, path, perturbed(value))
        assert copy != values
    assert values == {"a": {"b": True, "c": [1, "x"], "d": {}}, "e": "one\ntwo\n"}


def test_lines_that_differ_between_two_renders_do_not_count_as_a_change():
    first, second = "a\npassword: x1\nb", "a\npassword: y2\nb"
    volatile = volatile_lines(first, second)
    assert not changed(first, volatile, "a\npassword: z3\nb")
    assert changed(first, volatile, "a\npassword: z3\nc")
    assert changed(first, volatile, "a\nb")
