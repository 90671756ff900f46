"""The report of a small set run with a scripted model, and the ``report.ready`` event as a
subscriber in another system sees it, on real NATS and S3 with every service a real
process."""

import asyncio
import json

import httpx
import nats
import pymupdf
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from sheetflow.cli.events import nats_options
from tests.support.flows import (
    JUDGE_MODEL,
    MISREAD,
    is_structuring,
    line_objects,
    misread_notes,
    model_settings,
    page,
    page_of,
    reply,
    requests_of,
    route,
    summary_object,
    texts,
)
from tests.support.model_server import ModelReply, ScriptedModelServer
from tests.support.pdfs import NOTES, add_blank_page, add_notes_page, add_plan_page, make_pdf
from tests.support.report_contract import OBJECT_KEYS, PAGE_KEYS, SHEET_KEYS, VERDICT_KEYS
from tests.support.stack import stack

NOTES_RESCUED, PLAN, NOTES_MISREAD, BLANK, HUGE = 1, 2, 3, 4, 5


def add_huge_page(doc: pymupdf.Document) -> pymupdf.Page:
    """A 60 x 24 in page: beyond the 50-inch limit the test sets, so extract refuses it."""
    page = doc.new_page(width=60 * 72, height=24 * 72)
    page.insert_text((72, 72), "THIS SHEET IS FAR TOO WIDE TO BE A DRAWING", fontsize=24)
    return page


def vision(request: dict) -> ModelReply:
    """Page 1: one summary object; page 2: faithful but no sheet header; page 3: every note
    with (5) misread as (2); page 4 (blank): nothing."""
    if page_of(request) == NOTES_RESCUED:
        return reply([summary_object()])
    if page_of(request) == NOTES_MISREAD:
        return reply(misread_notes())
    return reply(line_objects(request))


def report_ready_validator(asyncapi: dict) -> tuple[str, Draft202012Validator]:
    """The ``report.ready`` subject and a validator of its payload, both read from the
    published AsyncAPI document (``$ref``s resolved inside it)."""
    channels = asyncapi["channels"].values()
    [channel] = [c for c in channels if c["address"].endswith(".report.ready")]
    message_ref = channel["messages"]["Message"]["$ref"]
    registry = Registry().with_resource("urn:asyncapi", DRAFT202012.create_resource(asyncapi))
    payload = {"$ref": f"urn:asyncapi{message_ref}/payload"}
    return channel["address"], Draft202012Validator(payload, registry=registry)


async def test_report_names_every_outcome_and_announces_itself(settings):
    """A five-page set ends in a partial report with a rescued notes page, a recovered sheet number, a refuted number, a skipped blank and a named failed page, and a report.ready event valid against the published AsyncAPI schema."""
    pdf = make_pdf(add_notes_page, add_plan_page, add_notes_page, add_blank_page, add_huge_page)
    with ScriptedModelServer(route(vision=vision)) as server:
        settings = model_settings(
            settings, server, llm_verify_model=JUDGE_MODEL, page_max_side_in=50.0
        )
        with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
            subject, validator = report_ready_validator(httpx.get(f"{s.api}/asyncapi.json").json())
            nc = await nats.connect(settings.nats_url, **nats_options(settings))
            try:
                events = await nc.subscribe(subject)
                job_id = s.submit(pdf, name="small-set.pdf")
                report = await asyncio.to_thread(s.wait_report, job_id, 120)
                ready = json.loads((await events.next_msg(timeout=10)).data)
            finally:
                await nc.close()
            status = s.status(job_id)
            html = httpx.get(f"{s.api}/v1/jobs/{job_id}/report.html").text

    assert report["status"] == "partial" and status["status"] == "partial"
    assert [p["page_number"] for p in report["pages"]] == [1, 2, 3, 4, 5]
    for p in report["pages"]:
        assert PAGE_KEYS <= p.keys() and SHEET_KEYS <= p["sheet"].keys()
        assert all(OBJECT_KEYS <= o.keys() for o in p["objects"])
        if p["status"] == "verified":
            assert VERDICT_KEYS <= p["verification"].keys()

    rescued = page(report, NOTES_RESCUED)
    assert rescued["rungs"] == ["vision", "text_structuring"]
    assert rescued["coverage"]["ratio"] >= settings.extract_coverage_floor
    assert all(" ".join(n.split()) in " ".join(texts(rescued).split()) for n in NOTES)
    assert len(requests_of(server, is_structuring)) == 1

    plan = page(report, PLAN)["sheet"]
    assert plan["sheet_number"] == "A101" and plan["sheet_number_source"] == "text_layer"
    assert plan["discipline"]

    misread = page(report, NOTES_MISREAD)
    refuted = [o for o in misread["objects"] if o["verification"]["kind"] == "content_wrong"]
    assert [o["source_text"] for o in refuted] == [MISREAD]
    assert "(5) 2X6 STUD PACK" in refuted[0]["verification"]["actual_text"]
    assert "content_wrong" in misread["verification"]["kinds"]

    blank = page(report, BLANK)
    assert blank["status"] == "verified" and blank["has_text_layer"] is False
    assert blank["verification"]["skipped"] == "blank" and blank["verification"]["unjudged"] is True

    huge = page(report, HUGE)
    assert huge["status"] == "failed"
    assert "60 x 24 inches" in huge["failure_reason"] and "50-inch" in huge["failure_reason"]

    summary = report["summary"]
    [failed] = summary["failed_pages"]
    assert failed["page_number"] == HUGE and failed["stage"] == "extract"
    assert failed["reason"] == huge["failure_reason"]
    assert summary["extraction_coverage"]["text_structured_pages"] == 1
    assert summary["extraction_coverage"]["pages_below_floor"] == []
    verification = summary["verification"]
    assert verification["pages_skipped_blank"] == 1
    # Four pages went through verify (the huge one failed); the blank one is unjudged and
    # the misread page has a problem, so the judged pages are the other three.
    assert verification["pages_verified"] == 4 and verification["pages_unjudged"] == 1
    judged = verification["pages_verified"] - verification["pages_unjudged"]
    assert verification["problem_rate"] == round(verification["verify_failed"] / judged, 4)
    assert summary["verification"]["kinds"]["content_wrong"] == 1
    assert summary["verification"]["verify_failed"] >= 1
    assert summary["sheets"]["recovered_from_text_layer"] >= 1
    assert {"extract", "structure", "verify"} <= summary["usage"].keys()
    assert all(u["calls"] >= 1 for u in summary["usage"].values())
    assert {"vision", "verify"} <= summary["timings"].keys()
    assert "60 x 24 inches" in html and "A101" in html

    validator.validate(ready)
    assert ready["job_id"] == job_id and ready["file_name"] == "small-set.pdf"
    assert ready["status"] == "partial" and ready["page_count"] == 5
    assert ready["summary"]["failed_pages"] == [HUGE]
    assert ready["summary"]["extraction_coverage"]["pages_below_floor"] == []
    assert ready["summary"]["verification"] == verification
    assert ready["report_key"] == f"jobs/{job_id}/report.json"
