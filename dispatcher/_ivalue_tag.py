"""What both cores' boxing code and ``dispatcher.ivalue`` share: IValue tags, and the mismatch signal."""
from enum import IntEnum


class IValueTag(IntEnum):
    """What an IValue holds (``c10::IValue::IValueTag``)."""

    NONE = 0
    TENSOR = 1
    DOUBLE = 2
    INT = 3
    BOOL = 4
    STRING = 5
    COMPLEX = 6
    DEVICE = 7
    SCALAR_TYPE = 8
    LAYOUT = 9
    MEMORY_FORMAT = 10
    GENERATOR = 11
    INT_LIST = 12
    DOUBLE_LIST = 13
    BOOL_LIST = 14
    TENSOR_LIST = 15
    GENERIC_LIST = 16
    TUPLE = 17
    OBJECT = 18


# Payloads that IValue.to_python() rebuilds: typed lists hold a tuple of plain
# values, generic lists and tuples a tuple of IValues (c10::List<int64_t> vs
# c10::List<IValue>).
TYPED_LIST_TAGS = frozenset({IValueTag.INT_LIST, IValueTag.DOUBLE_LIST, IValueTag.BOOL_LIST, IValueTag.TENSOR_LIST})
CONTAINER_TAGS = TYPED_LIST_TAGS | {IValueTag.GENERIC_LIST, IValueTag.TUPLE}


class Mismatch(Exception):
    """Raised by a converter (Python value -> IValue) for a value of the wrong type.

    ``received`` describes the offending value; the boxer that called the
    converter turns it into a TypeError naming the operator and argument.
    """

    def __init__(self, received: str) -> None:
        super().__init__(received)
        self.received = received
