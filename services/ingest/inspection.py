"""Uploads are inspected in a bounded pool of child processes of their own (``shared.bounded``),
with a real time and memory limit: a PDF built to exhaust its reader costs one child for at
most the limit, never the API's event loop, its thread pool or the lock page work uses."""

import functools
from pathlib import Path

from services.ingest.refusals import Refusal, RefusalKind, disk_full, unavailable
from services.ingest.source import PreparedSource, check_and_prepare
from services.ingest.validation import AcceptedPdf
from shared.bounded import BoundedPool, ChildDied, OverLimit, PoolBusy
from shared.full_disk import is_disk_full
from shared.settings import Settings


class Inspectors:
    """At most ``SHEETFLOW_INSPECT_WORKERS`` uploads inspected at once, each in a child held
    to the inspection's time and memory limits."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._pool = BoundedPool(preload=["services.ingest.source"], size=settings.inspect_workers)

    async def inspect(self, path: Path) -> tuple[AcceptedPdf, PreparedSource]:
        """``check_and_prepare`` in a child (the checks, then the source with its active
        content stripped): its verdict, or a Refusal when the PDF is over a limit or kills its
        reader, or when no inspector frees up within the time limit."""
        settings = self._settings
        inspect = functools.partial(
            check_and_prepare,
            max_pages=settings.max_pages,
            refuse_active_content=settings.active_content == "refuse",
        )
        try:
            async with self._pool.child(wait_s=settings.inspect_timeout_s) as child:
                return await child.run(
                    inspect,
                    path,
                    timeout_s=settings.inspect_timeout_s,
                    max_mb=settings.inspect_max_mb,
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

    async def warm(self) -> None:
        """Start the inspectors' forkserver and one child now, not on the first upload."""
        await self._pool.warm()

    def close(self) -> None:
        self._pool.close()
