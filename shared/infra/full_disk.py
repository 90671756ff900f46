"""A full disk, named as one: S3, JetStream and the local file system each say it their own
way, and each way reaches a person as "the disk is full", never as "not reachable".

Recognised: the operating system's "no space left" (``ENOSPC``) or "quota exceeded"
(``EDQUOT``), wherever it was raised; JetStream's "insufficient storage resources" (error
10047); an S3 server's storage-full codes; and an S3 or JetStream error whose text carries
the operating system's own sentence for a full disk.
"""

import errno

import nats.js.errors
from minio.error import S3Error

DISK_FULL = "the disk that holds sheetflow's data (S3 or NATS JetStream) is full"
# JetStream: JSStorageResourcesExceededErr, a store past its disk or its reservation.
JETSTREAM_STORAGE_EXCEEDED = 10047
S3_FULL_CODES = frozenset({"XMinioStorageFull", "StorageFull", "InsufficientStorage"})
FULL_TEXTS = ("no space left on device", "insufficient storage", "disk quota exceeded")


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from, says a disk is full."""
    seen: BaseException | None = exc
    for _ in range(16):  # a chain is short; a cycle must not hang us
        if seen is None:
            return False
        if _says_full(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _says_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if isinstance(exc, nats.js.errors.APIError):
        if exc.err_code == JETSTREAM_STORAGE_EXCEEDED:
            return True
        return _full_text(exc.description)
    if isinstance(exc, S3Error):
        return exc.code in S3_FULL_CODES or _full_text(exc.message)
    return False


def _full_text(text: str | None) -> bool:
    lowered = (text or "").lower()
    return any(sentence in lowered for sentence in FULL_TEXTS)
