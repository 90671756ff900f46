"""Hostile PDFs, secrets, credentials and stalls: a clear refusal or a named failed page, in bounded time."""

import re
import shutil
import subprocess
import time
import zlib
from pathlib import Path

import httpx
import nkeys
import pymupdf
import pytest
from pydantic import SecretStr

from sheetflow.runtime import free_port, start_nats
from tests.faults.conftest import with_model
from tests.support.bombs import many_pages_pdf
from tests.support.model_server import ModelReply
from tests.support.nats_auth import creds_setup, new_seed, public_key
from tests.support.pdfs import add_notes_page, make_pdf
from tests.support.report_contract import assert_valid_report
from tests.support.stack import stack

pytestmark = pytest.mark.slow


def huge_page() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=200 * 72, height=200 * 72)
    page.insert_text((500, 500), "GENERAL NOTES FOR A VERY LARGE SHEET", fontsize=200)
    return doc.tobytes()


def broken_xref() -> bytes:
    pdf = make_pdf(add_notes_page)
    return re.sub(rb"startxref\s+\d+", b"startxref\n999999", pdf)


def endless_content_stream() -> bytes:
    """A page whose tiny compressed content stream inflates to ~200 MB of drawing operators."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "A PAGE WITH A BOMB IN IT AND SOME TEXT")
    ops = b"0 0 m 100 100 l S\n" * (200 * 1024 * 1024 // 18)
    xref = page.get_contents()[0]
    doc.update_stream(xref, zlib.compress(ops, 9), compress=False)
    doc.xref_set_key(xref, "Filter", "/FlateDecode")
    return doc.tobytes()


async def test_hostile_pdfs_are_refused_or_named(settings):
    """10,000 pages: refused at upload; a 200 in page, broken xref, endless content stream:
    processed or a named failed page, all within bounded time. (Active content is stripped,
    not refused: tests/flow/test_intake.py.)"""
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        started = time.monotonic()
        r = s.upload(many_pages_pdf(10_000))
        assert r.status_code == 422 and r.json()["error"] == "too_many_pages"

        jobs = {}
        for name, payload in (
            ("huge", huge_page()),
            ("xref", broken_xref()),
            ("bomb", endless_content_stream()),
        ):
            r = s.upload(payload, name=f"{name}.pdf")
            if r.status_code == 422:
                assert r.json()["detail"]
                continue
            assert r.status_code == 202, r.text
            jobs[name] = r.json()["job_id"]
        reports = {name: s.wait_report(job_id, timeout=180) for name, job_id in jobs.items()}
        assert time.monotonic() - started < 240

    assert reports["huge"]["pages"][0]["status"] == "verified"
    bomb = reports["bomb"]["pages"][0]
    assert bomb["status"] == "failed" and "decompression bomb" in bomb["failure_reason"]
    assert reports["bomb"]["summary"]["failed_pages"][0]["page_number"] == 1
    if "xref" in reports:
        assert [p["page_number"] for p in reports["xref"]["pages"]] == [1]


async def test_secrets_never_reach_logs_or_error_bodies(settings, model):
    """The API token, S3 secret and model key appear in no log line and no error body."""
    # The S3 secret is the embedded server's own generated one: a made-up one would be refused.
    secrets = ["api-token-Zq81x", settings.s3_secret_key.get_secret_value(), "sk-model-Zq81x"]
    settings = with_model(settings, model).model_copy(
        update={
            "api_token": SecretStr(secrets[0]),
            "llm_api_key": SecretStr(secrets[2]),
            "retry_backoff_s": 0.05,
        }
    )
    model.responder = lambda request: ModelReply(status=401, body={"error": {"message": "bad key"}})
    auth = {"Authorization": f"Bearer {secrets[0]}"}
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        r = s.upload(make_pdf(add_notes_page), headers=auth)
        assert r.status_code == 202
        job_id = r.json()["job_id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            report = httpx.get(f"{s.api}/v1/jobs/{job_id}/report", headers=auth)
            if report.status_code == 200:
                break
            time.sleep(0.3)
        assert report.status_code == 200
        assert_valid_report(report.json())
        bodies = [
            httpx.get(f"{s.api}/v1/jobs/nope", headers=auth).text,
            s.upload(b"x").text,
            report.text,
        ]
        logs = s.logs()
    assert "extract" in logs
    for secret in secrets:
        assert secret not in logs
        assert all(secret not in body for body in bodies)


def nats_credentials(kind: str, directory: Path) -> tuple[list[str], dict]:
    """Server arguments that demand one kind of credential, and the settings that give it."""
    if kind == "token":
        return ["--auth", "nats-token-123"], {"nats_token": SecretStr("nats-token-123")}
    if kind == "user":
        server = ["--user", "svc", "--pass", "pw-456"]
        return server, {"nats_user": "svc", "nats_password": SecretStr("pw-456")}
    if kind == "creds":
        config, creds = creds_setup(directory)
        return ["-c", str(config)], {"nats_creds_file": creds}
    seed = new_seed(nkeys.PREFIX_BYTE_USER)
    seed_file, config = directory / "user.nk", directory / "auth.conf"
    seed_file.write_bytes(seed)
    config.write_text(f'authorization {{ users = [ {{ nkey: "{public_key(seed)}" }} ] }}\n')
    return ["-c", str(config)], {"nats_nkey_seed_file": seed_file}


@pytest.mark.parametrize("kind", ["token", "user", "nkey", "creds"])
async def test_nats_auth(settings, tmp_path, kind):
    """Services connect to a NATS server that requires a token, a user and password, an
    NKey or a JWT user's .creds file, given the matching SHEETFLOW_NATS_* setting; without
    it ingest is not ready."""
    server_args, credentials = nats_credentials(kind, tmp_path)
    proc, url = start_nats(tmp_path / "authed", port=free_port(), extra_args=server_args)
    try:
        settings = settings.model_copy(update={"nats_url": url, **credentials})
        with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
            job_id = s.submit(make_pdf(add_notes_page))
            assert s.wait_report(job_id)["status"] == "complete"
        anonymous = dict.fromkeys(credentials)
        unauthenticated = settings.model_copy(update={**anonymous, "api_port": free_port()})
        with stack(unauthenticated) as s:
            s.start("ingest")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    r = httpx.get(f"{s.api}/readyz", timeout=5)
                    break
                except httpx.HTTPError:
                    time.sleep(0.2)
            assert r.status_code == 503, s.logs()
    finally:
        proc.stop()


async def test_job_without_workers_reports_stalled(settings):
    """With no extract worker running, the job's status says it is stalled instead of 'running' forever."""
    settings = settings.model_copy(update={"stall_after_s": 1.0})
    with stack(settings, "ingest") as s:
        job_id = s.submit(make_pdf(add_notes_page))
        time.sleep(2.0)
        status = s.status(job_id)
    assert status["stalled"] is True
    assert "worker" in status["detail"]


def make_tls_material(directory) -> tuple[str, str, str]:
    """A throwaway CA and a server certificate for 127.0.0.1, made with the openssl CLI."""
    ca_key, ca_crt = directory / "ca.key", directory / "ca.crt"
    key, csr, crt = directory / "server.key", directory / "server.csr", directory / "server.crt"
    ext = directory / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")

    def run(*args):
        return subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        ca_key,
        "-out",
        ca_crt,
    )
    run(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        key,
        "-out",
        csr,
    )
    run(
        "x509",
        "-req",
        "-in",
        csr,
        "-CA",
        ca_crt,
        "-CAkey",
        ca_key,
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        ext,
        "-out",
        crt,
    )
    return str(ca_crt), str(crt), str(key)


@pytest.mark.skipif(
    shutil.which("openssl") is None, reason="needs the openssl CLI to make certificates"
)
async def test_nats_over_tls(settings, tmp_path):
    """Services reach a TLS-only NATS server when given its CA (SHEETFLOW_NATS_TLS_CA_FILE)."""
    ca, crt, key = make_tls_material(tmp_path)
    proc, url = start_nats(
        tmp_path / "tls", port=free_port(), extra_args=["--tls", "--tlscert", crt, "--tlskey", key]
    )
    try:
        settings = settings.model_copy(
            update={"nats_url": url.replace("nats://", "tls://"), "nats_tls_ca_file": Path(ca)}
        )
        with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
            job_id = s.submit(make_pdf(add_notes_page))
            assert s.wait_report(job_id)["status"] == "complete"
    finally:
        proc.stop()
