"""Go template actions as tokens: the tokenizer of ``{{ }}`` and the token-list helpers.

``actions`` yields the tokens of each action of a template (comments skipped); ``declarations``,
``split``, ``operands``, ``parenthesised`` and ``unquote`` take a token list apart for the
abstract evaluation in ``gotemplate``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_ACTION = re.compile(r"\{\{-?\s*(/\*.*?\*/)?\s*-?\}\}|\{\{-?", re.S)
_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<string>"(?:\\.|[^"\\])*"|`[^`]*`|'(?:\\.|[^'\\])+')"""
    r"""|(?P<close>-?\}\})|(?P<assign>:?=)|(?P<punct>[()|,])"""
    r"""|(?P<field>(?:\$[A-Za-z0-9_]*|\.[A-Za-z0-9_]*)(?:\.[A-Za-z0-9_]+)*)"""
    r"""|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<number>[-+]?[0-9][0-9A-Za-z_.+-]*)|(?P<other>.)""",
    re.S,
)
_KINDS = ("space", "string", "close", "assign", "punct", "field", "word", "number", "other")


@dataclass(frozen=True)
class Token:
    kind: str  # string, assign, punct, field, word, number, other; chain: a field glued to ``)``
    text: str


def actions(text: str) -> Iterator[list[Token]]:
    """The tokens of each ``{{ }}`` action (comments skipped)."""
    position = 0
    while True:
        start = text.find("{{", position)
        if start < 0:
            return
        match = _ACTION.match(text, start)
        if match and match.group(1) is not None:  # a comment
            position = match.end()
            continue
        position = start + (3 if text.startswith("{{-", start) else 2)
        tokens: list[Token] = []
        glued = False  # the previous token was ``)`` and nothing came between
        while position < len(text):
            token = _TOKEN.match(text, position)
            assert token is not None  # ``other`` matches any character
            position = token.end()
            kind = next(k for k in _KINDS if token.group(k) is not None)
            if kind == "close":
                break
            if kind != "space":
                tokens.append(Token("chain" if glued and kind == "field" else kind, token.group(kind)))
            glued = kind == "punct" and token.group(kind) == ")"
        yield tokens


def declarations(tokens: list[Token]) -> tuple[list[str], list[Token]]:
    """``$a, $b := pipeline`` -> (["$a", "$b"], pipeline)."""
    for index, token in enumerate(tokens):
        if token.kind == "assign":
            names = [t.text for t in tokens[:index] if t.kind == "field" and t.text.startswith("$")]
            return names, tokens[index + 1:]
        if token.kind not in ("field", "punct") or (token.kind == "punct" and token.text != ","):
            break
    return [], tokens


def split(tokens: list[Token], separator: str) -> list[list[Token]]:
    parts: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        if token.kind == "punct" and token.text == "(":
            depth += 1
        elif token.kind == "punct" and token.text == ")":
            depth -= 1
        if depth == 0 and token.kind == "punct" and token.text == separator:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def operands(tokens: list[Token]) -> list[list[Token]]:
    """A command's operands: a token, a word with its field chain, or a parenthesis with the
    field chain after it."""
    operands: list[list[Token]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind == "punct" and token.text == "(":
            depth, end = 0, index
            for end in range(index, len(tokens)):
                if tokens[end].kind == "punct":
                    depth += {"(": 1, ")": -1}.get(tokens[end].text, 0)
                    if depth == 0:
                        break
            operand = tokens[index:end + 1]
            index = end + 1
            if index < len(tokens) and tokens[index].kind == "chain":
                operand.append(tokens[index])  # (…).a.b
                index += 1
            operands.append(operand)
            continue
        operands.append([token])
        index += 1
    return operands


def parenthesised(tokens: list[Token]) -> tuple[list[Token], str]:
    """``( pipeline ).a.b`` -> (pipeline, "a.b")."""
    if tokens[-1].kind == "chain":
        return tokens[1:-2], tokens[-1].text[1:]
    return tokens[1:-1], ""


def unquote(text: str) -> str:
    if text[:1] == "`":
        return text[1:-1]
    if text[:1] == '"':
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return text
