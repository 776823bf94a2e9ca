"""Flux post-build substitution (``input.fluxsubst``): what a variable reads as, and when it stays unknown."""

from __future__ import annotations

import pytest

from gpustack.lint.input.fluxsubst import Variables, _string

KNOWN = Variables({"count": "3", "empty": ""}, ({"model": "llama", "count": "9"},))
OPAQUE = Variables({"count": "3"}, ({"model": "llama"}, None))


@pytest.mark.parametrize(
    ("text", "variables", "read"),
    [
        ("${count}", KNOWN, 3),  # substitute over substituteFrom; the YAML reads a number
        ("${missing:=4}", KNOWN, 4),
        ("${missing:-on}", KNOWN, True),  # read back as the plain YAML scalar Flux writes
        ("${model}-server", KNOWN, "llama-server"),
        ("${empty:=2}", KNOWN, 2),  # set but empty: the default too
        ("$${count}", KNOWN, "${count}"),  # escaped: a literal
        ("${missing}", KNOWN, "${missing}"),  # no value, no default: unknown, as written
        ("${count}-${missing}", KNOWN, "${count}-${missing}"),
        ("${count:1}", KNOWN, "${count:1}"),  # an operator not read: unknown
        ("${count}", OPAQUE, 3),  # substitute wins over a Secret
        ("${model}", OPAQUE, "${model}"),  # a later Secret may set it
        ("${missing:=4}", OPAQUE, "${missing:=4}"),  # ... or this one: its default may not apply
        ("key: ${count}", KNOWN, "key: 3"),  # not one plain scalar: stays a string
    ],
)
def test_a_variable_reads_as_flux_writes_it(text: str, variables: Variables, read: object) -> None:
    assert _string(text, variables) == read
