"""Value classes, their fields declared once: for the classes read commands build as they start.

``@dataclass(frozen=True)`` writes and compiles six methods per class when its module is
imported: ~0.4 ms a class on Python 3.11, which was about half of what a read command spends
beyond loading pygit2. A :class:`Value` gives the same behaviour without that: equality and
hash by field values, a ``repr`` naming them, :meth:`Value.replace`, and assignment refused
after ``__init__``.

A subclass annotates and documents its fields, as a dataclass does (their order is the
constructor's and the ``repr``'s; a field given a value there has that default, one given
``field(default_factory=list)`` a new list for each value), and nothing else: its
``__slots__`` and ``__init__`` (keyword or positional arguments, in field order) come from the
annotations. A slot that holds what :func:`remember` keeps (derived from the fields,
worked out once) is named in ``_memo``. A :class:`Record` is the mutable kind, for stored
records that commands change before writing them back; one that a listing builds by the
thousand may write its own ``__init__``. ``records.base`` reads both as plain records.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, Self, TypeVar
    from typing import dataclass_transform as fields_from_annotations

    T = TypeVar("T")
else:

    def fields_from_annotations(**_options):  # typing.dataclass_transform: tells mypy; no-op
        return lambda cls: cls


_assign = object.__setattr__
_NO_DEFAULT = object()


class _Fresh:
    """A default made afresh for each value: see :func:`field`."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], T]) -> T:
    """A field's default made for each value by calling ``default_factory`` (a list, a dict),
    as ``dataclasses.field(default_factory=…)``: one shared default would be changed for all."""
    return _Fresh(default_factory)  # type: ignore[return-value]  # read by _Fields.__init__


def init(value: Value | Record, **fields: Any) -> None:
    """Set ``value``'s fields: every one of them, nothing else (a hand-written ``__init__``)."""
    if len(fields) != len(value._fields):
        missing = sorted(set(value._fields) - fields.keys())
        raise TypeError(f"{type(value).__name__}: fields not set: {', '.join(missing)}")
    for name, field in fields.items():
        _assign(value, name, field)  # a name outside __slots__ raises AttributeError


def remember(value: Value, slot: str, derived: T) -> T:
    """Keep ``derived``, worked out from ``value``'s fields, in its ``_memo`` ``slot``."""
    _assign(value, slot, derived)
    return derived


@fields_from_annotations(field_specifiers=(field,))
class _FieldsMeta(type):
    """Makes a class's ``__slots__``, field list and defaults from its own annotations."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> _FieldsMeta:
        # Its own annotations only (not inherited); inspect.get_annotations would load inspect.
        fields = tuple(
            field
            for field, hint in namespace.get("__annotations__", {}).items()
            if not str(hint).startswith("ClassVar")
        )
        defaults = {
            field: namespace.pop(field) for field in fields if field in namespace
        }  # a class attribute of a slot's name would shadow the slot
        if "__slots__" not in namespace:
            namespace["__slots__"] = (*fields, *namespace.get("_memo", ()))
        cls: Any = super().__new__(mcls, name, bases, namespace, **kwargs)
        cls._fields = fields
        cls._defaults = defaults
        return cls


class _Fields(metaclass=_FieldsMeta):
    """Equality, ``repr`` and the constructor by the fields."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    """The field names, in declaration order (set for each subclass)."""
    _defaults: ClassVar[dict[str, Any]] = {}
    """The fields that have a default: name → value (set for each subclass)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if not kwargs and len(args) == len(fields):  # the common calls, kept as fast as init()
            for name, value in zip(fields, args):  # noqa: B905  # lengths checked above
                _assign(self, name, value)
            return
        if not args and len(kwargs) == len(fields) and all(name in kwargs for name in fields):
            for name in fields:
                _assign(self, name, kwargs[name])
            return
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}: {len(args)} values for {len(fields)} fields")
        given = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields or name in given:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated field {name!r}")
            given[name] = value
        for name in fields:
            value = given.get(name, _NO_DEFAULT)
            if value is _NO_DEFAULT:
                value = self._defaults.get(name, _NO_DEFAULT)
                if type(value) is _Fresh:
                    value = value.factory()
                elif value is _NO_DEFAULT:
                    raise TypeError(f"{type(self).__name__}: field not set: {name}")
            _assign(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"


class Value(_Fields):
    """Base of an immutable value class (see the module docstring)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is immutable")

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (as ``dataclasses.replace``)."""
        return type(self)(**{**dict(zip(self._fields, self._values(), strict=True)), **changes})


class Record(_Fields):
    """Base of a mutable record class (``task.json``, ``claim.json``): equality and ``repr``
    by field values, unhashable, as a mutable dataclass. Its ``__init__`` assigns each field
    itself: a listing builds one per task, 100k of them."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # equal by value and mutable

    def copy(self) -> Self:
        """A deep copy of the record (its records, lists and dicts copied; other values are
        immutable), so a change to it leaves ``self`` as it was: a record kept to be read again
        is handed out this way."""
        new = object.__new__(type(self))
        for name in self._fields:
            _assign(new, name, _copied(getattr(self, name)))
        return new


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if kind is list:
        return [_copied(item) for item in value]
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    return value.copy() if isinstance(value, Record) else value


_IMMUTABLE = frozenset((str, int, bool, float, type(None)))
