"""S3 over TLS: services reach a TLS-only S3 server when given its CA."""

import shutil
from pathlib import Path

import httpx
import pytest

from sheetflow.runtime import start_s3, stop_processes
from tests.faults.conftest import s3_keys
from tests.faults.test_hostile_input import make_tls_material
from tests.support.pdfs import add_notes_page, make_pdf
from tests.support.stack import stack

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("openssl") is None, reason="needs the openssl CLI to make certificates"
    ),
    pytest.mark.skipif(
        shutil.which("minio") is not None,
        reason="start_s3 would pick MinIO, and the TLS flags here are SeaweedFS's",
    ),
]


def test_s3_over_tls(settings, tmp_path):
    """With SHEETFLOW_S3_SECURE and SHEETFLOW_S3_CA_FILE, a job completes against a TLS-only S3."""
    ca, crt, key = make_tls_material(tmp_path)
    proc, endpoint = start_s3(
        tmp_path / "tls",
        extra_args=[f"-s3.cert.file={crt}", f"-s3.key.file={key}"],
        scheme="https",
    )
    try:
        # The port speaks TLS with a certificate the test CA vouches for (not plain HTTP).
        assert httpx.get(f"https://{endpoint}/", verify=ca, timeout=5).status_code < 500
        settings = settings.model_copy(
            update={
                "s3_endpoint": endpoint,
                "s3_secure": True,
                "s3_ca_file": Path(ca),
                **s3_keys(tmp_path / "tls"),
            }
        )
        with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
            r = s.upload(make_pdf(add_notes_page))
            assert r.status_code == 202, r.text
            report = s.wait_report(r.json()["job_id"])
        assert report["status"] == "complete"
        assert [p["page_number"] for p in report["pages"]] == [1]
    finally:
        stop_processes([proc])  # weed may not exit on SIGTERM: killed after a moment
