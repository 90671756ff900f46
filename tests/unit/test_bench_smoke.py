"""The benchmark scripts' pieces on 2 pages: argument parsing, the synthetic set, the
scripted vision reply, the memory verdict, the OCR scoring. Nothing here is timed."""

import json

import pymupdf
import pytest

from bench import (
    bombs,
    capacity,
    corpus,
    ingest,
    load,
    memory,
    model_reading,
    ocr,
    overhead,
    peers,
    scaling,
    startup,
    synthetic,
    titleblocks,
)
from services.extract.model.vision import build_vision_messages, parse_reply
from services.extract.reading.textlayer import read_text_layer
from shared.contracts.models import ObjectVerification, PageObject, PageVerdict
from shared.contracts.report import PageReport, Report
from shared.infra.settings import Settings
from shared.sheet.fields import read_units
from shared.sheet.header import SheetHeader
from tests.support.identity import FieldTally, Tally


@pytest.mark.parametrize(
    "script", [overhead, scaling, ingest, peers, memory, load, capacity, startup, bombs]
)
def test_every_script_takes_pages(script):
    """Each bench script accepts ``--pages`` for a smaller run."""
    assert script.parse_args(["--pages", "2"]).pages == 2


def test_synthetic_set_is_drawing_sheets_with_text():
    """Two 36x24 in sheets, each with its own sheet number and title-block text."""
    with synthetic.make_set(2) as doc:
        assert doc.page_count == 2
        for i, page in enumerate(doc):
            assert (page.rect.width, page.rect.height) == (36 * 72, 24 * 72)
            text = page.get_text()
            assert synthetic.sheet_spec(i)[0] in text
            assert "NORTHWIND ARCHITECTS" in text


def test_synthetic_scanned_sheet_has_no_text_layer():
    """With ``scanned_every=2`` the second sheet is an image with no text."""
    with synthetic.make_set(2, scanned_every=2) as doc:
        assert doc[0].get_text().strip()
        assert not doc[1].get_text().strip()
        assert doc[1].get_images()


def test_synthetic_set_is_cached(tmp_path):
    """The second request for a set returns the same file without writing it again."""
    path = synthetic.set_path(2, out_dir=tmp_path)
    written = path.stat().st_mtime_ns
    assert synthetic.set_path(2, out_dir=tmp_path) == path
    assert path.stat().st_mtime_ns == written
    with pymupdf.open(path) as doc:
        assert doc.page_count == 2


def test_scripted_vision_reply_echoes_the_text_layer():
    """The scaling bench's model reply has one object per line of the page reading, citing
    its id, so coverage passes."""
    with synthetic.make_set(1) as doc:
        layer = read_text_layer(doc[0], 1, 20)
    request = {"messages": build_vision_messages(b"png", layer, 12000)}
    parsed = parse_reply(scaling.responder(0.0)(request).content, "stop")
    units = read_units(layer).units
    assert [o.source_text for o in parsed.objects] == [u.text for u in units]
    assert list(parsed.cited.values()) == [[u.id] for u in units]


def test_scripted_vision_reply_without_text_layer_is_empty():
    """A request without a TEXT LAYER block gets an empty, valid reply."""
    reply = json.loads(
        scaling.responder(0.0)({"messages": [{"role": "user", "content": "hi"}]}).content
    )
    assert reply["objects"] == []


def test_memory_verdict_bounds_growth():
    """Growth within 20 MB or 10% is bounded; beyond both it is not."""
    assert memory.growth_verdict(100.0, 115.0)[2]
    assert memory.growth_verdict(400.0, 435.0)[2]
    grown, pct, ok = memory.growth_verdict(400.0, 500.0)
    assert (grown, pct, ok) == (100.0, 25.0, False)


def test_peer_empty_share_counts_pages_without_letters_or_digits():
    """A page whose text is only punctuation counts as having no extracted text."""
    run = peers.PeerRun(seconds=1.0, cpu_s=0.5, texts=["A101 PLAN", " -- ", ""])
    assert run.empty_share() == pytest.approx(2 / 3)
    assert run.pages_per_s() == 3.0


def test_capacity_arithmetic_follows_littles_law():
    """Model-bound extract workers are the pages in flight (rate x model latency) over the
    pages one worker holds, never fewer than its CPU needs."""
    args = capacity.parse_args(
        ["--pages-per-day", "864000", "--peak", "1", "--vision-latency", "8"]
    )  # 10 pages/s, 80 in flight
    page = capacity.PerPage(
        cpu_ms={"extract": 100.0, "nats": 10.0},
        nats_node_cpu_ms=[10.0],
        s3_objects=6.0,
        s3_bytes=300e3,
        source_bytes=3e3,
        s3_requests={"PUT": 6.0, "GET": 8.0},
        stream_events={"page.extract": 1.0},
        stream_event_bytes=1e3,
        stream_stored_bytes=3e3,
        nats_msgs=100.0,
        nats_bytes=20e3,
        kv={"writes": 6.0, "reads": 8.0},
        pages_per_s=1.0,
        idle_cpu_ms_per_s=5.0,
        idle_nats_msgs_per_s=10.0,
        model_calls={"vision": 1.0},
        model_request_bytes=500e3,
    )
    text = "\n".join(capacity.arithmetic(args, page, page, page))
    assert "mean 10.0 pages/s" in text
    assert "extract    1.00 cores -> 2 workers" in text  # 100 ms x 10/s at 70 %
    assert "80 pages in flight at 8 s/call, 4 per worker" in text
    assert ">= 4) -> 20 workers" in text and ">= 32) -> 3 workers" in text
    assert "60 PUT/s, 80 GET/s, 3.0 MB/s written" in text


def test_corpus_score_counts_numbers_titles_refutations_and_dark_pages():
    """bench.corpus scores a report page by page against the manifest's printed identity."""

    def page(n, number, title, objects, problems=(), has_text=True):
        return PageReport(
            page_number=n,
            status="verified",
            has_text_layer=has_text,
            sheet=SheetHeader(sheet_number=number, sheet_title=title),
            objects=objects,
            verification=PageVerdict(ok=not problems, problems=list(problems)),
        )

    def obj(rung, verdict=None, basis=None):
        verification = ObjectVerification(verdict=verdict, basis=basis) if verdict else None
        return PageObject(object_id="o", rung=rung, verification=verification)

    pages = [
        page(
            1,
            "A\u2010101",
            "floor  plan",
            [obj("offline", "refuted"), obj("vision", "refuted")],
            ["x"],
        ),
        page(2, "A102", None, []),
        page(3, "X9", None, [obj("offline")]),
        page(
            4, None, None, [obj("offline", "confirmed", "ocr"), obj("offline", "uncertain", "ocr")]
        ),
        page(5, None, "GENERAL NOTES", [obj("offline", "uncertain", "ocr")]),
    ]
    pages[2].verification.kinds = ["text_layer_mismatch"]
    sheets: list[dict] = [
        {"page": 1, "sheet_number": "A-101", "sheet_title": "FLOOR PLAN"},
        {"page": 2, "sheet_number": "A-102", "sheet_title": "ROOF PLAN"},
        {"page": 3, "sheet_number": None, "sheet_title": None},
        {"page": 4, "sheet_number": None, "sheet_title": None},
        {"page": 5, "sheet_number": None, "sheet_title": None},
    ]
    # Only the pages the score reads: the rest of a report is not built.
    score = corpus.score_report(Report.model_construct(pages=pages), sheets)  # type: ignore[call-arg]
    n = score.identity
    assert (n.numbers_right, n.numbers_labelled, n.numbers_invented) == (1, 2, 1)
    assert n.numbers_wrong == 1  # A102 is not A-102
    # Page 2's missing title is a miss; page 5's title, where none is printed, is wrong.
    assert (n.titles_right, n.titles_labelled, n.titles_wrong) == (1, 2, 1)
    assert (score.self_refuted, score.problem_pages, score.dark_text_pages) == (1, 1, 1)
    # The OCR check: page 4 judged by it (uncertain alone is no judgement), page 3 a mismatch.
    assert (score.text_pages, score.ocr_judged, score.ocr_mismatch) == (5, 1, 1)


def test_corpus_variants_are_chosen_by_flag():
    """``--variants`` reads the four renderings unless ``--only`` names some (or the
    original), with ``--jobs`` files at once."""
    args = corpus.parse_args(["--variants", "--files", "cray"])
    assert args.variants and args.only == ["raster", "outlines", "turned90", "turned270"]
    args = corpus.parse_args(["--variants", "--only", "original", "raster", "--jobs", "2"])
    assert (args.only, args.jobs) == (["original", "raster"], 2)


def test_titleblocks_bench_reads_the_generated_set_by_language_and_layout():
    """bench.titleblocks reads the original rendering unless told, and groups its scores by
    language and by layout."""
    args = titleblocks.parse_args([])
    assert (args.renderings, args.seed, args.sheets) == (["original"], 36, 4)
    args = titleblocks.parse_args(["--renderings", "raster", "outlines", "--langs", "ja"])
    assert (args.renderings, args.langs) == (["raster", "outlines"], ["ja"])
    one, two = Tally(), Tally()
    one.count("p1", ("A-101", "PLAN"), ("A-101", "PLAN"))
    two.count("p1", (None, "NOTES"), ("A-1", "PLAN"))
    results = {
        ("de-gost", "raster"): (one, FieldTally()),
        ("ja-gost", "raster"): (two, FieldTally()),
    }
    by_layout = titleblocks._groups(results, 1)
    assert list(by_layout) == [("raster", "gost")]
    tally = by_layout[("raster", "gost")][0]
    assert (tally.numbers_right, tally.titles_right, tally.titles_wrong) == (1, 1, 1)
    assert set(titleblocks._groups(results, 0)) == {("raster", "de"), ("raster", "ja")}


def test_ocr_title_hits_count_the_number_and_each_title_word():
    """The sheet number counts read as one word or split over two; each title word counts
    once, whatever its case; a misread number does not count."""
    words = ["LIGHTING", "E3.", "0", "plan", "NOTES"]
    assert ocr.title_hits(words, "E3.0", "Lighting Plan") == (3, 3)
    assert ocr.title_hits(["E3.8", "LIGHTING"], "E3.0", "Lighting Plan") == (1, 3)
    assert ocr.title_hits(["A2.R"], None, None) == (0, 0)


def test_ocr_bench_takes_rounds_and_files():
    """bench.ocr runs each variant ``--rounds`` times, on the manifest files chosen."""
    args = ocr.parse_args(["--rounds", "1", "--files", "nvce"])
    assert args.rounds == 1 and args.files == ["nvce"]


def test_the_copy_model_returns_every_row_and_note_of_the_examples_whole():
    """bench.model_reading on the example set: a model copying each TEXT LAYER line as one
    object returns every schedule row and numbered note whole from the page reading, and
    few of them from the old line-per-cell text."""
    settings = Settings(_env_file=None)
    pages = model_reading.read_layers(model_reading.EXAMPLES, settings)
    tallies = model_reading.measure(pages, settings)
    before, after = tallies["before"], tallies["after"]
    assert after.wanted >= 20 and after.share("copy") == 1.0
    assert before.share("copy") < 0.5 and after.share("segment") > before.share("segment")
