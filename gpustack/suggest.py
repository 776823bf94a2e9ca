""""Did you mean …?" for a name the user typed: the known names closest to it."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable


def close_matches(
    typed: str, known: Iterable[str], *, normalize: Callable[[str], str] = str.lower, n: int = 3, cutoff: float = 0.6
) -> list[str]:
    """The known names closest to ``typed`` (compared by ``normalize``), best first; a lower
    ``cutoff`` suits short names, where one wrong character weighs more."""
    by_form: dict[str, str] = {}
    for name in known:
        by_form.setdefault(normalize(name), name)
    matches = difflib.get_close_matches(normalize(typed), list(by_form), n=n, cutoff=cutoff)
    return [by_form[match] for match in matches]


def did_you_mean(names: list[str]) -> str:
    """``did you mean A?`` or ``did you mean A, B or C?``; empty when there is nothing close."""
    if not names:
        return ""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"did you mean {listed}?"
