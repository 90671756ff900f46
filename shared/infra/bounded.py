"""Work a hostile file can make endless or enormous, run in child processes bounded in
wall-clock time and address space.

MuPDF holds the GIL while it parses or renders, so a page or an upload that takes minutes in a
thread stalls the whole process: its event loop, its NATS connection, its in-progress acks,
its other HTTP routes. A thread cannot be stopped either. In a child process the caller's
event loop stays free, the deadline is enforced by killing the child, and ``RLIMIT_AS`` caps
what the work may allocate. Children are forked from a forkserver that has the caller's
modules preloaded, so starting one costs milliseconds, and they are reused between tasks.
"""

import asyncio
import contextlib
import ctypes
import heapq
import importlib
import itertools
import multiprocessing
import resource
import signal
from collections.abc import AsyncIterator, Callable, Iterable
from multiprocessing.connection import Connection
from typing import Any

import psutil

MB = 1024 * 1024
_MP = multiprocessing.get_context("forkserver")
_preloaded: set[str] = set()
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    # Linux: the child gets SIGTERM when the parent dies, even by SIGKILL, so no orphans.
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class OverLimit(Exception):
    """The work went past its time or memory limit; the child that ran it was replaced."""

    def __init__(self, kind: str, limit: str) -> None:
        super().__init__(f"over the {kind} limit of {limit}")
        self.kind = kind  # "time" or "memory"
        self.limit = limit  # "60 s", "2048 MB"


class ChildDied(Exception):
    """The child running the work died: a crash in native code, or killed from outside (the
    out-of-memory killer, a stop of the whole process group), so the work may succeed again."""


def _death(exit_code: int | None) -> str:
    if exit_code is not None and exit_code < 0:
        return f"the child process was killed by {signal.Signals(-exit_code).name}"
    return f"the child process exited with code {exit_code}"


class PoolBusy(Exception):
    """Every child of a sized pool stayed busy for as long as the caller would wait."""


def _out_of_memory(exc: BaseException) -> bool:
    """Whether the address-space cap is what failed: Python's MemoryError, or MuPDF's
    "malloc (N bytes) failed" wherever a caller wrapped it."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, MemoryError) or "malloc (" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _serve(conn: Connection, preload: tuple[str, ...]) -> None:
    """A child's loop: run each ``(fn, args, max_bytes)`` received with the address space
    capped at what the child uses now plus ``max_bytes``, and send back the outcome.

    ``preload`` is imported first: already done by the forkserver, unless the pool was made
    after it started (another pool of the process started it), in which case the child
    imports them now, while it is warmed up, rather than on its first task."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    die_with_parent()
    for module in preload:
        importlib.import_module(module)
    me = psutil.Process()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    while True:
        try:
            fn, args, max_bytes = conn.recv()
        except (EOFError, OSError):
            return
        cap = me.memory_info().vms + max_bytes
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        try:
            outcome: tuple[str, Any] = ("ok", fn(*args))
        except Exception as exc:
            outcome = ("memory", None) if _out_of_memory(exc) else ("error", exc)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        try:
            conn.send(outcome)
        except Exception as exc:  # an answer that does not pickle
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        if outcome[0] == "memory":
            return  # MuPDF's state after a failed allocation is not worth trusting


class BoundedChild:
    """One child process; ``memo`` is the caller's note of what the child holds."""

    def __init__(self, preload: tuple[str, ...] = ()) -> None:
        self._conn, child_end = _MP.Pipe()
        self._child_end: Connection | None = child_end
        self._process = _MP.Process(target=_serve, args=(child_end, preload), daemon=True)
        self.memo: dict[Any, Any] = {}

    async def start(self) -> None:
        await asyncio.to_thread(self._process.start)
        child_end, self._child_end = self._child_end, None
        if child_end is not None:
            child_end.close()

    def alive(self) -> bool:
        return self._process.is_alive()

    def kill(self) -> int | None:
        """Kill and reap the child; its exit code."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join(5)
        self._conn.close()
        return self._process.exitcode

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        fd = self._conn.fileno()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, wake)
        try:
            await ready
        finally:
            loop.remove_reader(fd)

    async def run(self, fn: Callable[..., Any], *args: Any, timeout_s: float, max_mb: int) -> Any:
        """``fn(*args)`` in the child: its result, or the exception it raised; OverLimit
        past ``timeout_s`` seconds or ``max_mb`` MB of new address space; ChildDied."""
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.to_thread(self._conn.send, (fn, args, max_mb * MB))
                await self._readable()
            status, value = self._conn.recv()
        except TimeoutError:
            self.kill()
            raise OverLimit("time", f"{timeout_s:g} s") from None
        except (EOFError, OSError):
            raise ChildDied(_death(self.kill())) from None
        except BaseException:
            self.kill()  # cancelled mid-task: its late answer must not reach the next task
            raise
        if status == "memory":
            self.kill()
            raise OverLimit("memory", f"{max_mb} MB")
        if status == "error":
            raise value
        return value


class Slots:
    """``size`` slots handed to waiters lowest ``priority`` first, in arrival order among
    equals (a semaphore that lets the cheapest work go first)."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    async def acquire(self, priority: float = 0.0) -> None:
        if self._free and not self._waiting:
            self._free -= 1
            return
        granted = asyncio.get_running_loop().create_future()
        entry = (priority, next(self._arrivals), granted)
        heapq.heappush(self._waiting, entry)
        try:
            await granted
        except BaseException:
            if granted.done() and not granted.cancelled():
                self.release()  # granted as it was given up: pass the slot on
            elif entry in self._waiting:  # a release may have dropped it already
                self._waiting.remove(entry)
                heapq.heapify(self._waiting)
            raise

    def release(self) -> None:
        while self._waiting:
            _, _, granted = heapq.heappop(self._waiting)
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1


class BoundedPool:
    """Children started on demand and kept for reuse: at most ``size`` at once, or as many
    as there are callers at once when ``size`` is None."""

    def __init__(self, *, preload: Iterable[str], size: int | None = None) -> None:
        # Children fork from a server that imported these once: no import cost per child.
        # The server is one per process: it preloads what every pool asked for before it ran.
        self._preload = tuple(preload)
        _preloaded.update(self._preload)
        _MP.set_forkserver_preload([__name__, *sorted(_preloaded)])
        self._idle: list[BoundedChild] = []
        self._slots = Slots(size) if size else None

    @contextlib.asynccontextmanager
    async def child(
        self,
        *,
        prefer: Callable[[BoundedChild], bool] = lambda child: False,
        wait_s: float | None = None,
        priority: float = 0.0,
    ) -> AsyncIterator[BoundedChild]:
        """An idle child (one ``prefer`` likes, if any) or a new one; PoolBusy when a sized
        pool has none free within ``wait_s``. Waiters for a sized pool are served lowest
        ``priority`` first."""
        if self._slots:
            try:
                await asyncio.wait_for(self._slots.acquire(priority), wait_s)
            except TimeoutError:
                raise PoolBusy() from None
        try:
            self._idle = [c for c in self._idle if c.alive()]
            child = next((c for c in self._idle if prefer(c)), None)
            child = child or (self._idle[0] if self._idle else None)
            if child:
                self._idle.remove(child)
            else:
                child = BoundedChild(self._preload)
                await child.start()
            try:
                yield child
            finally:
                if child.alive():
                    self._idle.append(child)
        finally:
            if self._slots:
                self._slots.release()

    async def warm(self) -> None:
        """Start the forkserver and one idle child now, so the first task does not wait
        for the preloaded imports."""
        async with self.child():
            pass

    def close(self) -> None:
        for child in self._idle:
            child.kill()
        self._idle.clear()
