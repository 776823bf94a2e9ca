"""Which ``.Values`` paths a Helm chart's templates read, from the Go template source.

No Python package parses Go templates (``go-template`` and ``cognihub-pygotemplate`` on PyPI
render through Go, they give no syntax tree, and neither knows Helm's functions), so this is a
small tokenizer of ``{{ }}`` actions with an abstract evaluation of what each value is:

- a dot or variable is the chart's root (or a subchart's, ``.Subcharts.gfd``), a path below ``.Values``, a ``dict`` literal (named
  templates called with ``(dict "root" . "x" .Values.y)``), a ``list`` literal (called with ``(list . "x")``
  and taken apart with ``index . 0``), or unknown;
- ``.Values.a.b``, ``$.Values.a.b``, ``$root.Values.a.b``, ``index .Values "a" "b"``,
  ``get``/``hasKey``/``dig`` read ``a.b``; ``with`` moves the dot (``else`` moves it back);
  ``include``/``template`` evaluate the named template with the argument as its dot;
- a path handed whole to ``toYaml``/``toJson``/``tpl``/``merge``…, ranged over, or indexed
  with a non-literal key is *passthrough*: the template uses whatever lies below it.

What it cannot see (``lookup``, template names computed at run time, values read by ``tpl``
from inside other values) errs towards "read" or is left out; never towards a false "unread".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpustack.lint.charts import gotokens
from gpustack.lint.charts.gotokens import Token, actions

Path = tuple[str, ...]

# Functions that use their argument as a whole: everything below a path passed to them is read.
WHOLE = frozenset(
    {
        "toYaml", "toJson", "toPrettyJson", "toRawJson", "toToml", "mustToJson", "mustToPrettyJson",
        "mustToRawJson", "tpl", "merge", "mergeOverwrite", "mustMerge", "mustMergeOverwrite", "deepCopy",
        "mustDeepCopy", "keys", "values", "pick", "omit", "sortAlpha", "join", "toStrings", "append",
        "mustAppend", "prepend", "concat", "uniq", "without", "has", "first", "last", "rest", "initial", "len",
        "set", "unset", "print", "printf", "println", "b64enc", "sha256sum", "quote", "squote", "toString",
        "fromYaml", "include", "template", "range", "empty", "eq", "ne", "kindIs", "typeIs", "kindOf", "typeOf",
        "hasKey", "get", "dig", "index", "pluck", "compact", "slice", "reverse", "splitList", "contains",
    }
)
# Functions that return one of their arguments (a ``with`` on the result reads below it).
RETURNS_ARGUMENT = frozenset({"default", "required", "coalesce", "ternary", "or", "and", "fail", "mustFirst"})
# Functions among WHOLE whose use of a map argument is clearly partial or type-only: a path
# passed to them is read, not passed through.
SHALLOW = frozenset({"empty", "eq", "ne", "kindIs", "typeIs", "kindOf", "typeOf", "len", "has", "contains",
                     "quote", "squote", "toString", "hasKey", "get", "dig", "index", "print", "printf",
                     "println", "b64enc", "sha256sum", "first", "last", "join"})


@dataclass(frozen=True)
class Root:
    """A chart's top-level context (``.`` in a template file): ``.Values`` is the values at
    ``path`` (``()``; a subchart's context, ``.Subcharts.gfd``, has its values under ``gfd``)."""

    path: Path = ()


@dataclass(frozen=True)
class Values:
    path: Path


@dataclass(frozen=True)
class Dict:
    items: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Seq:
    """A ``list`` literal: named templates called with ``(list $ .Values.y)`` read ``index . 0``."""

    items: tuple[Any, ...]


@dataclass(frozen=True)
class _Subcharts:
    """``.Subcharts``: its fields are the subcharts' contexts."""

    path: Path


@dataclass(frozen=True)
class Either:
    """A variable assigned more than once (``$x := .Values.a`` … ``$x = .Values.b``): the
    template may use any of them, so each is followed."""

    items: tuple[Any, ...]


ROOT = Root()
UNKNOWN = None


@dataclass
class Reads:
    read: set[Path] = field(default_factory=set)
    passthrough: set[Path] = field(default_factory=set)


# --- evaluation ---------------------------------------------------------------------------


@dataclass
class _Scope:
    keyword: str  # with, range, if, define, block
    outer_dot: Any


class Analysis:
    """Evaluate a chart's templates (every file's actions) and collect what they read."""

    def __init__(self, templates: Mapping[str, str]) -> None:
        self.reads = Reads()
        self.defines: dict[str, list[list[Token]]] = {}
        self.bodies: list[list[list[Token]]] = []
        for text in templates.values():
            self.bodies.append(self._split_defines(list(actions(text))))
        self._done: set[tuple[str, Any]] = set()
        self._called: set[str] = set()

    def _split_defines(self, tokens: list[list[Token]]) -> list[list[Token]]:
        """Top-level actions of a file; ``define`` bodies go to ``self.defines``."""
        top: list[list[Token]] = []
        stack: list[tuple[str, list[list[Token]]]] = []
        for action in tokens:
            head = action[0].text if action and action[0].kind == "word" else ""
            if head == "define" and len(action) > 1 and action[1].kind == "string":
                stack.append((gotokens.unquote(action[1].text), []))
                continue
            if stack:
                if head in ("if", "with", "range", "block"):
                    stack[-1][1].append(action)
                    stack.append(("", stack[-1][1]))  # nested block inside a define
                    continue
                if head == "end":
                    name, body = stack.pop()
                    if name:
                        self.defines[name] = body
                    else:
                        body.append(action)
                    continue
                stack[-1][1].append(action)
            else:
                top.append(action)
        return top

    def run(self) -> Reads:
        for body in self.bodies:
            self._body(body, ROOT)
        for name, body in self.defines.items():
            if name not in self._called:  # helpers no one calls here (a parent chart might): as on the root
                self._body(body, ROOT)
        return self.reads

    def _body(self, body: list[list[Token]], dot: Any) -> None:
        variables: dict[str, Any] = {"$": dot}
        scopes: list[_Scope] = []
        for action in body:
            if not action:
                continue
            head = action[0].text if action[0].kind == "word" else ""
            rest = action[1:]
            if head in ("if", "with", "range", "block"):
                scopes.append(_Scope(head, dot))
                if head == "block":
                    value = self._pipeline(rest[1:], dot, variables) if len(rest) > 1 else dot
                    self._call(gotokens.unquote(rest[0].text) if rest else "", value)
                    continue
                dot = self._control(head, rest, dot, variables)
            elif head == "else":
                if not scopes:
                    continue
                scope = scopes[-1]
                dot = scope.outer_dot
                if rest and rest[0].kind == "word" and rest[0].text in ("if", "with"):
                    dot = self._control(rest[0].text, rest[1:], dot, variables)
            elif head == "end":
                if scopes:
                    dot = scopes.pop().outer_dot
            elif head in ("template", "include"):
                self._pipeline(action, dot, variables)
            elif head in ("break", "continue"):
                continue
            else:
                self._pipeline(action, dot, variables)

    def _control(self, keyword: str, tokens: list[Token], dot: Any, variables: dict[str, Any]) -> Any:
        declared, tokens = gotokens.declarations(tokens)
        value = self._pipeline(tokens, dot, variables)
        if keyword == "range":
            self._whole(value)
            for name in declared:
                variables[name] = UNKNOWN
            return UNKNOWN
        if declared:
            variables[declared[-1]] = value
        return value if keyword == "with" else dot

    # a pipeline: commands separated by |, each command's result the last argument of the next
    def _pipeline(self, tokens: list[Token], dot: Any, variables: dict[str, Any]) -> Any:
        reassigned = any(t.kind == "assign" and t.text == "=" for t in tokens[:4])
        declared, tokens = gotokens.declarations(tokens)
        value: Any = UNKNOWN
        first = True
        for command in gotokens.split(tokens, "|"):
            value = self._command(command, dot, variables, None if first else (value,))
            first = False
        for name in declared:
            variables[name] = _either(variables.get(name), value) if reassigned else value
        return value

    def _command(self, tokens: list[Token], dot: Any, variables: dict[str, Any], piped: tuple[Any, ...] | None) -> Any:
        operands = gotokens.operands(tokens)
        if not operands:
            return piped[0] if piped else UNKNOWN
        head = operands[0]
        if len(head) == 1 and head[0].kind == "word" and head[0].text not in ("nil", "true", "false"):
            function = head[0].text
            arguments = [self._operand(o, dot, variables) for o in operands[1:]] + list(piped or ())
            return self._apply(function, operands[1:], arguments)
        value = self._operand(head, dot, variables)
        for operand in operands[1:]:
            self._operand(operand, dot, variables)
        return value

    def _operand(self, tokens: list[Token], dot: Any, variables: dict[str, Any]) -> Any:
        if not tokens:
            return UNKNOWN
        first = tokens[0]
        if first.kind == "punct" and first.text == "(":
            inner, after = gotokens.parenthesised(tokens)
            value = self._pipeline(inner, dot, variables)
            return self._fields(value, after)
        if first.kind == "field":
            if first.text.startswith("$"):
                name, _, chain = first.text.partition(".")
                return self._fields(variables.get(name, UNKNOWN), chain)
            return self._fields(dot, first.text[1:])
        if first.kind == "word":
            return self._apply(first.text, [], []) if first.text not in ("nil", "true", "false") else UNKNOWN
        if first.kind == "string":
            return gotokens.unquote(first.text)
        if first.kind == "number" and first.text.isdigit():
            return int(first.text)
        return UNKNOWN

    def _fields(self, value: Any, chain: str) -> Any:
        for name in (step for step in chain.split(".") if step):
            value = self._field(value, name)
        return value

    def _field(self, value: Any, name: str) -> Any:
        if isinstance(value, Either):
            return _either(*(self._field(item, name) for item in value.items))
        if isinstance(value, Root):
            if name == "Subcharts":
                return _Subcharts(value.path)
            return Values(value.path) if name == "Values" else UNKNOWN
        if isinstance(value, _Subcharts):
            return Root((*value.path, name))
        if isinstance(value, Values):
            path = (*value.path, name)
            self.reads.read.add(path)
            return Values(path)
        if isinstance(value, Dict):
            return dict(value.items).get(name, UNKNOWN)
        return UNKNOWN

    def _apply(self, function: str, operands: list[list[Token]], arguments: list[Any]) -> Any:
        if function in ("include", "template"):
            name = arguments[0] if arguments else None
            context = arguments[1] if len(arguments) > 1 else UNKNOWN
            if isinstance(name, str):
                self._call(name, context)
            else:
                self._whole(context)
            return UNKNOWN
        if function == "dict":
            keys = arguments[0::2]
            return Dict(tuple((k, v) for k, v in zip(keys, arguments[1::2], strict=False) if isinstance(k, str)))
        if function == "list":
            return Seq(tuple(arguments))
        if function in ("index", "get", "hasKey", "pluck", "dig"):
            return self._index(function, arguments)
        if function in RETURNS_ARGUMENT:
            found = [a for a in arguments if isinstance(a, (Values, Dict, Seq, Root, Either))]
            return found[-1] if function == "default" and found else (found[0] if found else UNKNOWN)
        if function in WHOLE and function not in SHALLOW:
            for argument in arguments:
                self._whole(argument)
        return UNKNOWN

    def _index(self, function: str, arguments: list[Any]) -> Any:
        if function == "dig":  # dig "a" "b" default map
            base, keys = (arguments[-1], arguments[:-2]) if len(arguments) >= 3 else (UNKNOWN, [])
        elif function == "pluck":  # pluck "a" map1 map2
            base, keys = (arguments[1], arguments[:1]) if len(arguments) >= 2 else (UNKNOWN, [])
        else:
            base, keys = (arguments[0], arguments[1:]) if arguments else (UNKNOWN, [])
        value = base
        for key in keys:
            if isinstance(value, Seq) and isinstance(key, int):
                value = value.items[key] if key < len(value.items) else UNKNOWN
                continue
            if not isinstance(key, str):
                self._whole(value)  # a computed key or a list index: any key below may be read
                return UNKNOWN
            value = self._field(value, key) if not isinstance(value, Root) else UNKNOWN
        return value

    def _whole(self, value: Any) -> None:
        if isinstance(value, Either):
            for item in value.items:
                self._whole(item)
        elif isinstance(value, Values) and value.path:  # the whole root: checksums of all values
            self.reads.passthrough.add(value.path)
        elif isinstance(value, Dict):
            for _, item in value.items:
                self._whole(item)
        elif isinstance(value, Seq):
            for item in value.items:
                self._whole(item)

    def _call(self, name: str, context: Any) -> None:
        if isinstance(context, Either):
            for item in context.items:
                self._call(name, item)
            return
        body = self.defines.get(name)
        if body is None:
            self._whole(context)  # a helper of a library chart gpustack did not read
            return
        self._called.add(name)
        key = (name, context)
        if key in self._done:
            return
        self._done.add(key)
        self._body(body, context)


def _either(*values: Any) -> Any:
    """One value, or an ``Either`` of the distinct known ones."""
    items: list[Any] = []
    for value in values:
        for item in value.items if isinstance(value, Either) else (value,):
            if item is not UNKNOWN and item not in items:
                items.append(item)
    return items[0] if len(items) == 1 else (Either(tuple(items)) if items else UNKNOWN)


def reads(templates: Mapping[str, str]) -> Reads:
    """The paths below ``.Values`` that ``templates`` (file name -> text) read or pass through."""
    return Analysis(templates).run()
