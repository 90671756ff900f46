"""Credentials inside URLs never reach the screen, a log or a served document."""

import json

import pytest

from shared.infra.asyncapi import asyncapi_document
from shared.infra.redact import redact_url
from shared.infra.settings import Settings
from sheetflow.cli import commands

SECRET_URL = "nats://svc:pw-Zq81x@nats.internal:4222"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (SECRET_URL, "nats://***@nats.internal:4222"),
        ("tls://token-Zq81x@a:4222,nats://u:p@b:4222", "tls://***@a:4222,nats://***@b:4222"),
        ("nats://127.0.0.1:4222", "nats://127.0.0.1:4222"),
        ("127.0.0.1:9000", "127.0.0.1:9000"),
    ],
)
def test_redact_url_hides_user_info_only(url, shown):
    assert redact_url(url) == shown


def test_up_prints_the_nats_url_without_its_password(capsys):
    configured = Settings(_env_file=None, nats_url=SECRET_URL, s3_endpoint="s3:9000")
    commands.print_endpoints(configured, configured, ("ingest",), 1)
    printed = capsys.readouterr().out
    assert "nats://***@nats.internal:4222" in printed
    assert "pw-Zq81x" not in printed and "svc:" not in printed


def test_the_asyncapi_document_names_the_server_without_credentials():
    document = json.dumps(asyncapi_document(Settings(_env_file=None, nats_url=SECRET_URL)))
    assert "nats.internal:4222" in document and "pw-Zq81x" not in document
