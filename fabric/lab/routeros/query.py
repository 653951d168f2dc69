"""API query words (``?name=x``, ``?-name``, ``?<name=x``, ``?#|&!.N``) evaluated as a stack."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .errors import Trap

Row = Mapping[str, str]
Predicate = Callable[[Row], bool]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _compare(actual: str, wanted: str) -> int:
    a, b = _number(actual), _number(wanted)
    if a is not None and b is not None:
        return (a > b) - (a < b)
    return (actual > wanted) - (actual < wanted)


#: RouterOS matches a boolean property by its meaning: ``?disabled=no`` is ``disabled=false``.
_BOOLEAN = {"yes": "true", "no": "false"}


def _equal(actual: str | None, wanted: str) -> bool:
    if actual == wanted:
        return True
    return actual in ("true", "false") and _BOOLEAN.get(wanted) == actual


def _leaf(body: str) -> Predicate:
    """One push word: ``name``, ``=name=x``, ``name=x``, ``-name``, ``<name=x``, ``>name=x``."""
    if body.startswith("-"):
        name = body[1:]
        return lambda row: name not in row
    op = ""
    if body[:1] in ("<", ">", "="):
        op, body = body[0], body[1:]
    if "=" not in body:
        if op in ("<", ">"):
            raise Trap("unknown parameter")
        return lambda row: body in row
    name, value = body.split("=", 1)
    if op == "<":
        return lambda row: name in row and _compare(row[name], value) < 0
    if op == ">":
        return lambda row: name in row and _compare(row[name], value) > 0
    return lambda row: _equal(row.get(name), value)


def _or(a: Predicate, b: Predicate) -> Predicate:
    return lambda row: a(row) or b(row)


def _and(a: Predicate, b: Predicate) -> Predicate:
    return lambda row: a(row) and b(row)


def _not(a: Predicate) -> Predicate:
    return lambda row: not a(row)


def _apply_ops(stack: list[Predicate], ops: str) -> None:
    i = 0
    last_was_index = False
    while i < len(ops):
        ch = ops[i]
        if ch.isdigit():
            j = i
            while j < len(ops) and ops[j].isdigit():
                j += 1
            index = int(ops[i:j])
            if index >= len(stack):
                raise Trap("unknown parameter")
            picked = stack[-1 - index]
            if j == len(ops):
                stack[:] = [picked]
            else:
                stack.append(picked)
            i, last_was_index = j, True
            continue
        if ch in "|&":
            if len(stack) < 2:
                raise Trap("unknown parameter")
            b, a = stack.pop(), stack.pop()
            stack.append(_or(a, b) if ch == "|" else _and(a, b))
        elif ch == "!":
            if not stack:
                raise Trap("unknown parameter")
            stack.append(_not(stack.pop()))
        elif ch == ".":
            if not last_was_index:
                if not stack:
                    raise Trap("unknown parameter")
                stack.append(stack[-1])
        else:
            raise Trap("unknown parameter")
        last_was_index = False
        i += 1


def compile_query(words: Sequence[str]) -> Predicate:
    """Build one predicate from query words (without their leading ``?``); all results ANDed."""
    stack: list[Predicate] = []
    for word in words:
        if word.startswith("#"):
            _apply_ops(stack, word[1:])
        else:
            stack.append(_leaf(word))
    final = list(stack)
    return lambda row: all(p(row) for p in final)
