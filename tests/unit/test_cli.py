"""The `sheetflow` command line: its commands, its error messages and its summary."""

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pymupdf
import pytest
from typer.testing import CliRunner

from services.report.assemble import FailedPage, JobInfo, PageOutcome, build_report
from shared.contracts.models import CheckedShare, Coverage, HiddenText, PageVerdict, VerifiedPage
from shared.contracts.register import ProposedMatch, RegisterOutcome, SheetOutcome, UnitCounts
from shared.contracts.report import Report
from shared.infra.settings import Settings
from shared.sheet.header import SheetHeader
from sheetflow import cli
from sheetflow.cli import client as cli_client
from sheetflow.cli import commands, events, health, present
from sheetflow.endpoints import Endpoints, write_endpoints

runner = CliRunner()


def report(pages: Sequence[PageOutcome], *, canceled: bool = False) -> Report:
    """A report.json as the report service builds it."""
    job = JobInfo(
        job_id="j_" + "0" * 32,
        file_name="set.pdf",
        page_count=len(pages),
        created_at=datetime(2026, 5, 29, tzinfo=UTC),
        canceled=canceled,
    )
    return build_report(job, pages, finished_at=datetime(2026, 5, 29, 0, 1, tzinfo=UTC))


def verified_page(n: int, **verification) -> VerifiedPage:
    coverage = Coverage(total_lines=10, covered_lines=9, ratio=0.9)
    return VerifiedPage(
        job_id="j_" + "0" * 32,
        page_number=n,
        has_text_layer=True,
        sheet=SheetHeader(
            sheet_number=f"A10{n}", sheet_title="FLOOR PLAN", discipline="architectural"
        ),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=PageVerdict(**({"ok": True} | verification)),
    )


def failed_page(n: int) -> FailedPage:
    return FailedPage(page_number=n, stage="extract", reason="RuntimeError: boom")


def test_help_lists_every_command():
    """`sheetflow --help` names the user-facing commands."""
    result = runner.invoke(cli.app, ["--help"])
    assert result.exit_code == 0
    for command in ("up", "run", "submit", "events", "asyncapi", "worker"):
        assert command in result.output


@pytest.mark.parametrize(
    "command", [[], ["up"], ["run"], ["submit"], ["events"], ["worker"], ["report-schema"]]
)
def test_help_reads_at_80_columns_without_type_labels_on_flags(command):
    """Every command's --help fits 80 columns and names no stray "<bool>" label."""
    result = runner.invoke(cli.app, [*command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0 and "Usage:" in result.output
    assert "<bool>" not in result.output
    assert max(map(len, result.output.splitlines())) <= 80


def test_run_on_a_missing_file_exits_1_with_a_message(tmp_path, monkeypatch):
    """`run` on a file that does not exist says so and exits 1, before starting anything."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli.app, ["run", "nope.pdf"])
    assert result.exit_code == 1
    assert "no such file: nope.pdf" in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == [], "nothing is started or written"


def test_asyncapi_writes_the_document(tmp_path):
    """`asyncapi --out FILE` writes a JSON AsyncAPI document with the report.ready channel."""
    out = tmp_path / "docs" / "asyncapi.json"
    result = runner.invoke(cli.app, ["asyncapi", "--out", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert "asyncapi" in document and "channels" in document
    assert "report.ready" in out.read_text()


def test_worker_refuses_an_unknown_service():
    """`worker` names the services it knows when given another one."""
    result = runner.invoke(cli.app, ["worker", "bogus"])
    assert result.exit_code == 1
    assert "ingest, extract, coverage, verify, report" in result.output


def test_worker_concurrency_is_for_extract_only():
    """`--concurrency` on a service other than extract is refused."""
    result = runner.invoke(cli.app, ["worker", "verify", "--concurrency", "3"])
    assert result.exit_code == 1
    assert "extract" in result.output


def test_events_without_nats_says_how_to_point_it(monkeypatch, tmp_path):
    """`events` with no NATS configured asks for --nats instead of failing obscurely."""
    monkeypatch.delenv("SHEETFLOW_NATS_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    result = runner.invoke(cli.app, ["events"])
    assert result.exit_code == 1
    assert "--nats" in result.output


def test_submit_reports_the_apis_rejection(tmp_path):
    """A rejected upload becomes a message carrying the API's status and JSON detail."""
    pdf = tmp_path / "set.pdf"
    pdf.write_bytes(b"not a pdf at all")

    def api(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == "Bearer t0ken"
        return httpx.Response(415, json={"error": "not_a_pdf", "detail": "The file is not a PDF."})

    client = cli_client.api_client("http://api", "t0ken", transport=httpx.MockTransport(api))
    with pytest.raises(present.CliError) as caught:
        cli_client.submit_file(client, pdf)
    message = str(caught.value)
    assert "HTTP 415" in message and "The file is not a PDF. (not_a_pdf)" in message
    assert "t0ken" not in message


def test_a_refused_token_says_how_to_give_one(tmp_path):
    """A 401 names both ways to give the API's token: --token and SHEETFLOW_API_TOKEN."""
    pdf = tmp_path / "set.pdf"
    pdf.write_bytes(b"%PDF-1.4")

    def api(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": "unauthorized", "detail": "A token is needed."})

    client = cli_client.api_client("http://api", None, transport=httpx.MockTransport(api))
    with pytest.raises(present.CliError) as caught:
        cli_client.submit_file(client, pdf)
    message = str(caught.value)
    assert "HTTP 401" in message and "A token is needed. (unauthorized)" in message
    assert "--token" in message and "SHEETFLOW_API_TOKEN" in message


def test_submit_uploads_the_file_as_multipart(tmp_path):
    """The upload is a multipart `file` field holding the PDF's bytes under its name."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "A101 FLOOR PLAN", fontsize=12)
    pdf = tmp_path / "plans.pdf"
    pdf.write_bytes(doc.tobytes())
    seen: dict[str, bytes] = {}

    def api(request: httpx.Request) -> httpx.Response:
        seen["body"] = request.read()
        return httpx.Response(202, json={"job_id": "j_1", "status_url": "s", "report_url": "r"})

    client = httpx.Client(base_url="http://api", transport=httpx.MockTransport(api))
    assert cli_client.submit_file(client, pdf)["job_id"] == "j_1"
    assert b'name="file"; filename="plans.pdf"' in seen["body"]
    assert pdf.read_bytes() in seen["body"]


def test_stage_counts_include_pages_further_along():
    """A verified page counts as extracted and covered too; failed pages are apart."""
    pages = {"queued": 1, "extracted": 2, "covered": 3, "verified": 4, "failed": 1, "skipped": 0}
    counts = cli_client.stage_counts(pages)
    assert counts == {"extracted": 9, "covered": 7, "verified": 4, "failed": 1}


def test_follow_job_returns_when_finished_and_says_stalled(capsys):
    """Following a job polls until its status is final, says when it is stalled (once) and
    when it moves again."""
    stalled = {
        "status": "running",
        "page_count": 2,
        "pages": {"queued": 2},
        "stalled": True,
        "detail": "No page has moved",
    }
    statuses = iter(
        [
            stalled,
            stalled,
            {"status": "running", "page_count": 2, "pages": {"queued": 2}, "stalled": False},
            {"status": "complete", "page_count": 2, "pages": {"verified": 2}, "stalled": False},
        ]
    )

    def api(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=next(statuses))

    client = httpx.Client(base_url="http://api", transport=httpx.MockTransport(api))
    final = cli_client.follow_job(client, "j_1", timeout=10)
    assert final["status"] == "complete"
    err = capsys.readouterr().err
    assert err.count("job stalled") == 1 and "moving again" in err


def test_follow_job_times_out_with_a_message():
    """A job that never finishes ends in a CliError naming the job and its counts."""

    def api(request: httpx.Request) -> httpx.Response:
        body = {"status": "running", "page_count": 1, "pages": {"queued": 1}}
        return httpx.Response(200, json=body)

    client = httpx.Client(base_url="http://api", transport=httpx.MockTransport(api))
    with pytest.raises(present.CliError, match=r"j_1 did not finish within 1s \(queued 1\)"):
        cli_client.follow_job(client, "j_1", timeout=1)


def test_fetch_reports_waits_for_the_report_and_writes_both_files(tmp_path):
    """404 while the report is being written is waited out; the reports and the sheet log
    land in the out dir."""
    calls = {"n": 0}

    def api(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return httpx.Response(404, json={"error": "report_not_ready", "detail": "not yet"})
        if request.url.path.endswith("report.html"):
            return httpx.Response(200, text="<html>report</html>")
        if request.url.path.endswith("sheets.csv"):
            return httpx.Response(200, text="page,sheet_number\r\n")
        if request.url.path.endswith("set.pdf"):
            return httpx.Response(200, content=b"%PDF-1.7 linked")
        return httpx.Response(200, json={"job_id": "j_1", "pages": []})

    client = httpx.Client(base_url="http://api", transport=httpx.MockTransport(api))
    parsed = cli_client.fetch_reports(client, "j_1", tmp_path / "out")
    assert parsed == {"job_id": "j_1", "pages": []}
    assert (tmp_path / "out" / "report.html").read_text() == "<html>report</html>"
    assert json.loads((tmp_path / "out" / "report.json").read_text())["job_id"] == "j_1"
    assert (tmp_path / "out" / "sheets.csv").read_text().startswith("page,sheet_number")
    assert (tmp_path / "out" / "set.pdf").read_bytes() == b"%PDF-1.7 linked"


def test_conclude_complete_exits_0_with_the_sheet_table(tmp_path, capsys):
    """A complete job prints its sheets and exits 0."""
    pages = [verified_page(1), verified_page(2, ok=False, kinds=["content_wrong"])]
    code = present.conclude(report(pages), tmp_path)
    out = capsys.readouterr().out
    assert code == 0
    assert "A101" in out and "A102" in out and "content_wrong" in out and "0.90" in out


def test_conclude_names_failed_pages_and_exits_2(tmp_path, capsys):
    """A job with a failed page exits 2 and names the page, its stage and reason."""
    pages: list[PageOutcome] = [verified_page(1), failed_page(2)]
    code = present.conclude(report(pages), tmp_path)
    captured = capsys.readouterr()
    assert code == 2
    assert "page 2 (extract): RuntimeError: boom" in captured.err
    assert "FAILED" in captured.out


def test_conclude_canceled_exits_1(tmp_path, capsys):
    """A canceled job is an error for the command that waited on it."""
    assert present.conclude(report([verified_page(1)], canceled=True), tmp_path) == 1
    assert "canceled" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("verification", "expected"),
    [
        ({"ok": True}, "ok"),
        ({"ok": True, "unjudged": True}, "unjudged"),
        ({"ok": True, "unjudged": True, "skipped": "blank"}, "skipped (blank)"),
        ({"ok": False, "kinds": ["content_wrong", "unsupported"]}, "content_wrong, unsupported"),
    ],
)
def test_verdict_text(verification, expected):
    """The verdict column never shows an unjudged page as ok."""
    [page] = report([verified_page(1, **verification)]).pages
    assert present.verdict_text(page) == expected


def test_coverage_text_names_a_scans_ocr_words():
    """A text page shows its ratio; a scan shows the ratio over the lines OCR read, marked
    OCR; a scan OCR read nothing on shows none."""
    ocr = Coverage(total_lines=124, covered_lines=123, ratio=0.9919)
    empty = Coverage(total_lines=0, covered_lines=0, ratio=0.0)
    scan = verified_page(2).model_copy(
        update={"has_text_layer": False, "coverage": ocr, "coverage_before": ocr}
    )
    unread = verified_page(3).model_copy(
        update={"has_text_layer": False, "coverage": empty, "coverage_before": empty}
    )
    pages = report([verified_page(1), scan, unread]).pages
    assert [present.coverage_text(p) for p in pages] == [
        "0.90 (9/10)",
        "0.99 (123/124 OCR)",
        "- (no text layer)",
    ]


def test_summary_lines_state_the_verdict_arithmetic_and_the_guard():
    """The summary says verified = passed + with problems + unjudged, the problem rate, and
    the guard's four counts."""
    pages = [
        verified_page(1),
        verified_page(2, ok=False, problems=["p"], kinds=["content_wrong"]),
        verified_page(3, unjudged=True),
    ]
    lines = present.summary_lines(report(pages))
    assert "verified 3 = passed 1 + with problems 1 + unjudged 1 (skipped blank 0)" in lines[2]
    assert "problem rate 50%" in lines[2]
    assert lines[2].endswith("; checked 0 of 0 objects")
    assert lines[3] == "guard: kept 0, rescued 0, vision unverified 0, dropped 0"
    # Nothing self-read, no hidden text: only the unjudged page, named with why.
    assert lines[4:] == ["unjudged: page 3: nothing gave a definite verdict"]


def test_summary_says_when_nothing_independent_read_a_page_and_names_hidden_text():
    """A default run whose pages only their own words speak for says so, beside the counts;
    pages whose text layer holds text they do not show are named."""
    hidden = HiddenText(count=1, kinds={"invisible": 1}, sample="Z-999")
    pages = [
        verified_page(1, unjudged=True, self_read=True, reason="own"),
        verified_page(2).model_copy(update={"hidden_text": hidden}),
    ]
    lines = present.summary_lines(report(pages))
    assert "passed 1 + with problems 0 + unjudged 1" in lines[2]
    assert lines[4].startswith("not judged: 1 page, whose objects are the page's own text")
    assert "nothing independent read it" in lines[4]
    assert lines[5] == "hidden text (not shown on the page, never read as its text): pages 2"


def test_report_schema_command_writes_the_schema(tmp_path):
    """`report-schema --out FILE` writes the JSON Schema of report.json, whose summary fields
    carry their definitions."""
    out = tmp_path / "report.schema.json"
    result = runner.invoke(cli.app, ["report-schema", "--out", str(out)])
    assert result.exit_code == 0, result.output
    schema = json.loads(out.read_text())
    assert schema["title"] == "Report"
    verification = schema["$defs"]["VerificationSummary"]["properties"]
    assert (
        "verify_failed / (pages_verified - pages_unjudged)"
        in (verification["problem_rate"]["description"])
    )


def test_a_report_of_another_shape_is_a_clear_error(tmp_path):
    """A report.json that does not match this version's schema is one message, exit 1."""

    def api(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/report"):
            return httpx.Response(200, json={"job_id": "j_1", "pages": []})
        if request.url.path.endswith("report.html"):
            return httpx.Response(200, text="<html></html>")
        return httpx.Response(200, json={"status": "complete", "page_count": 0, "pages": {}})

    client = httpx.Client(base_url="http://api", transport=httpx.MockTransport(api))
    with pytest.raises(present.CliError, match="does not match this sheetflow's report schema"):
        cli_client.wait_and_report(client, "j_1", tmp_path / "out", timeout=5)


def test_full_subject_prefixes_the_namespace_once():
    """`report.ready` and `sheetflow.report.ready` both mean the full subject."""
    assert events.full_subject("sheetflow", "report.ready") == "sheetflow.report.ready"
    assert events.full_subject("sheetflow", "sheetflow.report.ready") == "sheetflow.report.ready"


def test_event_line_is_one_json_line():
    """An event prints as one line of JSON with its subject and parsed payload."""
    line = events.event_line("sheetflow.report.ready", b'{"job_id": "j_1"}\n')
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["subject"] == "sheetflow.report.ready" and parsed["data"] == {"job_id": "j_1"}
    assert json.loads(events.event_line("x", b"\xff not json"))["data"].endswith("not json")


def test_healthcheck_matches_the_workers_own_connection():
    """A worker is healthy only while NATS lists its named connection from its own address."""
    connz = {
        "connections": [
            {"name": "sheetflow-extract", "ip": "10.0.0.5"},
            {"name": "sheetflow-verify", "ip": "10.0.0.6"},
        ]
    }
    assert health.has_connection(connz, "sheetflow-extract", "10.0.0.5")
    assert not health.has_connection(connz, "sheetflow-extract", "10.0.0.6")
    assert not health.has_connection({"connections": None}, "sheetflow-extract", "10.0.0.5")


def test_nats_options_carry_credentials_without_printing_them():
    """Configured NATS credentials become nats-py connect options."""
    settings = Settings(_env_file=None, nats_user="svc", nats_password="pw", nats_token=None)
    assert events.nats_options(settings) == {"user": "svc", "password": "pw"}
    assert events.nats_options(Settings(_env_file=None)) == {}


def test_bad_configuration_is_one_message_naming_the_variable(monkeypatch, tmp_path):
    """An invalid SHEETFLOW_ variable is reported by name, without a traceback."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHEETFLOW_API_PORT", "not-a-port")
    result = runner.invoke(cli.app, ["asyncapi"])
    assert result.exit_code == 1
    assert "invalid configuration SHEETFLOW_API_PORT" in result.output
    assert "Traceback" not in result.output


def test_a_canceled_page_reads_canceled_in_the_table():
    """A page a canceled job never extracted is not shown as FAILED."""
    reason = "the job was canceled before this page was extracted"
    canceled = FailedPage(page_number=2, stage="canceled", reason=reason)
    pages = report([verified_page(1), canceled, failed_page(3)], canceled=True).pages
    assert [present.verdict_text(p) for p in pages] == ["ok", "canceled", "FAILED"]


def test_submit_to_a_project_posts_to_its_route(tmp_path):
    pdf = tmp_path / "plans.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    seen: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(202, json={"job_id": "j_1", "status_url": "s", "report_url": "r"})

    client = httpx.Client(base_url="http://api", transport=httpx.MockTransport(api))
    cli_client.submit_file(client, pdf, "tower-b")
    assert seen == ["/v1/projects/tower-b/jobs"]


def test_run_and_submit_refuse_a_bad_project_id_before_anything_starts(tmp_path):
    pdf = tmp_path / "plans.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    for command in ("run", "submit"):
        result = runner.invoke(cli.app, [command, str(pdf), "--project", "no.dots"])
        assert result.exit_code == 1, result.output
        assert "not a project id" in result.output


def test_conclude_prints_each_sheets_change_in_its_project(tmp_path, capsys):
    """A job of a project: the table's change column and the register's counts."""
    pages = [verified_page(1), verified_page(2), verified_page(3)]
    changes = RegisterOutcome(
        project="tower-b",
        job_id="j_" + "0" * 32,
        sequence=2,
        register_key="k",
        sheets=[
            SheetOutcome(
                sheet_key="A101",
                sheet_number="A101",
                page_number=1,
                outcome="revised",
                from_version=1,
                to_version=2,
                changes=UnitCounts(added=1, changed=2),
            ),
            SheetOutcome(
                sheet_key="A102",
                sheet_number="A102",
                page_number=2,
                outcome="reissued",
                from_version=3,
                to_version=3,
            ),
            SheetOutcome(
                sheet_key="A103",
                sheet_number="A103",
                page_number=3,
                outcome="proposed",
                to_version=1,
                proposed_match=ProposedMatch(
                    sheet_key="A103",
                    sheet_number="A103",
                    matches_key="A109",
                    matches_number="A109",
                    similarity=0.98,
                    job_id="j_1",
                ),
            ),
        ],
        carried=["A200"],
    )
    done = report(pages).model_copy(update={"changes": changes})
    assert present.conclude(done, tmp_path) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "change" in out.split("┃ page", 1)[1].split("┡", 1)[0]  # the table's last column
    texts = [present.change_text(s) for s in changes.sheets]
    assert texts == [
        "v1 -> v2 (+1 -0 ~2)",
        "v3 re-issued unchanged",
        "new v1; same drawing as A109? (proposed)",
    ]
    assert "project tower-b (upload 2): revised 1, new 0, re-issued unchanged 1" in out
    assert "still current: A200" in out


def test_the_summary_names_each_unjudged_page_and_why():
    """A scan read by OCR is named as such; a text page says its own reason; a blank page
    is not named; past five pages the line says how many more."""
    scan = verified_page(2, unjudged=True, reason="no judge").model_copy(
        update={"has_text_layer": False}
    )
    pages = [
        verified_page(1, unjudged=True, reason="its objects are the page's own text"),
        scan,
        verified_page(3, unjudged=True, skipped="blank"),
        *[verified_page(n, unjudged=True) for n in range(4, 9)],
    ]
    [line] = [x for x in present.summary_lines(report(pages)) if x.startswith("unjudged:")]
    assert line.startswith(
        "unjudged: page 1: its objects are the page's own text; "
        "page 2 is a scan read by OCR; nothing independent read it; page 4:"
    )
    assert "page 3" not in line and line.endswith("; and 2 more (report.html names them)")


def test_a_passed_page_and_the_set_say_how_much_was_checked():
    """An ok page says how many of its objects a check read; the summary says it for the
    set, with the lines the OCR check read."""
    checked = CheckedShare(
        objects=31, checked=1, share_of_objects=0.03, share_of_text=0.05, ocr_lines=1
    )
    pages = [verified_page(1, checked=checked), verified_page(2, checked=checked)]
    built = report(pages)
    assert present.verdict_text(built.pages[0]) == "ok (1 of 31 checked)"
    assert present.summary_lines(built)[2].endswith(
        "; checked 2 of 62 objects (OCR check of 2 lines)"
    )


def test_submit_sends_the_uploads_issue_as_its_options(tmp_path):
    pdf = tmp_path / "plans.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    bodies: list[bytes] = []

    def api(request: httpx.Request) -> httpx.Response:
        bodies.append(request.read())
        return httpx.Response(202, json={"job_id": "j_1", "status_url": "s", "report_url": "r"})

    client = httpx.Client(base_url="http://api", transport=httpx.MockTransport(api))
    options = commands.issue_options("Addendum 2", "2026-03-14")
    cli_client.submit_file(client, pdf, "tower-b", options)
    assert b'name="options"' in bodies[0]
    assert b'{"issue": "Addendum 2", "issue_date": "2026-03-14"}' in bodies[0]
    result = runner.invoke(cli.app, ["submit", str(pdf), "--issue-date", "14/03/2026"])
    assert result.exit_code == 1 and "YYYY-MM-DD" in result.output


def one_page_pdf(tmp_path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "A-101 FLOOR PLAN", fontsize=12)
    path = tmp_path / "plans.pdf"
    doc.save(path)
    return path


def test_a_project_run_goes_to_the_up_running_from_its_data_dir(tmp_path, monkeypatch):
    """One register per data dir: with a `sheetflow up` running from it, `run --project`
    sends the file to that up rather than starting a stack of its own."""
    monkeypatch.chdir(tmp_path)
    pdf = one_page_pdf(tmp_path)
    up = Endpoints(
        pid=os.getpid(), api="http://127.0.0.1:9", nats_url="", s3_endpoint="", namespace="sf"
    )
    write_endpoints((tmp_path / ".sheetflow").resolve(), up)
    sent: list[tuple[str, str | None]] = []

    def submitted(client: httpx.Client, path, project=None, options=None):
        sent.append((str(client.base_url), project))
        return {"job_id": "j_1", "status_url": "s", "report_url": "r"}

    monkeypatch.setattr(commands, "submit_file", submitted)
    monkeypatch.setattr(commands, "wait_and_report", lambda *a, **k: (report([]), tmp_path))
    monkeypatch.setattr(commands, "conclude", lambda *a: 0)
    monkeypatch.setattr(commands, "supervised_stack", None)  # never started
    result = runner.invoke(cli.app, ["run", str(pdf), "--project", "tower-b"])
    assert result.exit_code == 0, result.output
    assert sent == [("http://127.0.0.1:9", "tower-b")]
    assert "sending plans.pdf to the `sheetflow up`" in result.output
