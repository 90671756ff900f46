"""Verification with a scripted model that misreads a number and a judge that confirms
everything, on real NATS and S3 with every service a real process (one stack for the
session, ``judged_pipeline``: each test scripts the model and runs a job of its own)."""

import httpx

from tests.flow.conftest import JUDGED_GROUP
from tests.support.flows import (
    JUDGE_MODEL,
    MISREAD,
    ModelStack,
    is_judge,
    line_objects,
    misread_notes,
    page,
    reply,
    requests_of,
    route,
)
from tests.support.model_server import ModelReply, request_images, request_text
from tests.support.pdfs import HIDDEN_NUMBER, add_hidden_text_page, make_pdf, notes_pdf

pytestmark = JUDGED_GROUP


def misreading_vision(_request: dict) -> ModelReply:
    """Every note, note 3 misread as (2) and carrying that count as an attribute too."""
    objects = misread_notes()
    objects[2]["attributes"] = {"count": 2, "member": "2X6 STUD PACK"}
    return reply(objects, sheet={"sheet_title": "GENERAL NOTES"})


async def test_misread_number_refuted_despite_lenient_judge(judged_pipeline: ModelStack):
    """A vision misread "(2)" where the sheet says "(5)" stays content_wrong with the page's actual text even though the judge confirms everything; the judge saw the text layer and an image."""
    server = judged_pipeline.script(route(vision=misreading_vision))
    s = judged_pipeline.stack
    report = s.wait_report(s.submit(notes_pdf()), timeout=90)

    notes = page(report, 1)
    misread = next(o for o in notes["objects"] if o["object_id"] == "note-3")
    assert misread["source_text"] == MISREAD, "nothing extracted is rewritten"
    verification = misread["verification"]
    assert verification["verdict"] == "refuted"
    assert verification["kind"] == "content_wrong"
    assert "(5) 2X6 STUD PACK" in verification["actual_text"]
    assert "content_wrong" in notes["verification"]["kinds"]
    assert notes["verification"]["ok"] is False
    assert any("(5) 2X6 STUD PACK" in problem for problem in notes["verification"]["problems"])
    others = [o for o in notes["objects"] if o["object_id"] != "note-3"]
    assert all(o["verification"]["verdict"] == "confirmed" for o in others)
    assert report["summary"]["verification"]["kinds"]["content_wrong"] == 1
    # The judge did answer (it is not a failed call that left the oracle alone): its
    # "confirmed" is recorded as a disagreement the oracle won.
    assert verification["judge"]["verdict"] == "confirmed"
    [disagreement] = notes["judge_disagreements"]
    assert disagreement["object_id"] == "note-3" and disagreement["kept"] == "oracle"

    [judge] = requests_of(server, is_judge)
    assert judge["model"] == JUDGE_MODEL
    prompt = request_text(judge)
    assert "PAGE TEXT" in prompt and "PROVIDE (5) 2X6 STUD PACK" in prompt
    assert '"note-3"' in prompt
    images = request_images(judge)
    assert images
    assert all(i.startswith(("data:image/jpeg;base64,", "data:image/png;base64,")) for i in images)
    assert "verify" in report["summary"]["usage"]


async def test_hidden_text_reaches_no_model_and_the_report_names_it(judged_pipeline: ModelStack):
    """The hidden-text sheet with a model: no request (vision, judge) carries the invisible
    number or the white note, no object comes from them, the title block reads A-101, and
    report.json and report.html name the hidden text."""
    server = judged_pipeline.script(route(vision=lambda r: reply(line_objects(r))))
    s = judged_pipeline.stack
    job_id = s.submit(make_pdf(add_hidden_text_page))
    report = s.wait_report(job_id, timeout=90)
    html = httpx.get(f"{s.api}/v1/jobs/{job_id}/report.html", timeout=10).text
    assert server.requests and any(is_judge(r) for r in server.requests)
    for request in server.requests:
        text = request_text(request)
        assert HIDDEN_NUMBER not in text and "IGNORE THE IMAGE" not in text
    sheet = page(report, 1)
    assert sheet["sheet"]["sheet_number"] == "A-101"
    claims = " ".join(o.get("source_text") or "" for o in sheet["objects"])
    assert "PROVIDE (5) 2X6 STUD PACK" in claims and HIDDEN_NUMBER not in claims
    assert "PROVIDE (9)" not in claims
    hidden = sheet["hidden_text"]
    assert hidden["count"] == 14 and hidden["kinds"] == {"ground_coloured": 13, "invisible": 1}
    assert report["summary"]["verification"]["hidden_text_pages"] == [1]
    assert 'id="hidden-text"' in html and HIDDEN_NUMBER in html
