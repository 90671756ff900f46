"""The links report's events carry (``shared.contracts.links``): filled in as each event is
published, so every path that announces a job, a sheet or a change of the register (a new
report, an upload's changes, a person's review moving a sheet) gives people the same links."""

from shared.contracts.interfaces import E, Publisher
from shared.contracts.links import job_links, project_links, sheet_links
from shared.contracts.messages import RegisterUpdated, ReportReady, SheetRevised
from shared.contracts.subjects import Subject


def with_links(event: E, public_url: str | None) -> E:
    """``event`` with its links, built on ``public_url``; other events as they are."""
    if isinstance(event, ReportReady) and event.links is None:
        index = [
            sheet.model_copy(
                update={"links": sheet_links(public_url, event.job_id, sheet.page_number)}
            )
            for sheet in event.summary.sheet_index
        ]
        summary = event.summary.model_copy(update={"sheet_index": index})
        return event.model_copy(
            update={"links": job_links(public_url, event.job_id), "summary": summary}
        )
    if isinstance(event, SheetRevised) and event.links is None:
        change = (event.from_version, event.to_version)
        return event.model_copy(
            update={
                "links": project_links(public_url, event.project, event.sheet_key, change),
                "sheet_links": sheet_links(public_url, event.job_id, event.page_number),
            }
        )
    if isinstance(event, RegisterUpdated) and event.links is None:
        return event.model_copy(update={"links": project_links(public_url, event.project)})
    return event


class LinkingPublisher:
    """A publisher that gives each event its links before ``inner`` publishes it."""

    def __init__(self, inner: Publisher, public_url: str | None) -> None:
        self._inner = inner
        self._public_url = public_url

    async def publish(self, subject: Subject[E], event: E, *, dedup_id: str) -> None:
        await self._inner.publish(subject, with_links(event, self._public_url), dedup_id=dedup_id)
