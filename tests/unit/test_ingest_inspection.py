"""The upload inspectors: a first look and a full inspection apply the same checks, each in
a bounded child of its own lane."""

import pytest

from services.ingest.inspection import Inspectors
from services.ingest.refusals import Refusal
from shared.infra.settings import Settings
from tests.support.pdfs import drawing_set_pdf, notes_pdf


@pytest.mark.parametrize("quick_s", [30.0, 0.0], ids=["first look", "full inspection"])
async def test_each_lane_checks_the_upload_with_the_settings(tmp_path, quick_s):
    """Both lanes accept a one-page PDF with its page count and refuse one over the page
    limit: each hands the deployment's limits to the child it runs in."""
    settings = Settings(_env_file=None, max_pages=1, inspect_quick_s=quick_s)
    one, many = tmp_path / "one.pdf", tmp_path / "many.pdf"
    one.write_bytes(notes_pdf())
    many.write_bytes(drawing_set_pdf())
    inspectors = Inspectors(settings)
    try:
        accepted, _ = await inspectors.inspect(one)
        with pytest.raises(Refusal) as refused:
            await inspectors.inspect(many)
    finally:
        inspectors.close()
    assert accepted.page_count == 1
    assert refused.value.error == "too_many_pages"
