"""Which rules run: the one decision, from the command line and ``.gpustack.yaml``.

Each source gives a ``Choice``: ``select`` (only these rules; absent: every rule), ``ignore``
(not these) and ``on`` (these, named one by one). The config's ``rules: {GS004: off}`` is an
``ignore``, and its ``rules: {GS023: on}`` (or a severity) is an ``on``, which also joins the
config's ``select`` when it has one. A rule is decided by the nearest source that names it, or
that selects and so excludes it: the command line, then the config, then the rule's default.
The default is on, except for the catalogue's opt-in rules (``optIn: true`` in
``policies/GSNNN.yaml``: advice that is no GPU pitfall, such as GS023's hardening), which run
only where a source selects or turns them on by id. Within one source ``ignore`` wins over
``select`` and ``on``. So ``--select GS023`` runs GS023 even where the config ignores it, and
``--ignore GS004`` leaves the config's choice for every other rule.

Rule ids are whole ids in any case (``GS004``, ``gs004``; never a prefix: ``GS4`` is unknown,
and its message suggests ``GS004``); an unknown one is a usage error.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from gpustack.errors import GpustackError
from gpustack.lint.model import Severity


@dataclass(frozen=True)
class Choice:
    """One source's selection."""

    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    on: frozenset[str] = frozenset()  # named on (the config's rules:), opt-in rules included

    def decide(self, rule: str) -> bool | None:
        """On, off, or None: this source leaves the rule to the next."""
        if rule in self.ignore:
            return False
        if rule in self.on:
            return True
        return None if self.select is None else rule in self.select


@dataclass(frozen=True)
class Selection:
    """The sources' choices, nearest first (command line, config)."""

    choices: tuple[Choice, ...] = ()

    def enabled(self, rule: str, *, default: bool = True) -> bool:
        """Whether ``rule`` runs; ``default`` where no source decides (False: an opt-in rule)."""
        for choice in self.choices:
            decision = choice.decide(rule)
            if decision is not None:
                return decision
        return default

    def before(self, choice: Choice) -> Selection:
        """This selection with ``choice`` (a nearer source) deciding first."""
        return Selection((choice, *self.choices))


_SHORT_ID = re.compile(r"GS(\d{1,2})")


def rule_id(typed: str) -> str:
    """A rule id as the catalogue spells it: ids are upper case, and typed in any case."""
    return typed.strip().upper()


def unknown_rule(typed: str, known: Collection[str]) -> str:
    """``unknown rule 'gs1'; did you mean GS001?``: the zero-padded id first (``GS1`` is
    ``GS001`` less its zeros, not the ``GS041`` that spelling distance prefers), else the
    closest ids and names."""
    from gpustack.suggest import close_matches, did_you_mean

    short = _SHORT_ID.fullmatch(rule_id(typed))
    padded = f"GS{int(short.group(1)):03d}" if short else None
    hint = did_you_mean([padded] if padded in known else close_matches(typed, known))
    return f"unknown rule {typed!r}; {hint + ' ' if hint else ''}`gpustack rules` lists them"


def rule_ids(values: Iterable[str], known: Collection[str], option: str) -> frozenset[str]:
    """The ids of ``--select``/``--ignore`` values (each comma-separated, the option repeatable)."""
    typed = [part.strip() for value in values for part in value.split(",") if part.strip()]
    unknown = [rule for rule in typed if rule_id(rule) not in known]
    if unknown:
        raise GpustackError(f"{option}: {unknown_rule(unknown[0], known)}")
    return frozenset(map(rule_id, typed))


def severities(values: Iterable[str], known: Collection[str]) -> Mapping[str, Severity]:
    """``--severity GS004=info`` values (repeatable, also comma-separated)."""
    found: dict[str, Severity] = {}
    levels = ", ".join(str(level) for level in sorted(Severity, reverse=True))
    for value in values:
        for part in filter(None, (part.strip() for part in value.split(","))):
            typed, _, level = (text.strip() for text in part.partition("="))
            rule = rule_id(typed)
            if rule not in known:
                raise GpustackError(f"--severity: {unknown_rule(typed, known)}")
            if level.upper() not in Severity.__members__:
                raise GpustackError(f"--severity: expected RULE=LEVEL with LEVEL one of {levels}, not {part!r}")
            found[rule] = Severity.parse(level)
    return found
