"""Removing a test's bucket when the test is done: SeaweedFS gives every bucket volumes of
its own and refuses writes once its volume slots run out, which a long run of tests on one
server would otherwise reach."""

from minio import Minio
from minio.deleteobjects import DeleteObject

from shared.infra.settings import Settings


def remove_bucket(settings: Settings) -> None:
    """Empty and remove ``settings.s3_bucket``, if the test made it."""
    client = Minio(
        settings.s3_endpoint or "",
        access_key=settings.s3_access_key,
        secret_key=settings.s3_secret_key.get_secret_value(),
        secure=settings.s3_secure,
    )
    bucket = settings.s3_bucket
    if not client.bucket_exists(bucket):
        return
    names = (DeleteObject(o.object_name or "") for o in client.list_objects(bucket, recursive=True))
    errors = list(client.remove_objects(bucket, names))
    assert not errors, f"could not empty {bucket}: {errors[:3]}"
    client.remove_bucket(bucket)
