"""Immutable values for the classes read commands build as they start.

``@dataclass(frozen=True)`` writes and compiles six methods per class when its module is
imported: ~0.4 ms a class on Python 3.11, which was about half of what a read command spends
beyond loading pygit2. A :class:`Value` gives the same behaviour without that: equality and
hash by field values, a ``repr`` naming them, :meth:`Value.replace`, and assignment refused
after ``__init__``.

A subclass annotates and documents its fields as record fields are (their order is the
``repr``'s), lists them in ``__slots__``, and its ``__init__`` takes them by the same names and
hands every one to :func:`init`. A slot that is not annotated is not a field: it may hold
what :func:`remember` keeps. A :class:`Record` is the mutable kind, for stored records that
commands change before writing them back. ``records.base`` reads both as plain records.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Self, TypeVar

    T = TypeVar("T")

_assign = object.__setattr__


def init(value: Value, **fields: Any) -> None:
    """Set ``value``'s fields: every one of them, nothing else."""
    if len(fields) != len(value._fields):
        missing = sorted(set(value._fields) - fields.keys())
        raise TypeError(f"{type(value).__name__}: fields not set: {', '.join(missing)}")
    for name, field in fields.items():
        _assign(value, name, field)  # a name outside __slots__ raises AttributeError


def remember(value: Value, slot: str, derived: T) -> T:
    """Keep ``derived``, worked out from ``value``'s fields, in its (unannotated) ``slot``."""
    _assign(value, slot, derived)
    return derived


class _Fields:
    """Equality and ``repr`` by the fields: the annotated names of the class itself."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    """The field names, in declaration order (set for each subclass)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Its own annotations only (not inherited); inspect.get_annotations would load inspect.
        cls._fields = tuple(cls.__dict__.get("__annotations__", ()))  # noqa: RUF063

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
