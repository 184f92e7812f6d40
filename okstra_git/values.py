"""Immutable values for the classes read commands build as they start.

``@dataclass(frozen=True)`` writes and compiles six methods per class when its module is
imported: ~0.4 ms a class on Python 3.11, which was about half of what a read command spends
beyond loading pygit2. A :class:`Value` gives the same behaviour without that: equality and
hash by field values, a ``repr`` naming them, :meth:`Value.replace`, and assignment refused
after ``__init__``.

A subclass lists its fields in ``__slots__``, annotates and documents them as record fields
are, and its ``__init__`` takes them by the same names and hands every one to :func:`init`.
``records.base`` reads such a class as a plain record.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Self

_assign = object.__setattr__


def init(value: Value, **fields: Any) -> None:
    """Set ``value``'s fields: every name in its ``__slots__``, none else."""
    if len(fields) != len(value.__slots__):
        missing = sorted(set(value.__slots__) - fields.keys())
        raise TypeError(f"{type(value).__name__}: fields not set: {', '.join(missing)}")
    for name, field in fields.items():
        _assign(value, name, field)  # a name outside __slots__ raises AttributeError


class Value:
    """Base of an immutable value class (see the module docstring)."""

    __slots__ = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is immutable")

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (as ``dataclasses.replace``)."""
        return type(self)(**{**dict(zip(self.__slots__, self._fields(), strict=True)), **changes})
