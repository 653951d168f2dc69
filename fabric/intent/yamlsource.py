"""YAML loading that remembers where every value came from, so errors can name file and line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from fabric.errors import InputError, InputProblem

Path_ = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


@dataclass
class SourceDoc:
    """A parsed YAML document plus the line (1-based) of every key and item in it."""

    file: str
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int | None:
        """Line of `path`, or of its nearest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), None)

    def problem(self, path: Path_, message: str) -> InputProblem:
        return InputProblem(self.file, self.line_of(path), dotted(path), message)


def dotted(path: Path_) -> str:
    """('links', 3, 'b') -> 'links[3].b'."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


#: The composer with libyaml where PyYAML has it (the same nodes, tags and marks, about ten
#: times faster), else PyYAML's own.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_text(text: str) -> Any:
    """Plain YAML (no line tracking) of a file the toolkit ships, with `_LOADER`."""
    return yaml.load(text, Loader=_LOADER)


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int],
          scalars: yaml.constructor.SafeConstructor) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _walk(key_node, (), {}, scalars)
            child = (*path, key)
            if key in out:
                raise InputError(InputProblem("", key_node.start_mark.line + 1, dotted(child),
                                              "duplicate key"))
            out[key] = _walk(value_node, child, lines, scalars)
            lines[child] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(item, (*path, i), lines, scalars) for i, item in enumerate(node.value)]
    try:
        return scalars.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError) as exc:  # an unknown tag, a date that is none
        why = getattr(exc, "problem", None) or str(exc)
        raise InputError(InputProblem("", node.start_mark.line + 1, dotted(path),
                                      f"YAML value {node.value!r}: {why}")) from None


def _syntax(name: str, text: str, exc: yaml.YAMLError) -> InputError:
    """The InputError for a file libyaml could not read, worded by PyYAML's own parser where
    it fails too (its messages name the culprit: the tab, the undefined alias)."""
    try:
        yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as pure:
        exc = pure
    except RecursionError:
        pass
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    why = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    return InputError(InputProblem(name, line, "", f"YAML syntax: {why}"
                                   + (f" ({context})" if context else "")))


def load_yaml(path: Path) -> SourceDoc:
    """Load one YAML file; syntax and value errors become an InputError naming file and line
    (and the field, for a value)."""
    name = str(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(InputProblem(name, None, "", f"cannot read: {exc.strerror}")) from None
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise _syntax(name, text, exc) from None
    lines: dict[Path_, int] = {}
    if node is None:
        return SourceDoc(name, {}, {(): 1})
    try:
        data = _walk(node, (), lines, yaml.constructor.SafeConstructor())
    except InputError as exc:
        for p in exc.problems:
            p.file = name
        raise InputError(exc.problems) from None  # the message again, now naming the file
    except RecursionError:
        raise InputError(InputProblem(name, None, "", "YAML: an alias refers to itself "
                                      "(a recursive structure)")) from None
    return SourceDoc(name, data, lines)


def validate(doc: SourceDoc, model: type[M], data: Any = None,
                           prefix: Path_ = ()) -> M:
    """Validate `data` (default: the whole document) against a pydantic model.

    Every pydantic error becomes an InputProblem with the file, line and dotted field.
    """
    try:
        return model.model_validate(doc.data if data is None else data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = (*prefix, *(p for p in err["loc"] if not _is_union_tag(p)))
            problems.append(doc.problem(loc, _friendly(err)))
        raise InputError(problems) from None


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and ("[" in part or part in {"function-after", "str", "int"})


def _friendly(err: Any) -> str:
    msg = str(err["msg"])
    if err["type"] == "extra_forbidden":
        return "unknown field"
    if err["type"] == "missing":
        return "required field is missing"
    return msg
