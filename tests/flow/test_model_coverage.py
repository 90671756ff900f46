"""The coverage ladder and sheet identity with a scripted model, on real NATS and S3 with
every service a real process (one stack for the session, ``pipeline``: each test scripts the
model and runs a job of its own)."""

from tests.flow.conftest import PIPELINE_GROUP
from tests.support.flows import (
    EXTRACT_MODEL,
    ModelStack,
    Responder,
    is_structuring,
    is_vision,
    line_objects,
    page,
    reply,
    requests_of,
    route,
    summary_object,
    text_block,
    texts,
)
from tests.support.model_server import ScriptedModelServer, request_text
from tests.support.pdfs import NOTES, SCANNED_LINES, notes_pdf, plan_pdf, scanned_pdf

pytestmark = PIPELINE_GROUP

LAZY_VISION = route(vision=lambda _req: reply([summary_object()]))


def flat(text: str) -> str:
    return " ".join(text.split())


def run_one(
    pipeline: ModelStack, responder: Responder, pdf: bytes, options: dict | None = None
) -> tuple[dict, ScriptedModelServer]:
    """Upload ``pdf`` with ``responder`` as the model; the job's report and the model server
    (holding this job's requests alone)."""
    server = pipeline.script(responder)
    r = pipeline.stack.upload(pdf, options=options)
    assert r.status_code == 202, r.text
    return pipeline.stack.wait_report(r.json()["job_id"], timeout=90), server


async def test_summary_reply_rescued_by_text_structuring(pipeline):
    """A notes sheet whose vision reply is one generic summary ends with every note present, from a rung-2 request that reached the model."""
    header = {"sheet_number": "G001", "sheet_title": "GENERAL NOTES"}
    lazy_with_header = route(vision=lambda _req: reply([summary_object()], sheet=header))
    report, server = run_one(pipeline, lazy_with_header, notes_pdf())

    notes = page(report, 1)
    assert notes["rungs"] == ["vision", "text_structuring"]
    assert notes["rung_status"] == {"vision": "ok", "text_structuring": "ok"}
    assert notes["coverage_before"]["ratio"] < pipeline.settings.extract_coverage_floor
    assert notes["coverage"]["ratio"] >= pipeline.settings.extract_coverage_floor
    assert not notes["below_floor"]
    assert all(flat(note) in flat(texts(notes)) for note in NOTES)
    assert "summary" in {o["object_id"] for o in notes["objects"]}, "vision's object is kept"
    [structuring] = requests_of(server, is_structuring)
    assert structuring["model"] == EXTRACT_MODEL  # the structure model defaults to it
    assert "PROVIDE (5) 2X6 STUD PACK" in request_text(structuring)
    assert "SHEET HINT" in request_text(structuring), "rung 1's header is the model's hint"
    assert "sheet_number: G001; sheet_title: GENERAL NOTES" in request_text(structuring)
    assert report["summary"]["extraction_coverage"]["text_structured_pages"] == 1


async def test_text_retry_disabled_ends_with_fallback_stubs(pipeline):
    """With rung 2 disabled for the job, the summary-only notes sheet is lifted over the floor by fallback stubs and no structuring request is sent."""
    report, server = run_one(pipeline, LAZY_VISION, notes_pdf(), options={"text_retry": False})

    notes = page(report, 1)
    assert notes["rungs"] == ["vision", "fallback"]
    assert notes["coverage"]["ratio"] >= pipeline.settings.extract_coverage_floor
    stubs = [o for o in notes["objects"] if o["grounding"] == "text_layer_fallback"]
    assert stubs and all(o["confidence"] == "low" for o in stubs)
    assert not requests_of(server, is_structuring)
    assert report["summary"]["extraction_coverage"]["fallback_pages"] == [1]


async def test_both_rungs_disabled_page_below_floor_says_so(pipeline):
    """With rungs 2 and 3 disabled the summary-only page stays below the floor, and the report and its verdict say so."""
    options = {"text_retry": False, "fallback": False}
    report, server = run_one(pipeline, LAZY_VISION, notes_pdf(), options=options)

    notes = page(report, 1)
    assert notes["rungs"] == ["vision"]
    assert notes["below_floor"] is True
    assert notes["coverage"]["ratio"] < pipeline.settings.extract_coverage_floor
    assert "content_missing" in notes["verification"]["kinds"]
    assert notes["verification"]["ok"] is False
    assert report["summary"]["extraction_coverage"]["pages_below_floor"] == [1]
    assert report["summary"]["verification"]["kinds"].get("content_missing") == 1
    assert not requests_of(server, is_structuring)


async def test_scanned_page_left_to_vision_not_penalised(pipeline):
    """A page without a text layer gets no TEXT LAYER block, climbs no rung and is not counted below the floor."""
    scanned_objects = [
        {"object_id": f"n{i}", "object_type": "general_note", "source_text": line}
        for i, line in enumerate(SCANNED_LINES, start=1)
    ]
    report, server = run_one(
        pipeline, route(vision=lambda _req: reply(scanned_objects)), scanned_pdf()
    )

    scan = page(report, 1)
    assert scan["has_text_layer"] is False
    assert scan["rungs"] == ["vision"]
    assert scan["below_floor"] is False
    assert "content_missing" not in scan["verification"]["kinds"]
    assert {o["source_text"] for o in scan["objects"]} == set(SCANNED_LINES)
    assert report["summary"]["extraction_coverage"]["pages_below_floor"] == []
    [vision] = requests_of(server, is_vision)
    assert text_block(vision) == "", "no TEXT LAYER block for a page without one"
    assert not requests_of(server, is_structuring)


async def test_missing_sheet_header_recovered_from_title_block(pipeline):
    """A vision reply without a sheet header ends with the title block's sheet number, sourced from the text layer, and its discipline."""
    headless = route(vision=lambda req: reply(line_objects(req), sheet={}))
    report, _ = run_one(pipeline, headless, plan_pdf("S201"))

    sheet = page(report, 1)["sheet"]
    assert sheet["sheet_number"] == "S201"
    assert sheet["sheet_number_source"] == "text_layer"
    assert sheet["discipline"] and sheet["discipline"].lower().startswith("struct")
    assert report["summary"]["sheets"]["recovered_from_text_layer"] == 1
