"""Extract against a scripted OpenAI-compatible model server, on real NATS and S3 with every
service a real process: ingest and extract alone (one stack for the module's first tests),
and the session's ``pipeline``. Each test scripts the model and runs a job of its own."""

import base64
import itertools
from collections.abc import Iterator

import pymupdf
import pytest

from sheetflow.runtime import EmbeddedServers
from tests.flow.conftest import PIPELINE_GROUP
from tests.support.flows import (
    EXTRACT_MODEL,
    ModelStack,
    line_objects,
    model_stack,
    page,
    page_of,
    reply,
    route,
    text_block,
    texts,
    wait_extracted,
)
from tests.support.model_server import ModelReply, request_images, request_text
from tests.support.pdfs import NOTES, add_notes_page, add_plan_page, make_pdf, notes_pdf

# The tests on ``extracting`` share it: one worker runs them.
EXTRACTING_GROUP = pytest.mark.xdist_group("model_extract")


@pytest.fixture(scope="module")
def extracting(
    servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModelStack]:
    """Ingest and extract alone against a scripted model."""
    data_dir = tmp_path_factory.mktemp("extracting")
    with model_stack(servers.settings, data_dir, "ext", ("ingest", "extract")) as shared:
        yield shared


@EXTRACTING_GROUP
async def test_vision_request_carries_page_image_and_text_layer(extracting: ModelStack):
    """The vision call sends the rendered page as a PNG data URL plus the TEXT LAYER block with the page's own text."""
    server, settings = extracting.script(route()), extracting.settings
    job_id = extracting.stack.submit(notes_pdf())
    extracted = (await wait_extracted(settings, job_id, 1))[1]

    assert extracted["status"] == "ok" and extracted["rung"] == "vision"
    assert extracted["objects"], "the faithful reply's objects survive the guard"
    [request] = server.requests
    assert request["model"] == EXTRACT_MODEL
    assert request["_headers"]["authorization"] == "Bearer test-key"
    [image] = request_images(request)
    assert image.startswith("data:image/png;base64,")
    pixmap = pymupdf.Pixmap(base64.b64decode(image.split(",", 1)[1]))
    assert max(pixmap.width, pixmap.height) == settings.page_image_max_px
    assert "TEXT LAYER (authoritative for alphanumeric content" in request_text(request)
    block = text_block(request)
    assert "GENERAL NOTES" in block and "PROVIDE (5) 2X6 STUD PACK" in block


@EXTRACTING_GROUP
async def test_rate_limited_then_answered(extracting: ModelStack):
    """A 429 is retried with backoff and the page is then extracted ok from the second answer."""
    calls = itertools.count()

    def respond(request: dict) -> ModelReply:
        if next(calls) == 0:
            return ModelReply(status=429, headers={"Retry-After": "0"})
        return reply(line_objects(request))

    server = extracting.script(respond)
    job_id = extracting.stack.submit(notes_pdf())
    extracted = (await wait_extracted(extracting.settings, job_id, 1))[1]

    assert extracted["status"] == "ok", extracted["reason"]
    assert extracted["objects"]
    assert len(server.requests) == 2
    assert extracted["usage"]["extract"]["calls"] == 1


@PIPELINE_GROUP
async def test_model_failing_forever_fails_one_page_and_worker_serves_on(pipeline: ModelStack):
    """A model answering 500 forever for one page: that page is read offline instead,
    degraded with the reason and counted as a model failure, and the same worker finishes
    the other page."""
    faithful = route()

    def respond(request: dict) -> ModelReply:
        if page_of(request) == 1:
            return ModelReply(status=500, content="model exploded")
        return faithful(request)

    pdf = make_pdf(add_notes_page, add_plan_page)
    server, s = pipeline.script(respond), pipeline.stack
    report = s.wait_report(s.submit(pdf), timeout=90)
    assert s.procs["extract"].alive(), s.logs()

    assert report["status"] == "complete", report["summary"]
    failed = page(report, 1)
    assert failed["status"] == "verified" and failed["degraded"]
    assert failed["extraction_status"] == "degraded"
    assert "500" in failed["extraction_reason"] and "3 times" in failed["extraction_reason"]
    assert "read offline instead" in failed["extraction_reason"]
    assert failed["rungs"] == ["offline"]
    assert all(note[:40] in " ".join(texts(failed).split()) for note in NOTES)
    assert failed["coverage"]["ratio"] >= pipeline.settings.extract_coverage_floor
    [failure] = report["summary"]["model_failures"]
    assert failure["page_number"] == 1 and failure["stage"] == "extract"
    # 3 attempts (1 + llm_max_retries) for the vision call; the offline read covers the page.
    page1 = [r for r in server.requests if page_of(r) == 1]
    assert len(page1) == 3
    other = page(report, 2)
    assert other["extraction_status"] == "ok" and other["rungs"] == ["vision"]
    assert other["objects"]
