"""Typed records ↔ canonical JSON.

A record is a class whose fields are its annotations (snake_case): a ``core.values.Value`` or
``Record`` (the task, a claim, an approval, a verdict, a run).
The required fields are the ``__init__`` parameters without a default. Their JSON is camelCase
with sorted keys, so what plain git prints (``git show ref:task.json``) is stable and diffable
(docs/storage.md).

``from_data`` does the structural checks a reader needs (cheap: no jsonschema import on read
paths). The full JSON Schema runs on what okstra reads from elsewhere (a remote, a file, a
user), always, and on what it writes under ``OKSTRA_CHECK_OWN_RECORDS=1`` (the tests): a record
okstra builds is valid by construction, and jsonschema costs a claim ~30 ms (:func:`check_own`).
"""

from __future__ import annotations

import builtins
import sys

from ..core.errors import BadInput, OkstraError
from ..core.jsontext import camel, dumps_line
from ..core.lightos import getenv
from ..core.strict import json_value, not_text
from ..core.values import _Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from ..git.repo import GitRepo

    R = TypeVar("R")


def to_data(record: Any) -> Any:
    """A record as JSON-ready data; ``None`` fields are left out."""
    if _is_record(type(record)):
        out = {}
        for name, key, *_ in _fields(type(record)):
            value = getattr(record, name)
            if value is not None:
                out[key] = to_data(value)
        return out
    if isinstance(record, (list, tuple)):
        return [to_data(item) for item in record]
    if isinstance(record, dict):
        return {key: to_data(value) for key, value in record.items()}
    return record


def _is_record(cls: type) -> bool:
    """A plain record: annotated fields and ``__slots__`` (a ``core.values`` class)."""
    return "__slots__" in cls.__dict__ and "__annotations__" in cls.__dict__


def _fields(cls: type) -> list[tuple[str, str, Any, bool, type | None]]:
    """(attribute, JSON key, type hint, required, the scalar type taken as it comes) per field;
    cached, readers call this a lot."""
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = [(*field, _exact(field[2])) for field in _declared(cls)]
    return found


_FIELDS: dict[type, list[tuple[str, str, Any, bool, type | None]]] = {}


def _declared(cls: type) -> list[tuple[str, str, Any, bool]]:
    # A plain record: its annotations (builtins and PEP 604 unions, evaluated in its module)
    # and the parameters of its __init__ that have no default (a Value's or Record's own
    # constructor: the fields without a default).
    constructor: Any = cls.__init__  # type: ignore[misc]  # the class's own, read not called
    if constructor is _Fields.__init__:
        required = {name for name in vars(cls)["_fields"] if name not in vars(cls)["_defaults"]}
    else:
        init = constructor.__code__
        params = init.co_varnames[1 : init.co_argcount + init.co_kwonlyargcount]
        optional = len(constructor.__defaults__ or ())
        required = set(params[: len(params) - optional])
    scope = vars(sys.modules[cls.__module__])
    return [
        (name, camel(name), hint(text, scope), name in required)
        for name, text in cls.__annotations__.items()
    ]


_UNBUILT = object()


def hint(text: str, scope: dict[str, Any]) -> Any:
    """``eval(text, scope)`` of a field's annotation (its class's own source). The forms
    records use — a name (dotted too), ``X | Y``, ``X[A, B, ...]`` — are built as eval builds
    them, from the same names, without compiling the text: eval compiled each field of each
    record a command reads or writes, ~5M instructions of a claim. Any other text is eval'd."""
    found = _built(text.strip(), scope) if isinstance(text, str) else _UNBUILT
    return eval(text, scope) if found is _UNBUILT else found  # its own source


def _built(text: str, scope: dict[str, Any]) -> Any:
    if text.isidentifier():  # most fields: str, int, a record class
        return _named(text, scope)
    parts = text.split("|") if "[" not in text else _split_outside_brackets(text, "|")
    if parts is None:
        return _UNBUILT
    if len(parts) > 1:
        values = [_built(part.strip(), scope) for part in parts]
        if any(value is _UNBUILT for value in values):
            return _UNBUILT
        union = values[0]
        for value in values[1:]:
            union = union | value
        return union
    if text.endswith("]"):
        start = text.find("[")
        args = _split_outside_brackets(text[start + 1 : -1], ",") if start > 0 else None
        base: Any = _built(text[:start], scope) if args is not None else _UNBUILT
        if base is _UNBUILT or args is None:
            return _UNBUILT
        values = [Ellipsis if arg.strip() == "..." else _built(arg.strip(), scope) for arg in args]
        if any(value is _UNBUILT for value in values):
            return _UNBUILT
        return base[values[0] if len(values) == 1 else tuple(values)]
    first, *attributes = text.split(".")
    if not first.isidentifier() or not all(a.isidentifier() for a in attributes):
        return _UNBUILT
    value = _named(first, scope)
    for attribute in attributes:
        value = getattr(value, attribute, _UNBUILT) if value is not _UNBUILT else value
    return value


def _named(name: str, scope: dict[str, Any]) -> Any:
    """What ``name`` is in ``scope`` (a module's globals), then among the builtins."""
    if name in scope:
        return scope[name]
    return None if name == "None" else getattr(builtins, name, _UNBUILT)


def _split_outside_brackets(text: str, separator: str) -> list[str] | None:
    """``text`` split at each ``separator`` outside brackets; None when its brackets do not
    pair up (eval then says what is wrong with it)."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                return None
        elif char == separator and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    return parts if depth == 0 else None


_SCALARS = (str, int, bool)
_UNION = type(int | None)
"""``types.UnionType`` (``X | None``), without the import on the pre-push hook's path."""


def _exact(hint: Any) -> type | None:
    """``str``, ``int`` or ``bool`` when the field is that (or that or None): a value of
    exactly that type is taken as it is, without the generic walk of ``_convert``."""
    if hint in _SCALARS:
        return hint
    options = [a for a in _union_args(hint) if a is not type(None)]
    return options[0] if len(options) == 1 and options[0] in _SCALARS else None


def _union_args(hint: Any) -> tuple[Any, ...]:
    """The members of a union type hint (``X | None``, ``Optional[X]``), or ``()``."""
    typing = sys.modules.get("typing")  # its objects exist only once it is loaded
    if isinstance(hint, _UNION) or (
        typing is not None and getattr(hint, "__origin__", None) is typing.Union
    ):
        return hint.__args__
    return ()


def from_data(cls: type[R], data: Any, where: str) -> R:
    """Build ``cls`` from JSON data, naming ``where`` and the field on any mismatch."""
    if not isinstance(data, dict):
        raise BadInput(f"{where}: expected a JSON object, found {type(data).__name__}")
    kwargs: dict[str, Any] = {}
    for name, key, hint, required, exact in _fields(cls):
        value = data.get(key)
        if value is None:
            if required:
                raise BadInput(f"{where}: missing field {key!r}")
            continue
        if type(value) is exact:
            kwargs[name] = value  # the common case, without the generic walk
        else:
            kwargs[name] = _convert(hint, value, f"{where}: field {key!r}")
    return cls(**kwargs)


def _convert(hint: Any, value: Any, where: str) -> Any:
    # typing's objects exist only once typing is loaded: a plain record never loads it.
    typing = sys.modules.get("typing")
    origin = getattr(hint, "__origin__", None)
    args: tuple[Any, ...] = getattr(hint, "__args__", ())
    members = _union_args(hint)
    if members:
        options = [a for a in members if a is not type(None)]
        return _convert(options[0], value, where)
    if isinstance(hint, type) and _is_record(hint):
        return from_data(hint, value, where)
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise BadInput(f"{where}: expected a list")
        items = [_convert(args[0], item, where) for item in value]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise BadInput(f"{where}: expected an object")
        return {k: _convert(args[1], v, where) for k, v in value.items()}
    if typing is not None and hint is typing.Any:
        return value
    expected = (int, float) if hint is float else hint
    if not isinstance(value, expected) or (hint is int and isinstance(value, bool)):
        raise BadInput(f"{where}: expected {hint.__name__}, found {type(value).__name__}")
    return value


def record_line(record: Any, schema_name: str, where: str) -> str:
    """A record as one canonical JSON line (checked in tests), for a JSON-Lines note."""
    data = to_data(record)
    check_own(data, schema_name, where)
    return dumps_line(data)


def parse_json_lines(
    cls: type[R], raw: bytes, where: str, schema_name: str
) -> tuple[list[R], list[str]]:
    """Records from a JSON-Lines note, each line checked against its schema (a note may come
    from any clone that can push). A line that does not parse or match is returned as a
    problem, not raised, so one bad line can neither hide the good ones nor count as a record."""
    from ..core.schemacheck import problems as schema_problems

    records: list[R] = []
    problems: list[str] = []
    # Lines end at "\n" only: a JSON string may hold U+2028, which splitlines() would split.
    for number, line in enumerate(raw.decode("utf-8", "replace").split("\n"), 1):
        if not line.strip():
            continue
        at = f"{where} line {number}"
        try:
            data = json_value(line, at)
            mismatch = schema_problems(data, schema_name)
            if mismatch:
                raise BadInput(
                    f"{at}: does not match {schema_name}.schema.json: " + "; ".join(mismatch)
                )
            records.append(from_data(cls, data, at))
        except OkstraError as exc:
            problems.append(str(exc))
    return records, problems


def stored_json(repo: GitRepo, commit: str, ref: str, path: str, missing: str) -> Any:
    """The JSON file ``path`` of the record commit ``ref`` points at, strictly parsed; BadInput
    naming the ref when it points at no sound commit (forged to a blob, corrupt) or the commit
    holds no such file (``missing`` says what the ref should hold)."""
    where = f"{ref}:{path}"
    repo.check_commit(commit, ref)
    raw = repo.read_path(commit, path)
    if raw is None:
        raise BadInput(f"{where} is missing: {missing}")
    return loads(raw, where)


def loads(raw: bytes, where: str) -> Any:
    """A stored record's JSON, strictly (``strict.json_value``): a remote may have forged it."""
    return json_value(raw, where)


_VALIDATORS: dict[str, Any] = {}


def _validator(schema_name: str) -> Any:
    found = _VALIDATORS.get(schema_name)
    if found is None:
        import json

        import jsonschema  # deferred: ~55 ms, needed only when writing

        from ..core.resources import data_dir

        path = data_dir("schemas") / f"{schema_name}.schema.json"
        schema = json.loads(path.read_text("utf-8"))
        found = _VALIDATORS[schema_name] = jsonschema.Draft202012Validator(schema)
    return found


CHECK_OWN_RECORDS = "OKSTRA_CHECK_OWN_RECORDS"
"""Set to ``1`` (the test suite does, for every process it starts) to check every record okstra
builds itself against its schema before storing it."""


def check_own(data: Any, schema_name: str, where: str) -> None:
    """A record okstra built is valid by construction (typed fields, strict input parsing), so
    its JSON Schema check (~30 ms of jsonschema per claim) runs where a bug would show: under
    ``OKSTRA_CHECK_OWN_RECORDS=1``, in tests. Strings that are not text (from bytes that were
    not UTF-8) are refused always: they come from outside. Records read from a remote, a file
    or a user are checked where they are read, always."""
    _refuse_non_text(data, where)
    if getenv(CHECK_OWN_RECORDS) == "1":
        check_schema(data, schema_name, where)


def _refuse_non_text(data: Any, where: str) -> None:
    found = not_text(data)
    if found is not None:
        path, value = found
        raise BadInput(
            f"{where}: {path.removeprefix('(top)/')} {value!r} is not UTF-8 text (it came from "
            "bytes that are not UTF-8, e.g. a file name); rename it or give it as UTF-8"
        )


def check_schema(data: Any, schema_name: str, where: str) -> None:
    """Validate against ``schemas/<schema_name>.schema.json``; every error is named. A string
    that is not text (bytes that were not UTF-8) is refused too: no record could store it."""
    _refuse_non_text(data, where)
    errors = sorted(_validator(schema_name).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        lines = [
            f"  - {'/'.join(str(p) for p in err.path) or '(top)'}: {err.message}" for err in errors
        ]
        raise BadInput(f"{where} does not match {schema_name}.schema.json:\n" + "\n".join(lines))
