"""Uploads are inspected in bounded pools of child processes of their own
(``shared.infra.bounded``), with a real time and memory limit: a PDF built to exhaust its
reader costs one child for at most the limit, never the API's event loop, its thread pool or
the lock page work uses.

Two lanes, so that such PDFs hold up no valid upload: a small upload gets a first look in a
lane of its own, bounded to ``SHEETFLOW_INSPECT_QUICK_S`` (a drawing set is inspected in a
fraction of that), smallest upload first; one that needs longer, or waits that long for a
first look, gets the full inspection in the main lane, whose children run at a lower CPU
priority, so that the first looks keep their share of the machine while it is busy."""

import asyncio
import functools
import os
from collections.abc import Callable
from pathlib import Path

from services.ingest.refusals import Refusal, RefusalKind, disk_full, unavailable
from services.ingest.source import PreparedSource, check_and_prepare
from services.ingest.validation import AcceptedPdf
from shared.infra.bounded import BoundedPool, ChildDied, OverLimit, PoolBusy
from shared.infra.full_disk import is_disk_full
from shared.infra.settings import Settings

# Uploads up to this size get a first look; a larger one cannot be inspected in its time.
QUICK_MAX_BYTES = 25 * 1024 * 1024
# The main lane's CPU priority (nice): below the first looks and the API itself.
MAIN_LANE_NICE = 10


def inspect_in_background(
    path: Path, *, max_pages: int, refuse_active_content: bool
) -> tuple[AcceptedPdf, PreparedSource]:
    """``check_and_prepare`` at the main lane's lower CPU priority."""
    os.setpriority(os.PRIO_PROCESS, 0, max(os.getpriority(os.PRIO_PROCESS, 0), MAIN_LANE_NICE))
    return check_and_prepare(path, max_pages=max_pages, refuse_active_content=refuse_active_content)


class Inspectors:
    """At most ``SHEETFLOW_INSPECT_QUICK_WORKERS`` first looks and ``SHEETFLOW_INSPECT_WORKERS``
    full inspections at once, each in a child held to the inspection's time and memory
    limits."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        preload = ["services.ingest.inspection"]
        self._quick = BoundedPool(preload=preload, size=settings.inspect_quick_workers)
        self._pool = BoundedPool(preload=preload, size=settings.inspect_workers)

    async def inspect(self, path: Path) -> tuple[AcceptedPdf, PreparedSource]:
        """The checks, then the source with its active content stripped: its verdict, or a
        Refusal when the PDF is over a limit or kills its reader, or when no inspector frees
        up within the time limit."""
        settings = self._settings
        size = await asyncio.to_thread(os.path.getsize, path)
        try:
            if settings.inspect_quick_s > 0 and size <= QUICK_MAX_BYTES:
                try:
                    # Smallest first: a first look frees its inspector within its limit, so
                    # the smallest upload waiting gets one within that limit too.
                    return await self._run(
                        self._quick, check_and_prepare, path, settings.inspect_quick_s, size
                    )
                except PoolBusy:
                    pass  # every first look is taken: the full inspection it is
                except OverLimit as exc:
                    if exc.kind != "time":
                        raise
            return await self._run(
                self._pool, inspect_in_background, path, settings.inspect_timeout_s
            )
        except PoolBusy as exc:
            raise unavailable(
                "Every upload inspector is busy with other uploads; retry shortly.",
                retry_after_s=settings.inspect_timeout_s,
            ) from exc
        except OverLimit as exc:
            raise Refusal(
                RefusalKind.INVALID,
                "too_complex",
                f"The PDF could not be inspected within {exc.limit}; it may be malformed or "
                "built to exhaust PDF readers.",
            ) from exc
        except ChildDied as exc:
            raise Refusal(
                RefusalKind.INVALID,
                "unreadable_pdf",
                f"The PDF reader died on this PDF ({exc}); it may be malformed.",
            ) from exc
        except OSError as exc:  # the stripped copy is written beside the upload
            if is_disk_full(exc):
                raise disk_full("that receives uploads (the API's temporary directory)") from exc
            raise

    async def _run(
        self,
        pool: BoundedPool,
        inspect: Callable[..., tuple[AcceptedPdf, PreparedSource]],
        path: Path,
        limit_s: float,
        priority: float = 0.0,
    ) -> tuple[AcceptedPdf, PreparedSource]:
        """``inspect`` (``check_and_prepare`` or its main-lane form) of ``path`` in a child of
        ``pool``, waited for at most ``limit_s`` (PoolBusy), held to ``limit_s`` and the memory
        limit."""
        settings = self._settings
        async with pool.child(wait_s=limit_s, priority=priority) as child:
            return await child.run(
                functools.partial(
                    inspect,
                    max_pages=settings.max_pages,
                    refuse_active_content=settings.active_content == "refuse",
                ),
                path,
                timeout_s=limit_s,
                max_mb=settings.inspect_max_mb,
            )

    async def warm(self) -> None:
        """Start the inspectors' forkserver and one child of each lane now, not on the first
        upload."""
        await self._quick.warm()
        await self._pool.warm()

    def close(self) -> None:
        self._quick.close()
        self._pool.close()
