"""A project's drawing register end to end, on the embedded servers with every service running
(one stack for the module, three uploads of a three-sheet set cut from a real one): the set,
then a copy edited with PyMuPDF (a note's number changed, a revision mark changed, a sheet
renumbered), then that copy again. The register holds two versions of each edited sheet,
each delta lists exactly the edit, the overlay is drawn, subscribers hear sheet.revised, the
same file again is re-issued unchanged, the renumbered sheet is proposed, never merged nor
taken for a new one; the API serves the register and report.html shows the changes."""

import asyncio
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from shared.contracts import subjects
from shared.contracts.register import Register
from shared.infra.jobs import KvStateStore
from shared.infra.register_store import read_register
from shared.infra.settings import Settings
from shared.infra.storage import ObjectStore
from sheetflow.cli import commands
from sheetflow.registers import keep_project, keep_projects, project_dir, restore_projects
from sheetflow.runtime import EmbeddedServers, free_port
from sheetflow.services import SERVICES
from tests.support.buckets import remove_bucket
from tests.support.corpus import needs_corpus
from tests.support.fakes import MemoryStateStore
from tests.support.revisions import edited, pages_of, with_wall
from tests.support.stack import Stack, nats_client, stack, stream_messages

pytestmark = [pytest.mark.slow, needs_corpus]

PROJECT = "star-of-the-sea"
SET = ("sots__StarOfTheSea_structural_test_file2.pdf", [4, 5, 10])  # S101, S301, S701
EDITS = [
    (1, "1.5m", "1.2m", None),  # a note's number: "... LESS THAN 1.5m IN HEIGHT ..."
    (2, "C", "D", (1594.0, 1123.0)),  # the title block's revision mark
    (3, "S701", "S709", None),  # the sheet renumbered, nothing else
]
# The fourth upload is the second with a wall drawn on S301 (PDF points), no word changed.
WALL = (700.0, 560.0)


@dataclass
class Revisions:
    stack: Stack
    settings: Settings
    jobs: list[str]
    reports: list[dict]

    def get(self, path: str, **params) -> httpx.Response:
        return httpx.get(f"{self.stack.api}/v1/projects/{PROJECT}{path}", params=params, timeout=60)


@pytest.fixture(scope="module")
def revisions(
    servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Revisions]:
    tag = uuid.uuid4().hex[:10]
    settings = servers.settings.model_copy(
        update={
            "namespace": f"rg{tag}",
            "s3_bucket": f"rg-{tag}",
            "data_dir": Path(tmp_path_factory.mktemp("register")),
            "api_port": free_port(),
            "ack_wait_s": 10.0,
            "retry_backoff_s": 0.2,
            "retry_backoff_max_s": 2.0,
        }
    )
    first = pages_of(*SET)
    second = edited(first, EDITS)
    drawn, _ = with_wall(second, 2, WALL)
    uploads = ((first, "options"), (second, "route"), (second, "route"), (drawn, "options"))
    with stack(settings, *SERVICES) as s:
        jobs: list[str] = []
        reports: list[dict] = []
        # One after another: each upload is matched against the register the one before left.
        for n, (pdf, how) in enumerate(uploads):
            if how == "options":
                job = s.submit(pdf, name=f"issue-{n}.pdf", options={"project": PROJECT})
            else:
                r = httpx.post(
                    f"{s.api}/v1/projects/{PROJECT}/jobs",
                    files={"file": (f"issue-{n}.pdf", pdf, "application/pdf")},
                    timeout=60,
                )
                assert r.status_code == 202, r.text
                job = r.json()["job_id"]
            jobs.append(job)
            reports.append(s.wait_report(job, timeout=240))
        yield Revisions(s, settings, jobs, reports)
    remove_bucket(settings)


def outcomes(report: dict) -> dict[str, dict]:
    return {s["sheet_number"]: s for s in report["changes"]["sheets"]}


def test_the_first_upload_makes_version_1_of_each_sheet(revisions):
    changes = revisions.reports[0]["changes"]
    assert changes["project"] == PROJECT and changes["sequence"] == 1
    assert {
        n: (s["outcome"], s["to_version"]) for n, s in outcomes(revisions.reports[0]).items()
    } == {
        "S101": ("added", 1),
        "S301": ("added", 1),
        "S701": ("added", 1),
    }


def test_each_edited_sheet_has_a_second_version_whose_delta_is_exactly_the_edit(revisions):
    second = outcomes(revisions.reports[1])
    note, mark = second["S101"], second["S301"]
    for sheet in (note, mark):
        assert (sheet["outcome"], sheet["from_version"], sheet["to_version"]) == ("revised", 1, 2)
        assert sheet["overlay_key"] and sheet["delta_key"]
    one_unit = {"added": 0, "removed": 0, "changed": 1, "regions": 0}
    assert note["changes"] == one_unit and not note["title_block_only"]
    assert mark["changes"] == one_unit and mark["title_block_only"]
    assert (mark["from_revision"], mark["to_revision"]) == ("C", "D")

    delta = revisions.get("/sheets/S101/delta", **{"from": 1, "to": 2})
    assert delta.status_code == 200, delta.text
    [change] = delta.json()["changes"]
    assert change["kind"] == "changed"
    assert "1.5m" in change["before"] and "1.2m" in change["after"]
    assert change["before"].replace("1.5m", "1.2m") == change["after"]  # nothing else on the sheet
    [change] = revisions.get("/sheets/S-301/delta", **{"from": 1, "to": 2}).json()["changes"]
    assert change["before"].replace(" C", " D") == change["after"]

    overlay = revisions.get("/sheets/S101/overlay.png", **{"from": 1, "to": 2})
    assert overlay.status_code == 200 and overlay.content.startswith(b"\x89PNG")

    versions = revisions.get("/sheets/S101/versions").json()
    assert [(v["version"], v["job_id"]) for v in versions] == [
        (1, revisions.jobs[0]),
        (2, revisions.jobs[1]),
    ]
    assert versions[1]["delta_key"] == note["delta_key"]


def test_subscribers_hear_each_revised_sheet_and_each_register_update(revisions):
    revised = asyncio.run(stream_messages(revisions.settings, subjects.SHEET_REVISED, expect=3))
    heard = [(e["job_id"], e["sheet_number"], e["from_version"], e["to_version"]) for e in revised]
    assert sorted(heard[:2]) == [
        (revisions.jobs[1], "S101", 1, 2),
        (revisions.jobs[1], "S301", 1, 2),
    ]
    assert heard[2] == (revisions.jobs[3], "S301", 2, 3)
    assert all(e["project"] == PROJECT for e in revised)
    counts = {(e["job_id"], e["sheet_number"]): (e["changed"], e["regions"]) for e in revised}
    assert counts == {
        (revisions.jobs[1], "S101"): (1, 0),
        (revisions.jobs[1], "S301"): (1, 0),
        (revisions.jobs[3], "S301"): (0, 1),  # the wall: the drawing alone
    }
    updated = asyncio.run(stream_messages(revisions.settings, subjects.REGISTER_UPDATED, expect=4))
    assert [e["job_id"] for e in updated] == revisions.jobs
    assert [
        (e["added"], e["revised"], e["reissued_unchanged"], e["proposed"]) for e in updated
    ] == [
        (3, 0, 0, 0),
        (0, 2, 0, 1),
        (0, 0, 3, 0),
        (0, 1, 2, 0),
    ]


def test_the_same_file_again_is_reissued_unchanged(revisions):
    third = outcomes(revisions.reports[2])
    assert {n: (s["outcome"], s["to_version"]) for n, s in third.items()} == {
        "S101": ("reissued", 2),
        "S301": ("reissued", 2),
        "S709": ("reissued", 1),
    }


def test_a_linework_only_revision_is_a_new_version_with_its_changed_region(revisions):
    """The fourth upload adds a wall to S301 and changes no word: S301 gets a third version
    whose delta lists the one region where the wall is (and no text unit), boxed in the
    overlay and shown in report.html; the other sheets are re-issued unchanged."""
    fourth = outcomes(revisions.reports[3])
    assert {n: s["outcome"] for n, s in fourth.items()} == {
        "S101": "reissued",
        "S301": "revised",
        "S709": "reissued",
    }
    wall = fourth["S301"]
    assert (wall["from_version"], wall["to_version"]) == (2, 3) and not wall["title_block_only"]
    assert wall["changes"] == {"added": 0, "removed": 0, "changed": 0, "regions": 1}
    delta = revisions.get("/sheets/S301/delta", **{"from": 2, "to": 3}).json()
    assert delta["changes"] == []
    [region] = delta["graphics"]
    x0, y0, x1, y1 = region["after_bbox"]
    assert region["kind"] == "added" and not region["title_block"]
    assert x0 < WALL[0] + 160 and x1 > WALL[0] and y0 < WALL[1] + 6 and y1 > WALL[1]
    assert (x1 - x0) >= 150 and region["share"] < 0.01
    overlay = revisions.get("/sheets/S301/overlay.png", **{"from": 2, "to": 3})
    assert overlay.status_code == 200 and overlay.content.startswith(b"\x89PNG")
    html = httpx.get(
        f"{revisions.stack.api}/v1/jobs/{revisions.jobs[3]}/report.html", timeout=30
    ).text
    section = html.split('id="change-S301"', 1)[1]
    assert 'id="regions-S301"' in section and "linework added" in section
    assert "1 changed region" in section


def test_a_renumbered_sheet_is_proposed_never_merged_nor_taken_for_new(revisions):
    renumbered = outcomes(revisions.reports[1])["S709"]
    assert renumbered["outcome"] == "proposed"
    assert renumbered["proposed_match"]["matches_number"] == "S701"
    register = revisions.get("/sheets").json()
    sheets = {s["sheet_number"]: s for s in register["sheets"]}
    assert set(sheets) == {"S101", "S301", "S701", "S709"}
    assert sheets["S701"]["versions"] == 1 and sheets["S701"]["proposed_match"] is None
    assert sheets["S709"]["proposed_match"]["matches_number"] == "S701"
    assert [p["sheet_number"] for p in register["proposals"]] == ["S709"]
    assert revisions.reports[1]["changes"]["carried"] == ["S701"]  # still current


def test_report_html_shows_the_changes_and_the_api_refuses_what_it_lacks(revisions):
    html = httpx.get(
        f"{revisions.stack.api}/v1/jobs/{revisions.jobs[1]}/report.html", timeout=30
    ).text
    assert 'id="changes"' in html and 'id="change-S101"' in html and "1.2m" in html
    assert "data:image/png;base64," in html.split('id="change-S101"', 1)[1]
    assert (
        httpx.get(f"{revisions.stack.api}/v1/projects/nobody/sheets").json()["error"]
        == "no_such_project"
    )
    assert revisions.get("/sheets/Z999/versions").json()["error"] == "no_such_sheet"
    assert (
        revisions.get("/sheets/S101/delta", **{"from": 1, "to": 3}).json()["error"]
        == "no_such_version"
    )


def test_the_register_kept_in_the_data_dir_serves_a_new_stack(revisions, tmp_path):
    """What `sheetflow run` does around a project's job: the register copied out of the S3
    the run is about to remove, into the data dir, and into the next run's fresh S3 (whose
    job state has no head for it) gives the same register."""
    kept = keep_project(revisions.settings, tmp_path, PROJECT)
    assert kept and (project_dir(tmp_path, PROJECT) / "register").is_dir()
    # What `sheetflow up` keeps when it stops: every project its S3 holds (this one here).
    assert keep_projects(revisions.settings, tmp_path / "up") == kept
    fresh = revisions.settings.model_copy(
        update={"s3_bucket": f"{revisions.settings.s3_bucket}-next"}
    )
    try:
        assert restore_projects(fresh, tmp_path) == kept
        original = asyncio.run(register_of(revisions.settings))
        restored, head = asyncio.run(read_register(ObjectStore(fresh), MemoryStateStore(), PROJECT))
        assert restored == original and restored.sequence == 4 and head is None
    finally:
        remove_bucket(fresh)


async def register_of(settings: Settings) -> Register:
    """The project's register as the stack's own job state store names it."""
    async with nats_client(settings) as nc:
        kv = await nc.jetstream().key_value(settings.kv_bucket)
        register, head = await read_register(
            ObjectStore(settings), KvStateStore(kv, nc, settings.kv_bucket), PROJECT
        )
    assert head is not None
    return register


def until(revisions: Revisions, path: str, done, timeout: float = 60.0):
    """GET the project's ``path`` until ``done`` holds for its JSON; that JSON."""
    deadline = time.monotonic() + timeout
    while True:
        body = revisions.get(path).json()
        if done(body) or time.monotonic() > deadline:
            return body
        time.sleep(0.3)


def test_a_review_moves_sheets_in_the_register(revisions):
    """Last in the module (it changes the register the tests above read): a fifth upload
    renumbers S301 as S309 (a second proposal); the reviewer accepts S709 as S701 over the API
    and rejects S309 as S301 with the CLI, and corrects S101 of the second upload to S105.
    The register moves S701's version under S709 (its second version, diffed and announced),
    keeps S301 and S309 apart, moves S101's two versions under S105 (announced again); the
    project's review records say each decision and move, and the second upload's report
    names S105."""
    renumbered = edited(pages_of(SET[0], [SET[1][1]]), [(1, "S301", "S309", None)])
    fourth = revisions.stack.submit(renumbered, name="issue-4.pdf", options={"project": PROJECT})
    revisions.stack.wait_report(fourth, timeout=240)
    proposals = {p["proposal_id"]: p for p in revisions.get("/proposals").json()}
    assert {k: p["status"] for k, p in proposals.items()} == {
        "S709--S701": "proposed",
        "S309--S301": "proposed",
    }

    api = f"{revisions.stack.api}/v1/projects/{PROJECT}/proposals"
    accept = {"decision": "accepted", "reason": "renumbered, the same framing details"}
    r = httpx.post(f"{api}/S709--S701", json=accept, timeout=30)
    assert r.status_code == 201, r.text
    accepted = r.json()
    again = httpx.post(f"{api}/S709--S701", json=accept, timeout=30)
    assert again.status_code == 200 and again.json() == accepted
    other = httpx.post(
        f"{api}/S709--S701", json={"decision": "rejected", "reason": "not the same"}, timeout=30
    )
    assert other.status_code == 409 and other.json()["error"] == "already_decided"
    missing = httpx.post(f"{api}/S1--S2", json=accept, timeout=30)
    assert missing.status_code == 404 and missing.json()["error"] == "no_such_proposal"

    runner = CliRunner()
    cli = ["--api", revisions.stack.api]
    result = runner.invoke(
        commands.app, ["decide", PROJECT, "S309--S301", "reject", "--reason", "two sections", *cli]
    )
    assert result.exit_code == 0, result.output
    assert "rejected" in result.output

    fix = {"sheet_number": "S105", "reason": "the addendum renumbered the foundation plan"}
    r = httpx.post(
        f"{revisions.stack.api}/v1/jobs/{revisions.jobs[1]}/pages/1/sheet", json=fix, timeout=30
    )
    assert r.status_code == 201, r.text

    def settled(body: dict) -> bool:
        numbers = {s["sheet_number"] for s in body["sheets"]}
        return "S105" in numbers and "S701" not in numbers

    register = until(revisions, "/sheets", settled)
    sheets = {s["sheet_number"]: s for s in register["sheets"]}
    assert set(sheets) == {"S105", "S301", "S309", "S709"}
    assert (sheets["S709"]["versions"], sheets["S105"]["versions"]) == (2, 2)
    assert sheets["S301"]["versions"] == 3 and sheets["S309"]["versions"] == 1
    versions = revisions.get("/sheets/S709/versions").json()
    assert [(v["job_id"], v["sheet_number"]) for v in versions] == [
        (revisions.jobs[0], "S701"),
        (revisions.jobs[1], "S709"),
    ]
    assert versions[1]["delta_key"] and versions[1]["overlay_key"]
    [change] = revisions.get("/sheets/S709/delta", **{"from": 1, "to": 2}).json()["changes"]
    assert change["before"].replace("S701", "S709") == change["after"]  # the number, nothing else
    decided = {p["proposal_id"]: p for p in revisions.get("/proposals").json()}
    assert (decided["S709--S701"]["status"], decided["S309--S301"]["status"]) == (
        "accepted",
        "rejected",
    )
    listed = runner.invoke(commands.app, ["proposals", PROJECT, *cli])
    assert listed.exit_code == 0 and "S309--S301" in listed.output and "rejected" in listed.output

    records = until(revisions, "/review", lambda body: len(body) >= 4)
    assert sorted((r["kind"], r.get("decision") or r.get("cause")) for r in records) == [
        ("moved", "correction"),
        ("moved", "proposal"),
        ("proposal", "accepted"),
        ("proposal", "rejected"),
    ]
    moves = {r["cause"]: r for r in records if r["kind"] == "moved"}
    assert (moves["proposal"]["from_key"], moves["proposal"]["to_key"]) == ("S701", "S709")
    assert (moves["correction"]["from_key"], moves["correction"]["to_key"]) == ("S101", "S105")

    revised = asyncio.run(stream_messages(revisions.settings, subjects.SHEET_REVISED, expect=5))
    assert sorted((e["sheet_number"], e["from_version"], e["to_version"]) for e in revised) == [
        ("S101", 1, 2),
        ("S105", 1, 2),
        ("S301", 1, 2),
        ("S301", 2, 3),
        ("S709", 1, 2),
    ]
    updated = asyncio.run(stream_messages(revisions.settings, subjects.REGISTER_UPDATED, expect=8))
    reviews = [e for e in updated if e["record_id"]]
    assert sorted(e["moved"] for e in reviews) == [0, 1, 1]
    report = revisions.stack.wait_report(revisions.jobs[1])
    deadline = time.monotonic() + 60
    while report["revision"] < 2 and time.monotonic() < deadline:
        time.sleep(0.3)
        report = revisions.stack.wait_report(revisions.jobs[1])
    assert outcomes(report)["S105"]["from_version"] == 1
