"""Child processes bounded in time and memory: answers and errors come back as if called
in-process, a dead or overdue child is replaced, and a sized pool says when it is full."""

import asyncio
import os
import time

import pytest

from shared.infra.bounded import BoundedPool, ChildDied, OverLimit, PoolBusy, Slots

pytestmark = pytest.mark.slow  # the first test starts a forkserver


@pytest.fixture(scope="module")
def pool():
    pool = BoundedPool(preload=[], size=2)
    yield pool
    pool.close()


async def test_results_and_errors_come_back_and_a_dead_child_is_replaced(pool):
    async with pool.child() as child:
        assert await child.run(divmod, 17, 5, timeout_s=30, max_mb=256) == (3, 2)
        with pytest.raises(ValueError):
            await child.run(int, "not a number", timeout_s=30, max_mb=256)
        with pytest.raises(ChildDied, match="killed by SIGABRT"):
            await child.run(os.abort, timeout_s=30, max_mb=256)
    async with pool.child() as child:
        assert await child.run(os.getpid, timeout_s=30, max_mb=256) != os.getpid()


async def test_overdue_work_is_cut_off_and_a_full_pool_says_busy(pool):
    async def sleeper() -> None:
        async with pool.child() as child:
            with pytest.raises(OverLimit, match="time limit of 2 s"):
                await child.run(time.sleep, 30, timeout_s=2, max_mb=256)

    busy = [asyncio.create_task(sleeper()) for _ in range(2)]
    await asyncio.sleep(0.5)
    with pytest.raises(PoolBusy):
        async with pool.child(wait_s=0.2):
            pass
    await asyncio.gather(*busy)
    async with pool.child(wait_s=5) as child:
        assert await child.run(abs, -3, timeout_s=30, max_mb=256) == 3


async def test_slots_go_to_the_lowest_priority_first_and_a_given_up_wait_passes_on():
    """Waiters are served cheapest first (arrival order among equals); one that stops
    waiting neither holds a slot nor loses one."""
    slots = Slots(1)
    await slots.acquire()
    order: list[str] = []

    async def wait(name: str, priority: float) -> None:
        await slots.acquire(priority)
        order.append(name)
        slots.release()

    waiters = [
        asyncio.create_task(wait(n, p)) for n, p in (("big", 9e6), ("small", 2e5), ("tie", 2e5))
    ]
    impatient = asyncio.create_task(asyncio.wait_for(slots.acquire(0), 0.01))
    await asyncio.sleep(0.05)
    with pytest.raises(TimeoutError):
        await impatient
    slots.release()
    await asyncio.gather(*waiters)
    assert order == ["small", "tie", "big"]
    await asyncio.wait_for(slots.acquire(), 1)  # the slot came back


async def test_a_waiter_cancelled_while_the_slot_is_released_loses_nothing():
    """Given up in the same turn as a release drops it: no error, and the slot stays free."""
    slots = Slots(1)
    await slots.acquire()
    waiter = asyncio.create_task(slots.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    slots.release()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await asyncio.wait_for(slots.acquire(), 1)
