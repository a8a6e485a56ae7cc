# The interface of _copy.c, which mypy cannot read.
from collections.abc import Sequence

WAKE: int
FLUSH: int
BATCH: int
FULL: int
END: int

def pump(
    master: int,
    stdout_fd: int,
    outbox: int,
    may_write: bool,
    wake: Sequence[int],
    wake_writable: int,
    origin: float,
    coalesce: float,
    batch: int,
    /,
) -> tuple[int, bytes, bytes, bool]: ...
