"""Checks as plug-ins: a new basis is one module (a class with ``applies`` and ``run``) and
one line in the ordered list; whose verdict stands is settled in one place."""

import pymupdf

from services.extract.reading.textlayer import read_text_layer
from services.verify.checks.base import CheckResult, Finding, PageEvidence
from services.verify.checks.registry import UNREAD, Registered, registered, settle
from services.verify.pipeline import verify_page
from shared.contracts.models import Coverage, CoveredPage, ObjectVerification, PageObject
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from tests.support.verdicts import verification

SETTINGS = Settings(_env_file=None, llm_base_url=None, verify_ocr_check=False)


class Reread:
    """The example check: it confirms every object whose text its words print, say a
    second reader of the page's render (here it only compares, to stay a unit test)."""

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        return page.text_layer.has_text_layer

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult:
        return CheckResult(
            findings={
                o.object_id: Finding(ObjectVerification(verdict="confirmed", basis="ocr"))
                for o in objects
                if o.object_id in page.located
            }
        )


def _page() -> tuple[CoveredPage, TextLayer, bytes]:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 100), "1. PROVIDE BLOCKING AT ALL GRAB BARS.", fontsize=10)
    pdf = doc.tobytes()
    layer = read_text_layer(pymupdf.open(stream=pdf, filetype="pdf")[0], 1, min_chars=20)
    ids = list(range(len(layer.words)))
    note = PageObject(
        object_id="N1",
        source_text=" ".join(w.text for w in layer.words),
        evidence=ids,
        rung="offline",
    )
    cov = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    covered = CoveredPage(
        job_id="j",
        page_number=1,
        has_text_layer=True,
        objects=[note],
        coverage_before=cov,
        coverage=cov,
        floor=0.6,
        below_floor=False,
        rungs=["offline"],
    )
    return covered, layer, pdf


async def test_a_new_check_is_one_class_and_one_line():
    """Without the example check the offline page is unjudged (its objects are its own
    words); with it registered after the text layer's, the object is confirmed on its basis
    and the page passes."""
    covered, layer, pdf = _page()
    alone = await verify_page(covered, layer, pdf, None, SETTINGS, None)
    assert alone.verified.verdict.unjudged
    text_layer, *rest = registered(None, None)
    checks = (text_layer, Registered(Reread(), replaces=UNREAD), *rest)
    out = await verify_page(covered, layer, pdf, None, SETTINGS, None, checks=checks)
    (obj,) = out.verified.objects
    assert (verification(obj).verdict, verification(obj).basis) == ("confirmed", "ocr")
    assert out.verified.verdict.ok and not out.verified.verdict.unjudged


def test_a_check_replaces_only_the_verdicts_it_is_registered_to_replace():
    """A check placed to fill unread objects leaves a standing uncertain verdict alone, but
    a refutation of the text layer itself (text_layer_mismatch) replaces whatever stood."""
    entry = Registered(Reread(), replaces=UNREAD)
    obj = PageObject(object_id="N1", verification=ObjectVerification(verdict="uncertain"))
    confirmed = Finding(ObjectVerification(verdict="confirmed", basis="ocr"))
    assert settle(entry, obj, confirmed)[0].verdict == "uncertain"
    mismatch = Finding(
        ObjectVerification(verdict="refuted", basis="ocr", kind="text_layer_mismatch")
    )
    obj.verification = ObjectVerification(verdict="confirmed", basis="text_layer")
    assert settle(entry, obj, mismatch) == (mismatch.verification, None)
