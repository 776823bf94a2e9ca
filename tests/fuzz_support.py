"""Hypothesis strategies shared by the fuzz tests: YAML-shaped data built from a vocabulary."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st


def scalars(words: Sequence[str], *, text_size: int, nan: bool) -> st.SearchStrategy[object]:
    """A vocabulary word, short text, a number, a boolean or null."""
    return st.one_of(
        st.sampled_from(words), st.text(max_size=text_size), st.integers(), st.floats(allow_nan=nan), st.booleans(),
        st.none(),
    )


def yaml_like(
    words: Sequence[str], leaves: st.SearchStrategy[object], *, width: int, max_leaves: int
) -> st.SearchStrategy[object]:
    """Lists and mappings (keys from ``words``) nested over ``leaves``."""
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=width), st.dictionaries(st.sampled_from(words), children, max_size=width + 1)
        ),
        max_leaves=max_leaves,
    )
