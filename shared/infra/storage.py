"""Async object store over the minio SDK, and the one place object keys are built."""

import asyncio
import io
import json
import re
import ssl
import time
from datetime import timedelta
from typing import Any, TypeVar

import urllib3
from minio import Minio
from minio.error import S3Error
from pydantic import BaseModel
from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_exponential

from shared.contracts.interfaces import ObjectMissing
from shared.infra.settings import Settings

M = TypeVar("M", bound=BaseModel)


_UNSAFE_KEY_CHARS = re.compile(r"[^A-Za-z0-9._-]")


# Codes an S3 server answers while it is starting, stopping or overloaded.
TRANSIENT_S3_CODES = frozenset(
    {"InternalError", "ServiceUnavailable", "SlowDown", "RequestTimeout", "InternalServerError"}
)


def is_storage_outage(exc: BaseException) -> bool:
    """Connection-level trouble or a server-side 5xx: worth waiting out; a missing key is not."""
    if isinstance(exc, S3Error):
        return exc.code in TRANSIENT_S3_CODES
    return isinstance(exc, (OSError, urllib3.exceptions.HTTPError)) and not isinstance(
        exc, ObjectMissing
    )


def _key_part(text: str) -> str:
    """``text`` as one key segment, unambiguously: characters a key should not carry become
    ``~`` and their code point in hex, ``~`` itself included (and a leading dot: no segment is
    ``.`` or ``..``)."""
    return "".join(
        ch
        if ch.isascii() and (ch.isalnum() or ch == "-" or (ch == "." and i))
        else f"~{ord(ch):x}~"
        for i, ch in enumerate(text)
    )


class Keys:
    """Object keys under ``jobs/{job_id}/`` as laid out in DESIGN.md: the one place they are
    built."""

    @staticmethod
    def job(job_id: str) -> str:
        return f"jobs/{job_id}/"

    @staticmethod
    def source(job_id: str) -> str:
        return f"jobs/{job_id}/source.pdf"

    @staticmethod
    def original(job_id: str) -> str:
        """The upload as received, when its active content was stripped from the source."""
        return f"jobs/{job_id}/original.pdf"

    @staticmethod
    def page(job_id: str, page_number: int, name: str) -> str:
        return f"jobs/{job_id}/pages/{page_number}/{name}"

    @staticmethod
    def image(job_id: str, page_number: int) -> str:
        """The rendered page."""
        return Keys.page(job_id, page_number, "image.png")

    @staticmethod
    def thumbnail(job_id: str, page_number: int) -> str:
        """The small rendering the HTML report shows."""
        return Keys.page(job_id, page_number, "thumb.jpg")

    @staticmethod
    def full_image(job_id: str, page_number: int) -> str:
        """The page rendered large, for a person to zoom into (made when first asked for)."""
        return Keys.page(job_id, page_number, "full.png")

    @staticmethod
    def download(job_id: str, name: str) -> str:
        """A download made from the job's report (the linked set, the zip of its sheets)."""
        return f"jobs/{job_id}/downloads/{name}"

    @staticmethod
    def text(job_id: str, page_number: int) -> str:
        """The page's words (``TextLayer``)."""
        return Keys.page(job_id, page_number, "text.json")

    @staticmethod
    def extracted(job_id: str, page_number: int) -> str:
        """Rung 1's result."""
        return Keys.page(job_id, page_number, "extracted.json")

    @staticmethod
    def structured(job_id: str, page_number: int, rung: str) -> str:
        """A later rung's result (text_structuring, fallback)."""
        return Keys.page(job_id, page_number, f"structured-{rung}.json")

    @staticmethod
    def covered(job_id: str, page_number: int) -> str:
        return Keys.page(job_id, page_number, "covered.json")

    @staticmethod
    def verified(job_id: str, page_number: int) -> str:
        return Keys.page(job_id, page_number, "verified.json")

    @staticmethod
    def failed(job_id: str, page_number: int) -> str:
        return Keys.page(job_id, page_number, "failed.json")

    @staticmethod
    def cell_read(job_id: str, page_number: int) -> str:
        """The page read again in the cell the set's template names (``CellReading``)."""
        return Keys.page(job_id, page_number, "cell-read.json")

    @staticmethod
    def crop(page_number: int, object_id: str) -> str:
        """An evidence crop's key relative to the job's folder (``Keys.job(job_id) + ...``),
        as a verified page records it; the object id made safe for a key."""
        return f"pages/{page_number}/crops/{_UNSAFE_KEY_CHARS.sub('_', object_id)}.jpg"

    @staticmethod
    def evidence(page_number: int, object_id: str) -> str:
        """A problem's evidence crop for people (the HTML report), relative to the job's
        folder like ``crop``."""
        return f"pages/{page_number}/evidence/{_UNSAFE_KEY_CHARS.sub('_', object_id)}.jpg"

    @staticmethod
    def report(job_id: str, ext: str = "json") -> str:
        return f"jobs/{job_id}/report.{ext}"

    @staticmethod
    def reviews(job_id: str) -> str:
        """A person's review records of the job (``shared.contracts.review``)."""
        return f"jobs/{job_id}/review/"

    @staticmethod
    def review(job_id: str, record_id: str) -> str:
        return f"{Keys.reviews(job_id)}{record_id}.json"

    # A project's drawing register (``shared.contracts.register``), kept apart from any job's
    # keys: a job's own artifacts may be removed while the register still needs its sheets.
    @staticmethod
    def projects() -> str:
        """Every project's keys."""
        return "projects/"

    @staticmethod
    def project(project: str) -> str:
        return f"projects/{project}/"

    @staticmethod
    def register_snapshots(project: str) -> str:
        """Every register the project has had, one per change applied (a job, a review)."""
        return f"projects/{project}/register/"

    @staticmethod
    def register_snapshot(project: str, sequence: int, applied: str) -> str:
        """The register after its ``sequence``-th change: ``applied`` names it (a job's id,
        a review record's)."""
        return f"{Keys.register_snapshots(project)}{sequence:08d}-{applied}.json"

    @staticmethod
    def register_outcomes(project: str, job_id: str) -> str:
        return f"projects/{project}/jobs/{job_id}-"

    @staticmethod
    def register_outcome(project: str, job_id: str, sequence: int) -> str:
        """What a job did to the register (``shared.contracts.register.RegisterOutcome``),
        applied as its ``sequence``-th change: an attempt that lost the race to another change
        writes another key than the one that won."""
        return f"{Keys.register_outcomes(project, job_id)}{sequence:08d}.json"

    @staticmethod
    def review_applied(project: str, record_id: str) -> str:
        """What a review record did to the register (``services.report.register_review``)."""
        return f"projects/{project}/applied/{record_id}.json"

    @staticmethod
    def project_reviews(project: str) -> str:
        """The project's review records (``shared.contracts.review``: decisions, moves)."""
        return f"projects/{project}/review/"

    @staticmethod
    def project_review(project: str, record_id: str) -> str:
        return f"{Keys.project_reviews(project)}{record_id}.json"

    @staticmethod
    def sheet_version(project: str, sheet_key: str, job_id: str, name: str) -> str:
        """A version's kept page (``text.json``, ``image.png``, ``reading.json``) and its
        change from the version before (``delta.json``, ``overlay.png``)."""
        return f"projects/{project}/sheets/{_key_part(sheet_key)}/{job_id}/{name}"

    # Webhooks: subscriptions made over the API, and every delivery's body and log.
    WEBHOOKS = "webhooks/subscriptions/"

    @staticmethod
    def webhook(subscription_id: str) -> str:
        return f"{Keys.WEBHOOKS}{subscription_id}.json"

    @staticmethod
    def deliveries(subscription_id: str) -> str:
        return f"webhooks/deliveries/{subscription_id}/"

    @staticmethod
    def delivery(subscription_id: str, delivery_id: str) -> str:
        return f"{Keys.deliveries(subscription_id)}{delivery_id}.json"


class ObjectStore:
    """The bucket every stage shares. Calls run in threads: the SDK is blocking."""

    def __init__(
        self, settings: Settings, *, retry_for_s: float = 20.0, read_timeout_s: float = 60.0
    ) -> None:
        if not settings.s3_endpoint:
            raise ValueError(
                "SHEETFLOW_S3_ENDPOINT is not set (run `sheetflow up` for an embedded one)"
            )
        self.bucket = settings.s3_bucket
        self._retry_for_s = retry_for_s
        ca = settings.s3_ca_file
        # Fail fast on a dead server: our own retry loop decides how long to wait.
        http = urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=3.0, read=read_timeout_s),
            retries=urllib3.Retry(total=0),
            maxsize=32,
            ssl_context=ssl.create_default_context(cafile=str(ca)) if ca else None,
        )
        self._client = Minio(
            settings.s3_endpoint,
            access_key=settings.s3_access_key,
            secret_key=settings.s3_secret_key.get_secret_value(),
            secure=settings.s3_secure,
            region=settings.s3_region,
            http_client=http,
        )

    async def _call(self, fn, *args, retry: bool = True, **kwargs):
        if not retry:
            return await asyncio.to_thread(fn, *args, **kwargs)
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(is_storage_outage),
            wait=wait_exponential(multiplier=0.2, max=3.0),
            stop=stop_after_delay(self._retry_for_s),
            reraise=True,
        ):
            with attempt:
                return await asyncio.to_thread(fn, *args, **kwargs)

    async def ensure_bucket(self) -> None:
        if not await self._call(self._client.bucket_exists, self.bucket):
            try:
                await self._call(self._client.make_bucket, self.bucket)
            except S3Error as exc:  # another service created it first
                if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                    raise

    async def ping(self, timeout_s: float = 3.0) -> bool:
        """True when the server answers within ``timeout_s`` (used by /readyz); never
        raises."""
        try:
            await asyncio.wait_for(
                self._call(self._client.bucket_exists, self.bucket, retry=False), timeout_s
            )
            return True
        except Exception:
            return False

    async def wait_until_up(self, timeout: float, interval: float = 0.1) -> bool:
        """Poll the server until it answers (if only to refuse) or ``timeout`` passes;
        whether it answered. A service started beside its S3 server sees it the moment it
        is up, where the retries' growing backoff could add seconds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                probe = self._call(self._client.bucket_exists, self.bucket, retry=False)
                await asyncio.wait_for(probe, timeout=3.0)
                return True
            except Exception as exc:
                if not (is_storage_outage(exc) or isinstance(exc, TimeoutError)):
                    return True  # it answers: what it said is for the caller's next call
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(interval)

    async def put_bytes(
        self,
        key: str,
        data: bytes,
        content_type: str = "application/octet-stream",
        *,
        retry: bool = True,
    ) -> None:
        def put() -> None:  # a fresh stream per attempt: a retry must not resend a drained one
            self._client.put_object(
                self.bucket, key, io.BytesIO(data), len(data), content_type=content_type
            )

        await self._call(put, retry=retry)

    async def put_file(self, key: str, path: str, content_type: str = "application/pdf") -> None:
        await self._call(
            self._client.fput_object, self.bucket, key, path, content_type=content_type
        )

    async def put_json(self, key: str, value: BaseModel | dict[str, Any] | list[Any]) -> None:
        if isinstance(value, BaseModel):
            data = value.model_dump_json().encode()
        else:
            data = json.dumps(value, default=str).encode()
        await self.put_bytes(key, data, "application/json")

    def _read(self, key: str) -> bytes:
        try:
            response = self._client.get_object(self.bucket, key)
        except S3Error as exc:
            if exc.code in ("NoSuchKey", "NoSuchObject"):
                raise ObjectMissing(key) from exc
            raise
        try:
            return response.read()
        finally:
            response.close()
            response.release_conn()

    async def get_bytes(self, key: str) -> bytes:
        return await self._call(self._read, key)

    async def get_json(self, key: str) -> Any:
        return json.loads(await self.get_bytes(key))

    async def get_model(self, key: str, model: type[M]) -> M:
        return model.model_validate_json(await self.get_bytes(key))

    async def exists(self, key: str) -> bool:
        try:
            await self._call(self._client.stat_object, self.bucket, key)
            return True
        except S3Error as exc:
            if exc.code in ("NoSuchKey", "NoSuchObject", "NotFound"):
                return False
            raise

    async def list_keys(self, prefix: str) -> list[str]:
        def _list() -> list[str]:
            return [
                o.object_name
                for o in self._client.list_objects(self.bucket, prefix=prefix, recursive=True)
            ]

        return await self._call(_list)

    async def delete_prefix(self, prefix: str) -> None:
        for key in await self.list_keys(prefix):
            await self._call(self._client.remove_object, self.bucket, key)

    async def presigned_get(self, key: str, expires_s: int = 600) -> str:
        return await self._call(
            self._client.presigned_get_object,
            self.bucket,
            key,
            expires=timedelta(seconds=expires_s),
        )
