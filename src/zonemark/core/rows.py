"""A read-only sequence made row by row: the column tables of the parse, the layer and the trace reader."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

_T = TypeVar("_T")


class RowSequence(Sequence[_T]):
    """A sequence whose items are made when read (``_item(i)``, 0 <= i < len), read as the tuple it stands for:
    indexed, sliced to a tuple, equal to any sequence of the same items, hashed and shown as that tuple."""

    __slots__ = ()

    def _item(self, i: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, k: int) -> _T: ...

    @overload
    def __getitem__(self, k: slice) -> tuple[_T, ...]: ...

    def __getitem__(self, k: int | slice) -> _T | tuple[_T, ...]:
        if isinstance(k, slice):
            return tuple(self._item(i) for i in range(*k.indices(len(self))))
        n = len(self)
        if not -n <= k < n:
            raise IndexError(k)
        return self._item(k + n if k < 0 else k)

    def __iter__(self) -> Iterator[_T]:
        return (self._item(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))
