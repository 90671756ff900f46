"""A real drawing set through every service: rotated sheets read upright, objects cite the
words they came from (stored with the page, so a client can highlight them), the verifier
never contradicts its own extraction, and the OCR check of what the sheets show judges
them."""

from shared.infra.storage import Keys, ObjectStore
from shared.pagetext import TextLayer
from tests.flow.conftest import OFFLINE_GROUP
from tests.support.corpus import manifest, needs_corpus, pdf_bytes
from tests.support.stack import Stack

pytestmark = [needs_corpus, OFFLINE_GROUP]

# Four sheets, displayed sideways and upright (/Rotate 90 and 270), numbers inside titles.
FILE = "ocm__OCM081.1.08.18.pdf"


async def test_real_rotated_set_end_to_end(offline_pipeline: Stack):
    """Every page verified with no problem and judged by OCR of the sheet (the only
    independent check offline), each object either confirmed by it or left without a verdict
    (never checked against the words it was cut from); every object's evidence ids name the
    stored text.json words its source_text is made of, inside its evidence bbox."""
    entry = next(e for e in manifest() if e["file"] == FILE)
    s = offline_pipeline
    r = s.upload(pdf_bytes(FILE), name=FILE)
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    report = s.wait_report(job_id, timeout=240)
    assert report["status"] == "complete", report["summary"]
    store = ObjectStore(s.settings)
    for page in report["pages"]:
        assert page["status"] == "verified" and page["verification"]["problems"] == []
        assert not page["verification"]["unjudged"], page["verification"]
        assert page["objects"] and page["coverage"]["ratio"] >= page["floor"]
        layer = await store.get_model(
            Keys.page(job_id, page["page_number"], "text.json"), TextLayer
        )
        assert layer.rotation in (90, 270)
        for obj in page["objects"]:
            verification = obj["verification"]
            assert (verification["verdict"], verification["basis"]) in {
                ("confirmed", "ocr"),
                ("uncertain", "ocr"),
                ("not_judged", None),
            }, obj
            words = [layer.words[i] for i in obj["evidence"]]
            assert obj["source_text"] == " ".join(w.text for w in words)
            x0, y0, x1, y1 = obj["evidence_bbox"]
            assert all(x0 <= w.bbox[0] and w.bbox[2] <= x1 + 1e-6 for w in words)
            assert 0 <= x0 <= layer.width and 0 <= y0 <= y1 <= layer.height
    confirmed = [
        o
        for p in report["pages"]
        for o in p["objects"]
        if o["verification"]["verdict"] == "confirmed"
    ]
    assert confirmed, "the OCR check confirms what the sheets show"
    summary = report["summary"]["verification"]
    assert summary["pages_passed"] == len(report["pages"]) and summary["pages_self_read"] == 0
    # A sheet number found is the one printed: a wrong number is worse than none.
    printed = {s["page"]: s["sheet_number"] for s in entry["sheets"]}
    for page in report["pages"]:
        found = page["sheet"]["sheet_number"]
        assert found in (None, printed[page["page_number"]])
