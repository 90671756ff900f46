"""Report's use case for a job of a project: once the set step has decided the job's sheets,
join them to the project's register (``shared.contracts.register``; the domain rules in
``services.report.revisions.register``), keeping each new version's page under the project's
keys and its change from the version before (the delta in words, the overlay picture).

Idempotent: a job the register holds already gives back what it did the first time. Two jobs
of one project finishing at once both land: the register's head moves by compare-and-set,
and the one that lost diffs again against what the other left.
"""

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from services.report.revisions.matching import best_match, word_counts
from services.report.revisions.register import (
    Change,
    Kept,
    Plan,
    Upload,
    UploadedSheet,
    apply_upload,
    plan_upload,
    upload_of,
)
from shared.contracts.interfaces import Bucket, ObjectMissing, StateStore
from shared.contracts.models import VerifiedPage
from shared.contracts.register import Register, RegisterOutcome, SheetVersion, UnitCounts
from shared.contracts.report import Report
from shared.infra.jobs import CAS_ATTEMPTS, JobRecord
from shared.infra.register_store import commit_register, kept_reading, read_register
from shared.infra.storage import Keys
from shared.pagetext import TextLayer
from shared.revisions.delta import SheetDelta, sheet_delta
from shared.revisions.drawing import PageImage
from shared.revisions.overlay import overlay_png
from shared.sheet.reading import SheetReading

log = logging.getLogger("sheetflow.report")

# Sheets of a job diffed at once: their page work runs in threads beside the event loop.
SHEETS_AT_ONCE = 4
T = TypeVar("T")


@dataclass(frozen=True)
class JobPages:
    bucket: Bucket
    job: JobRecord
    project: str

    async def layer(self, page_number: int) -> TextLayer:
        return await self.bucket.get_model(Keys.text(self.job.job_id, page_number), TextLayer)

    async def reading(self, page_number: int) -> SheetReading | None:
        """What extract read of the page's identity (where its title block is); None when
        it is not at hand (the delta then finds the title block itself)."""
        key = Keys.verified(self.job.job_id, page_number)
        try:
            return (await self.bucket.get_model(key, VerifiedPage)).reading
        except ObjectMissing:
            return None


async def update_register(
    bucket: Bucket, state: StateStore, job: JobRecord, report: Report
) -> RegisterOutcome:
    """Join the finished job's sheets to its project's register; what the job did to it."""
    project = job.options.project
    if project is None:
        raise ValueError(f"job {job.job_id} names no project")
    upload = upload_of(report, job.created_at, job.options.issue, job.options.issue_date)
    pages = JobPages(bucket, job, project)
    for _ in range(CAS_ATTEMPTS):
        register, revision = await read_register(bucket, state, project)
        if (sequence := register.sequence_of(job.job_id)) is not None:
            key = Keys.register_outcome(project, job.job_id, sequence)
            return await bucket.get_model(key, RegisterOutcome)
        updated, outcome = await applied_upload(pages, register, upload)
        key = Keys.register_outcome(project, job.job_id, outcome.sequence)
        await bucket.put_json(key, outcome)
        if await commit_register(bucket, state, updated, revision=revision, applied=job.job_id):
            log.info(
                "register of %s: job %s added %s, revised %s, re-issued %s, proposed %s",
                project,
                job.job_id,
                outcome.count("added"),
                outcome.count("revised"),
                outcome.count("reissued"),
                outcome.count("proposed"),
            )
            return outcome
        log.info("register of %s moved under job %s; matching again", project, job.job_id)
    raise RuntimeError(f"could not update the register of {project}: too much contention")


async def applied_upload(
    pages: JobPages, register: Register, upload: Upload, applied_as: str | None = None
) -> tuple[Register, RegisterOutcome]:
    """The register with the job applied (or, ``applied_as`` a correction's record, pages of
    it a person gave a number since): its known sheets diffed against their current
    versions, its new versions' pages kept, its new numbers matched. A few sheets at a time,
    each page's words held only while its sheet is worked on (a set has hundreds)."""
    plan = plan_upload(register, upload)
    known = await _gather({s.key: _known(pages, s, v) for s, v in plan.known})
    kept = {key: k for key, (_, k) in known.items() if k is not None}
    kept |= await _gather({s.key: _keep(pages, s) for s in plan.new})
    matches = await _matches(pages, register, plan)
    return apply_upload(
        register,
        upload,
        changes={key: change for key, (change, _) in known.items()},
        matches=matches,
        kept=kept,
        applied_as=applied_as,
    )


async def _known(
    pages: JobPages, sheet: UploadedSheet, before: SheetVersion
) -> tuple[Change | None, Kept | None]:
    """A sheet the register holds, diffed against its current version: its change and where
    its page is kept, or nothing when it is unchanged."""
    layer, reading = await pages.layer(sheet.page_number), await pages.reading(sheet.page_number)
    before_layer = await pages.bucket.get_model(before.text_key, TextLayer)
    images = await _images(
        pages.bucket, before.image_key, Keys.image(pages.job.job_id, sheet.page_number)
    )
    layers = (before_layer, layer)
    work = partial(
        sheet_delta,
        before_layer,
        layer,
        before_reading=await kept_reading(pages.bucket, before),
        after_reading=reading,
        images=_page_images(layers, images),
    )
    delta = await asyncio.to_thread(work)
    if delta.is_unchanged():
        return None, None
    kept = await _keep(pages, sheet, reading)
    key = partial(Keys.sheet_version, pages.project, sheet.key, pages.job.job_id)
    return await _stored_change(pages.bucket, key, delta, layers, images), kept


def _page_images(
    layers: tuple[TextLayer, TextLayer], images: tuple[bytes, bytes] | None
) -> tuple[PageImage, PageImage] | None:
    """The two versions' images as the delta and overlay take them (sized by their pages)."""
    if images is None:
        return None
    return (
        PageImage(png=images[0], width=layers[0].width, height=layers[0].height),
        PageImage(png=images[1], width=layers[1].width, height=layers[1].height),
    )


async def _gather(work: Mapping[str, Awaitable[T]]) -> dict[str, T]:
    """Each item's work, a few at a time (a coroutine starts when awaited); results by key."""
    limit = asyncio.Semaphore(SHEETS_AT_ONCE)

    async def one(run: Awaitable[T]) -> T:
        async with limit:
            return await run

    results = await asyncio.gather(*(one(run) for run in work.values()))
    return dict(zip(work, results, strict=True))


async def _keep(pages: JobPages, sheet: UploadedSheet, reading: SheetReading | None = None) -> Kept:
    """Copy a new version's page (its words, image and reading) under the project's keys: a
    later version is diffed and overlaid against them once the job's own keys are gone."""
    bucket, job_id, n = pages.bucket, pages.job.job_id, sheet.page_number
    reading = reading or await pages.reading(n)

    def key(name: str) -> str:
        return Keys.sheet_version(pages.project, sheet.key, job_id, name)

    await bucket.put_bytes(
        key("text.json"), await bucket.get_bytes(Keys.text(job_id, n)), "application/json"
    )
    if reading is not None:
        await bucket.put_json(key("reading.json"), reading)
    reading_key = key("reading.json") if reading is not None else None
    try:
        image = await bucket.get_bytes(Keys.image(job_id, n))
    except ObjectMissing:  # no render: no overlay
        return Kept(text_key=key("text.json"), image_key=None, reading_key=reading_key)
    await bucket.put_bytes(key("image.png"), image, "image/png")
    return Kept(text_key=key("text.json"), image_key=key("image.png"), reading_key=reading_key)


async def kept_change(
    bucket: Bucket, project: str, sheet_key: str, before: SheetVersion, after: SheetVersion
) -> Change:
    """Two kept versions of a sheet diffed (a move gave ``after`` a new predecessor): the
    change stored beside ``after``'s page."""
    layers = await asyncio.gather(
        bucket.get_model(before.text_key, TextLayer), bucket.get_model(after.text_key, TextLayer)
    )
    readings = await asyncio.gather(kept_reading(bucket, before), kept_reading(bucket, after))
    images = await _images(bucket, before.image_key, after.image_key)
    work = partial(
        sheet_delta,
        *layers,
        before_reading=readings[0],
        after_reading=readings[1],
        images=_page_images((layers[0], layers[1]), images),
    )
    delta = await asyncio.to_thread(work)
    return await _stored_change(
        bucket,
        partial(Keys.sheet_version, project, sheet_key, after.job_id),
        delta,
        (layers[0], layers[1]),
        images,
    )


async def _images(
    bucket: Bucket, old_key: str | None, new_key: str | None
) -> tuple[bytes, bytes] | None:
    """The two versions' rendered pages; None when one has none (no overlay then)."""
    if old_key is None or new_key is None:
        return None
    try:
        return await bucket.get_bytes(old_key), await bucket.get_bytes(new_key)
    except ObjectMissing:
        return None


async def _stored_change(
    bucket: Bucket,
    key: Callable[[str], str],
    delta: SheetDelta,
    layers: tuple[TextLayer, TextLayer],
    images: tuple[bytes, bytes] | None,
) -> Change:
    """Store the delta and the overlay (``key`` names each file); the change as the register
    records it. An overlay that cannot be drawn is left out (the delta says what changed),
    never the version."""
    await bucket.put_json(key("delta.json"), delta.to_json())
    overlay_key = None
    if (pair := _page_images(layers, images)) is not None:
        png = await asyncio.to_thread(overlay_png, *pair, delta)
        overlay_key = key("overlay.png")
        await bucket.put_bytes(overlay_key, png, "image/png")
    return Change(
        counts=UnitCounts(
            added=delta.added,
            removed=delta.removed,
            changed=delta.changed,
            regions=len(delta.graphics),
        ),
        title_block_only=delta.title_block_only,
        delta_key=key("delta.json"),
        overlay_key=overlay_key,
    )


async def _matches(pages: JobPages, register: Register, plan: Plan) -> dict[str, tuple[str, float]]:
    """A new sheet's proposed match among the register sheets the upload lacks with its
    title: the one whose words are nearly its own."""
    new = {s.key: s for s in plan.new}
    wanted = {key for keys in plan.candidates.values() for key in keys}
    theirs = await _gather(
        {key: _words(pages.bucket, register.sheets[key].current.text_key) for key in wanted}
    )
    ours = await _gather(
        {
            key: _words(pages.bucket, Keys.text(pages.job.job_id, new[key].page_number))
            for key in plan.candidates
        }
    )
    found: dict[str, tuple[str, float]] = {}
    for key, candidates in plan.candidates.items():
        match = best_match(ours[key], {c: theirs[c] for c in candidates})
        if match is not None:
            found[key] = match
    return found


async def _words(bucket: Bucket, text_key: str) -> Counter[str]:
    return word_counts(await bucket.get_model(text_key, TextLayer))
