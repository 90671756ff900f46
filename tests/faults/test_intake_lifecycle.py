"""No job is stuck: ingest SIGKILLed at each step of an intake (once it has marked the intake
under way, once the job record exists, while it announces the pages) leaves jobs that end,
each page once, by report's supervision; a job that never got its record keeps nothing."""

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx
import pymupdf
import pytest

from shared.infra.settings import Settings
from shared.infra.storage import Keys, ObjectStore
from tests.support.jobstore import first_kv_key, kv_keys
from tests.support.stack import Stack, nats_client, stack, stream_messages

pytestmark = pytest.mark.slow

PAGES = 600
# Short, so that report's supervision takes an intake for abandoned soon after the kill.
INTAKE_TIMEOUT_S = 4.0


def large_set() -> bytes:
    """Many light pages, and one picture that cannot be compressed: storing the source takes
    long enough for a kill to land between the intake's first mark and its job record."""
    doc = pymupdf.open()
    for n in range(PAGES):
        doc.new_page(width=612, height=792).insert_text((72, 72), f"SHEET A-{n + 1:03d}")
    side = 2400
    noise = pymupdf.Pixmap(pymupdf.csRGB, side, side, os.urandom(side * side * 3), 0)
    doc[0].insert_image(pymupdf.Rect(72, 100, 540, 568), pixmap=noise)
    return doc.tobytes()


# A kill that lands too late (the machine was busy and ingest went past the step) is tried
# again with a new upload, this many times in all: where each kill landed is checked, never
# assumed.
KILL_TRIES = 4


@dataclass
class Landing:
    """Where a kill landed: the job it cut short, whether its record and its intake marker
    were kept, and how many of its pages were queued."""

    job_id: str
    recorded: bool
    intake_kept: bool
    queued: int


# Step → (what the kill waits for, given the keys there before; where it must have landed).
Step = tuple[
    Callable[[frozenset[str]], Callable[[Settings], Awaitable[None]]], Callable[[Landing], bool]
]


async def kill_when(s: Stack, pdf: bytes, step: Step) -> str:
    """Upload ``pdf`` and SIGKILL ingest the moment the step's wait returns; ingest is started
    anew. Tried again while the kill did not land in the step. The id of the job whose intake
    was cut short where the step says."""
    wait, landed = step
    for _ in range(KILL_TRIES):
        intakes = frozenset(await kv_keys(s.settings, "intake"))
        jobs = frozenset(await kv_keys(s.settings, "job"))
        upload = asyncio.create_task(asyncio.to_thread(s.upload, pdf))
        try:
            await asyncio.wait_for(wait(intakes | jobs)(s.settings), timeout=60)
        finally:
            s.procs["ingest"].kill()
        with contextlib.suppress(httpx.HTTPError):
            await upload
        landing = await where_it_landed(s, intakes, jobs)
        s.start("ingest")
        s.wait_ready()
        if landing is not None and landed(landing):
            return landing.job_id
    raise AssertionError(f"no kill landed where meant in {KILL_TRIES} tries\n{s.logs()}")


async def where_it_landed(
    s: Stack, intakes: frozenset[str], jobs: frozenset[str]
) -> Landing | None:
    """The upload made since ``intakes`` and ``jobs`` were the keys, as the kill left it."""
    now_intakes = set(await kv_keys(s.settings, "intake")) - intakes
    now_jobs = {k.split(".", 1)[1] for k in set(await kv_keys(s.settings, "job")) - jobs}
    ids = {k.split(".", 1)[1] for k in now_intakes} | now_jobs
    if len(ids) != 1:
        return None  # the upload never began, or left no trace to judge by
    [job_id] = ids
    queued = await stream_messages(s.settings, "page.extract", expect=PAGES, timeout=1)
    return Landing(
        job_id=job_id,
        recorded=job_id in now_jobs,
        intake_kept=f"intake.{job_id}" in now_intakes,
        queued=sum(m["job_id"] == job_id for m in queued),
    )


def announcements(count: int) -> Callable[[frozenset[str]], Callable[[Settings], Awaitable[None]]]:
    return lambda _: _announced(count)


def _announced(count: int) -> Callable[[Settings], Awaitable[None]]:
    async def seen(settings: Settings) -> None:
        async with nats_client(settings) as nc:
            arrived = asyncio.Event()
            got = 0

            async def one(_msg) -> None:
                nonlocal got
                got += 1
                if got >= count:
                    arrived.set()

            await nc.subscribe(settings.subject("page.extract"), cb=one)
            await arrived.wait()

    return seen


async def wait_cleared(settings: Settings, timeout: float, s: Stack) -> None:
    deadline = time.monotonic() + timeout
    while await kv_keys(settings, "intake"):
        if time.monotonic() > deadline:
            raise AssertionError(f"an intake was never cleared\n{s.logs()}")
        await asyncio.sleep(0.5)


async def test_ingest_killed_at_each_step_of_an_intake_leaves_no_job_stuck(settings):
    """Killed after marking the intake, after the job record, and mid-announcement: each
    job with a record ends with its report (every page once, the pages never queued failed
    with the reason); one without keeps no source."""
    # Every page queued by the intake itself (no window): the intake is what is cut short.
    update = {"intake_timeout_s": INTAKE_TIMEOUT_S, "job_window_pages": PAGES}
    settings = settings.model_copy(update=update)
    pdf = large_set()
    steps: dict[str, Step] = {
        "after the intake mark": (
            lambda before: first_kv_key("intake", before),
            lambda at: at.intake_kept and not at.recorded,
        ),
        "after the job record": (
            lambda before: first_kv_key("job", before),
            lambda at: at.recorded and at.intake_kept and at.queued < PAGES,
        ),
        "during announcements": (
            announcements(PAGES // 3),
            lambda at: at.recorded and at.intake_kept and PAGES // 3 <= at.queued < PAGES,
        ),
    }
    with stack(settings, "ingest", "report") as s:
        jobs = [await kill_when(s, pdf, step) for step in steps.values()]
        for job_id in jobs[1:]:
            report = s.wait_report(job_id, timeout=INTAKE_TIMEOUT_S + 60)
            assert [p["page_number"] for p in report["pages"]] == list(range(1, PAGES + 1))
            reasons = {f["reason"] for f in report["summary"]["failed_pages"]}
            assert len(report["summary"]["failed_pages"]) == PAGES, report["summary"]
            assert all("intake did not finish" in r for r in reasons), reasons
        await wait_cleared(settings, 60, s)
        assert not await ObjectStore(settings).list_keys(Keys.job(jobs[0])), "a source was kept"
