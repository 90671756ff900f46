"""Small promises: secrets in .env stay out of git, the AsyncAPI document names the server
actually configured (and no other)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from shared.infra.asyncapi import asyncapi_document
from shared.infra.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout"
)
def test_a_dot_env_file_is_ignored_by_git():
    """The README tells people to put secrets in .env: git must never pick it up."""
    assert subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT).returncode == 0


def test_asyncapi_names_the_configured_server_without_credentials():
    """The document's one server is the configured NATS, named for the environment, TLS
    when the URL says so; the password never appears; every channel points at it."""
    settings = Settings(
        _env_file=None,
        environment="production",
        s3_secret_key="a-real-secret-value",
        nats_url="tls://svc:hunter2@nats.internal:4333",
        namespace="plans",
    )
    document = asyncapi_document(settings)
    assert list(document["servers"]) == ["production"]
    server = document["servers"]["production"]
    assert server["host"] == "nats.internal:4333" and server["protocol"] == "tls"
    assert "hunter2" not in json.dumps(document)
    for channel in document["channels"].values():
        assert channel["servers"] == [{"$ref": "#/servers/production"}]


def test_asyncapi_names_no_server_when_none_is_configured():
    """Without a configured NATS the document describes the events only: no made-up server."""
    document = asyncapi_document(Settings(_env_file=None))
    assert "servers" not in document
    assert all("servers" not in channel for channel in document["channels"].values())
    assert "sheetflow.report.ready" in json.dumps(document)
