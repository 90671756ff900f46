"""Where a running ``sheetflow up`` listens, kept in its data dir while it runs, so that
``sheetflow events`` and ``sheetflow submit`` on the same machine find it unasked."""

import contextlib
import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil
from pydantic import BaseModel, ValidationError, field_serializer

FILE_NAME = "endpoints.json"


class Endpoints(BaseModel):
    """Where things listen, never a secret: anyone may read the file. Credentials stay in
    the environment, or in the owner-only ``auth/`` directory of an embedded server."""

    pid: int  # the `sheetflow up` process: the file is stale once it is gone
    api: str
    nats_url: str
    s3_endpoint: str
    namespace: str
    # The NATS is the embedded one: its credentials are in the data dir's auth/ directory.
    nats_embedded: bool = False

    @field_serializer("nats_url", "api")
    def _no_credentials(self, url: str) -> str:
        return without_credentials(url)


def without_credentials(urls: str) -> str:
    """``urls`` (one, or comma-separated) without any user name or password in them."""
    return ",".join(_bare(url.strip()) for url in urls.split(",")) if urls else urls


def _bare(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]))


def endpoints_path(data_dir: Path) -> Path:
    return data_dir / FILE_NAME


def write_endpoints(data_dir: Path, endpoints: Endpoints) -> Path:
    path = endpoints_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".tmp")
    scratch.write_text(endpoints.model_dump_json(indent=2) + "\n")
    scratch.replace(path)  # readers never see half a file
    return path


def read_endpoints(data_dir: Path) -> Endpoints | None:
    """What the ``sheetflow up`` using ``data_dir`` wrote, or None when there is none, the
    file is unreadable, or the process that wrote it has ended."""
    try:
        endpoints = Endpoints.model_validate_json(endpoints_path(data_dir).read_text())
    except (OSError, ValidationError):
        return None
    return endpoints if psutil.pid_exists(endpoints.pid) else None


def remove_endpoints(data_dir: Path) -> None:
    """Remove the file if this process wrote it (another `up` may have replaced it)."""
    path = endpoints_path(data_dir)
    with contextlib.suppress(OSError, ValidationError):
        if Endpoints.model_validate_json(path.read_text()).pid == os.getpid():
            path.unlink()
