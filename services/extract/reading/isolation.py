"""Page reading in child processes bounded in time and memory (``shared.infra.bounded``), each
child keeping the last few source PDFs it was sent so a job's pages do not resend them.

One pool per worker process (built by ``services.extract.bootstrap``), grown to as many
children as pages it reads at once: every page a pull loop takes starts at once, none waits
behind another page's render.
"""

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from shared.infra.bounded import BoundedChild, BoundedPool

T = TypeVar("T")
HELD_SOURCES = 4  # as many as shared.pdf.sources.open_pdf keeps open

# A child's own memory: the sources it holds (each child is a process of its own, and this
# module is where the functions it is sent run).
_held: OrderedDict[tuple[int, int], bytes] = OrderedDict()


class SourceNotHeld(Exception):
    """The child no longer holds the source it was asked to read from."""


def _with_source(read: Callable[..., T], key: tuple[int, int], pdf: bytes | None, *args: Any) -> T:
    """In the child: ``read(pdf, *args)`` with ``pdf`` sent now or held from before."""
    if pdf is not None:
        _held[key] = pdf
        while len(_held) > HELD_SOURCES:
            _held.popitem(last=False)
    elif key not in _held:
        raise SourceNotHeld()
    _held.move_to_end(key)
    return read(_held[key], *args)


class PageReaders:
    """The worker's page-reading children: started on demand, kept for reuse, killed by
    ``close``."""

    def __init__(self) -> None:
        self._pool = BoundedPool(preload=["services.extract.reading.page"])

    async def read(
        self, read: Callable[..., T], pdf: bytes, *args: Any, timeout_s: float, max_mb: int
    ) -> T:
        """``read(pdf, *args)`` in a bounded child, preferably one that holds ``pdf``
        already. Raises what ``read`` raises, or ``shared.infra.bounded.OverLimit`` /
        ``ChildDied``."""
        key = (len(pdf), hash(pdf))  # bytes cache their hash: one pass per source, not per page

        def holds(child: BoundedChild) -> bool:
            return key in child.memo

        async with self._pool.child(prefer=holds) as child:
            if holds(child):
                try:
                    return await child.run(
                        _with_source, read, key, None, *args, timeout_s=timeout_s, max_mb=max_mb
                    )
                except SourceNotHeld:
                    pass
            result = await child.run(
                _with_source, read, key, pdf, *args, timeout_s=timeout_s, max_mb=max_mb
            )
            child.memo[key] = True
            while len(child.memo) > HELD_SOURCES:
                child.memo.pop(next(iter(child.memo)))
            return result

    async def warm(self) -> None:
        """Start the forkserver and one child now, while the rest of the stack comes up,
        instead of on the first page (its imports take a second or two)."""
        await self._pool.warm()

    def close(self) -> None:
        self._pool.close()
