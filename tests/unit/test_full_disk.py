"""A full disk is named as one: S3's, JetStream's and the file system's ways of saying it are
recognised; an upload refused for it is a 507 naming the disk, and a page failed for it
says so in its reason."""

import dataclasses
import errno
from pathlib import Path

import nats.js.errors
import pytest
from minio.error import S3Error

from services.ingest.app import STATUS
from services.ingest.refusals import Refusal, RefusalKind
from services.ingest.usecases import accept_job
from shared.contracts import subjects
from shared.contracts.messages import JobOptions
from shared.infra.broker import PageStage, describe, run_delivery
from shared.infra.full_disk import DISK_FULL, is_disk_full
from shared.infra.settings import Settings
from tests.support.fakes import MemoryBucket, RecordingPublisher
from tests.unit.test_ack_policy import FakeMsg
from tests.unit.test_ingest_usecases import collaborators


def s3_error(code: str, message: str) -> S3Error:
    return S3Error(None, code, message, "/bucket/key", "req", "host")  # type: ignore[arg-type]


def chained(exc: BaseException) -> BaseException:
    try:
        try:
            raise exc
        except BaseException as inner:
            raise RuntimeError("storing the page failed") from inner
    except RuntimeError as outer:
        return outer


FULL = [
    OSError(errno.ENOSPC, "No space left on device"),
    OSError(errno.EDQUOT, "Disk quota exceeded"),
    chained(OSError(errno.ENOSPC, "No space left on device")),
    nats.js.errors.APIError(
        code=500, err_code=10047, description="insufficient storage resources available"
    ),
    nats.js.errors.APIError(
        code=503, description="write /data/jetstream/1.blk: no space left on device"
    ),
    s3_error("XMinioStorageFull", "Storage backend has reached its minimum free drive threshold."),
    s3_error(
        "InternalError", "failed to write to local disk: write 3.dat: no space left on device"
    ),
]
NOT_FULL = [
    ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
    TimeoutError(),
    nats.js.errors.APIError(code=400, err_code=10071, description="wrong last sequence: 4"),
    s3_error("NoSuchKey", "The specified key does not exist."),
    s3_error("InternalError", "We encountered an internal error, please try again."),
    RuntimeError("no space in the title block for the sheet number"),
]


@pytest.mark.parametrize("exc", FULL, ids=lambda e: type(e).__name__)
def test_each_way_of_saying_the_disk_is_full_is_recognised(exc):
    """Each server's own error for a full disk (or the OS's, under any wrapping) is one."""
    assert is_disk_full(exc)
    assert describe(exc).startswith(DISK_FULL)


@pytest.mark.parametrize("exc", NOT_FULL, ids=lambda e: type(e).__name__)
def test_other_errors_are_not_a_full_disk(exc):
    """An outage, a conflict, a missing key or a server's vague error is no full disk."""
    assert not is_disk_full(exc)
    assert not describe(exc).startswith(DISK_FULL)


class FullBucket(MemoryBucket):
    async def put_file(self, key: str, path: str, content_type: str = "application/pdf") -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


async def test_an_upload_refused_for_a_full_disk_is_a_507_naming_it(tmp_path: Path):
    """Not "NATS or S3 is not reachable": the refusal says which disk is full, and nothing
    is kept."""
    io = dataclasses.replace(collaborators(), bucket=FullBucket())
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7 a drawing set")
    with pytest.raises(Refusal) as refused:
        await accept_job(io, source, file_name="a.pdf", page_count=2, options=JobOptions())
    assert refused.value.kind is RefusalKind.NO_SPACE and refused.value.error == "disk_full"
    assert STATUS[refused.value.kind] == 507
    assert "disk" in refused.value.detail and "is full" in refused.value.detail
    assert "not reachable" not in refused.value.detail


async def test_a_page_failed_for_a_full_disk_says_so():
    """A page whose last delivery failed because S3 was full is failed with that reason."""
    publisher = RecordingPublisher()
    settings = Settings(_env_file=None, max_deliver=1, outage_patience_s=0.0)

    async def store() -> None:
        raise s3_error("InternalError", "write 7.dat: no space left on device")

    await run_delivery(
        FakeMsg(num_delivered=1),
        settings=settings,
        work=store,
        page=PageStage(stage="extract", job_id="j_1", page_number=3, publisher=publisher),
    )
    [failed] = publisher.on(subjects.PAGE_FAILED)
    assert failed.reason.startswith(DISK_FULL)
