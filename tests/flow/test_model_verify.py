"""Verification with a scripted model that misreads a number and a judge that confirms
everything, on real NATS and S3 with every service a real process."""

from tests.support.flows import (
    JUDGE_MODEL,
    MISREAD,
    is_judge,
    misread_notes,
    model_settings,
    page,
    reply,
    requests_of,
    route,
)
from tests.support.model_server import ModelReply, ScriptedModelServer, request_images, request_text
from tests.support.pdfs import notes_pdf
from tests.support.stack import stack


def misreading_vision(_request: dict) -> ModelReply:
    """Every note, note 3 misread as (2) and carrying that count as an attribute too."""
    objects = misread_notes()
    objects[2]["attributes"] = {"count": 2, "member": "2X6 STUD PACK"}
    return reply(objects, sheet={"sheet_title": "GENERAL NOTES"})


async def test_misread_number_refuted_despite_lenient_judge(settings):
    """A vision misread "(2)" where the sheet says "(5)" stays content_wrong with the page's actual text even though the judge confirms everything; the judge saw the text layer and an image."""
    with ScriptedModelServer(route(vision=misreading_vision)) as server:
        settings = model_settings(settings, server, llm_verify_model=JUDGE_MODEL)
        with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
            job_id = s.submit(notes_pdf())
            report = s.wait_report(job_id, timeout=90)

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
