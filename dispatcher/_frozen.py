"""``Frozen``: the base of the package's immutable value classes.

``@dataclass(frozen=True)`` writes the methods of each class as source text
and compiles it when the class is created, and importing ``dataclasses``
imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``): for the
value classes of the schema and registration modules that took more than
half of ``import dispatcher``.  A ``Frozen`` subclass instead names its fields
once and writes its ``__init__`` (setting them with ``object.__setattr__``),
and gets here what the dataclass gave it:

* equality (only with an instance of the very same class) and a hash, both
  over ``_compared`` (by default ``_fields``), unless the class defines its own;
* the dataclass ``repr``, ``Name(field=value, ...)`` over ``_fields``;
* assignment and deletion raising ``dataclasses.FrozenInstanceError``;
* pickling and copying, by calling ``__init__`` with the ``_fields`` again
  (so derived attributes are recomputed, not shipped).

``_fields`` are the ``__init__`` parameters, in order.  The classes are not
dataclasses: ``dataclasses.replace`` and ``fields`` do not apply to them
(``FunctionSchema.with_name`` is the one replace the package needed).

Classes made once per registration set their fields with ``slot_setters``
instead of ``object.__setattr__``: the same effect at about half the cost.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable, ClassVar, NoReturn

__all__ = ["Frozen", "slot_setters"]


class Frozen:
    __slots__ = ()

    _fields: ClassVar[tuple[str, ...]] = ()
    _compared: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_compared" not in cls.__dict__:
            cls._compared = cls._fields
        # Made per class, as the dataclass ones are (but without compiling
        # source): a closure over the class's own key, found without lookups.
        key: Callable[[Any], Any] = attrgetter(*cls._compared) if cls._compared else _no_key
        if "__eq__" not in cls.__dict__:
            def __eq__(self: Any, other: object) -> Any:
                if other.__class__ is self.__class__:
                    return key(self) == key(other)
                return NotImplemented

            setattr(cls, "__eq__", __eq__)
        if "__hash__" not in cls.__dict__:
            def __hash__(self: Any) -> int:
                return hash(key(self))

            setattr(cls, "__hash__", __hash__)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        _frozen(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        _frozen(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.__class__, tuple(getattr(self, name) for name in self._fields))


def slot_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """``setter(obj, value)`` for each of ``cls``'s slots ``names``, for its
    ``__init__``: the slot descriptors' own ``__set__``, which skips the
    lookup of the attribute (and of ``__setattr__``) that each
    ``object.__setattr__(obj, name, value)`` makes."""
    return tuple(cls.__dict__[name].__set__ for name in names)


def _no_key(value: object) -> tuple[()]:
    return ()


def _frozen(message: str) -> NoReturn:
    # Imported here: the error is the dataclasses one, which code written
    # against dataclasses catches, but importing the module costs milliseconds.
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(message)
