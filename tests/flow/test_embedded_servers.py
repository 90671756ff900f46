"""The embedded S3 server answers only to the keys generated for its data dir."""

import stat

import httpx
from minio import Minio
from minio.error import S3Error

from shared.storage import ObjectStore
from sheetflow.runtime import AUTH_DIR, EmbeddedServers


async def test_embedded_s3_refuses_anonymous_and_wrong_keys(servers: EmbeddedServers, settings):
    """Without keys, or with the development defaults, the bucket cannot be listed or read;
    the generated keys live owner-only in the data dir and are what the stack uses."""
    store = ObjectStore(settings)
    await store.ensure_bucket()
    await store.put_bytes("jobs/j_x/source.pdf", b"%PDF-1.7 drawings")
    endpoint, bucket = settings.s3_endpoint, settings.s3_bucket
    for url in (f"http://{endpoint}/{bucket}", f"http://{endpoint}/{bucket}/jobs/j_x/source.pdf"):
        r = httpx.get(url, timeout=10)
        assert r.status_code == 403, f"{url} answered {r.status_code} without keys"
    guessed = Minio(
        endpoint, access_key="sheetflow", secret_key="sheetflow-dev-secret", secure=False
    )
    try:
        list(guessed.list_objects(bucket, recursive=True))
        raise AssertionError("the development default keys were accepted")
    except S3Error as exc:
        assert exc.code in ("SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied")

    keys = servers.settings.data_dir.resolve() / AUTH_DIR / "credentials.env"
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    text = keys.read_text()
    assert f"SHEETFLOW_S3_SECRET_KEY={settings.s3_secret_key.get_secret_value()}" in text
    assert await store.get_bytes("jobs/j_x/source.pdf") == b"%PDF-1.7 drawings"
