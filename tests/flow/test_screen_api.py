"""The screen's sessions, signed links and downloads against a real stack (every service, a
project with two uploads; shared with the browser tests): a session is a cookie the server
keeps and ends; every form needs its CSRF token; a reader is refused a correction; a signed
link opens without a token and nothing else does; the downloads are named by sheet, and the
linked set's outline, labels and links are the set's, and it passes intake."""

import asyncio
import io
import time
import zipfile
from pathlib import Path
from urllib.parse import unquote

import httpx
import pymupdf
import pytest

from services.ingest.roles import Caller
from services.ingest.sessions import COOKIE, find_session, open_session
from services.ingest.source import check_and_prepare
from shared.infra.jobs import KvStateStore
from tests.support.screen import EXAMPLE, ScreenStack, bearer, signed_in
from tests.support.stack import nats_client

pytestmark = pytest.mark.xdist_group("screen")


def page_of(report: dict, number: str) -> int:
    return next(p["page_number"] for p in report["pages"] if p["sheet"]["sheet_number"] == number)


def test_a_session_is_a_server_side_cookie_that_signing_out_ends(screen: ScreenStack):
    """The cookie is HttpOnly and SameSite=Strict and holds no token; it opens the screen and
    the API's reads; a wrong token gets no session; after signing out the same cookie is
    sent to sign in again."""
    client, csrf = signed_in(screen.api, "reader")
    cookie = next(c for c in client.cookies.jar if c.name == COOKIE)
    raw = client.get("/app/").request.headers["cookie"]
    assert cookie.value not in set(bearer("reader").values())
    assert "rita-read-token" not in raw
    signin = httpx.get(f"{screen.api}/app/signin")
    assert "HttpOnly" in signin.headers["set-cookie"]
    assert "SameSite=strict" in signin.headers["set-cookie"].replace("Strict", "strict")
    assert client.get(f"/v1/jobs/{screen.first}/report").status_code == 200
    # A write of the API is never opened by a cookie: it takes a token.
    fix = {"sheet_title": "X", "reason": "by cookie"}
    assert client.post(f"/v1/jobs/{screen.first}/pages/2/sheet", json=fix).status_code == 401
    assert client.post("/app/signout", data={"csrf": csrf}).status_code == 303
    again = client.get("/app/")
    assert again.status_code == 303 and again.headers["location"].startswith("/app/signin")
    assert client.get(f"/v1/jobs/{screen.first}/report").status_code == 401
    wrong = httpx.Client(base_url=screen.api)
    page = wrong.get("/app/signin")
    nonce = page.text.split('name="csrf" value="')[1].split('"')[0]
    r = wrong.post("/app/signin", data={"token": "not-a-token", "csrf": nonce})
    assert r.status_code == 401 and COOKIE not in r.headers.get("set-cookie", "")


def test_forms_need_the_csrf_token_and_the_role(screen: ScreenStack):
    """A form without the session's CSRF token is refused and changes nothing; a reader may
    not correct a sheet; the sign-in form needs its own token too."""
    reader, reader_csrf = signed_in(screen.api, "reader")
    reviewer, _ = signed_in(screen.api, "reviewer")
    path = f"/app/jobs/{screen.first}/pages/2/sheet"
    form = {"sheet_title": "FLOOR PLAN - FIRST FLOOR", "reason": "the index says so"}
    refused = reviewer.post(path, data={**form, "csrf": "forged"})
    assert refused.status_code == 403 and "csrf_refused" in refused.text
    assert reviewer.post(path, data=form).status_code == 403
    forbidden = reader.post(path, data={**form, "csrf": reader_csrf})
    assert forbidden.status_code == 403 and "reviewer" in forbidden.text
    review = httpx.get(
        f"{screen.api}/v1/jobs/{screen.first}/review", headers=bearer("reader")
    ).json()
    # The browser tests on this shared stack correct other sheets; none of this one's forms took.
    assert [r for r in review if r["page_number"] == 2] == []
    no_nonce = httpx.post(f"{screen.api}/app/signin", data={"token": "dana-rev-token-1"})
    assert no_nonce.status_code == 403


def test_an_expired_session_is_refused_and_removed(screen: ScreenStack):
    """A session past its expiry opens nothing, and its record is gone from the store."""

    async def expired() -> tuple[str, bool]:
        async with nats_client(screen.settings) as nc:
            kv = await nc.jetstream().key_value(screen.settings.kv_bucket)
            state = KvStateStore(kv, nc, screen.settings.kv_bucket)
            session_id, _ = await open_session(state, Caller("rita", "reader"), ttl_s=0.5)
            await asyncio.sleep(0.6)
            return session_id, await find_session(state, screen.settings, session_id) is None

    session_id, gone = asyncio.run(expired())
    assert gone
    client = httpx.Client(base_url=screen.api, cookies={COOKIE: session_id})
    assert client.get("/app/").status_code == 303
    assert client.get(f"/v1/jobs/{screen.first}/report").status_code == 401


def test_signed_links_open_without_a_token_until_they_expire(screen: ScreenStack):
    """A reader's signed link to the linked set downloads it without a token; the same
    signature on another path, tampered, or past its expiry is refused."""
    r = httpx.get(
        f"{screen.api}/v1/jobs/{screen.first}/set.pdf/link",
        params={"expires": 120},
        headers=bearer("reader"),
    )
    assert r.status_code == 200, r.text
    url = r.json()["url"]
    assert url.startswith(f"/v1/jobs/{screen.first}/set.pdf?")  # no public URL: relative
    opened = httpx.get(screen.api + url, timeout=120)
    assert opened.status_code == 200 and opened.content.startswith(b"%PDF")
    query = url.split("?", 1)[1]
    other = httpx.get(f"{screen.api}/v1/jobs/{screen.second}/set.pdf?{query}")
    assert other.status_code == 401 and other.json()["error"] == "bad_signature"
    tampered = httpx.get(f"{screen.api}{url.replace('expires=', 'expires=9')}")
    assert tampered.status_code == 401 and tampered.json()["error"] == "bad_signature"
    short = httpx.get(
        f"{screen.api}/v1/jobs/{screen.first}/report/link",
        params={"expires": 60},
        headers=bearer("reader"),
    ).json()["url"]
    expires = int(short.split("expires=")[1].split("&")[0])
    assert expires - time.time() <= 61
    admin_only = httpx.get(f"{screen.api}/v1/webhooks/link", headers=bearer("reader"))
    assert admin_only.status_code == 404


def test_single_sheets_and_the_zip_are_named_by_number(screen: ScreenStack):
    report = screen.report(screen.first)
    a101 = page_of(report, "A101")
    r = httpx.get(f"{screen.api}/v1/jobs/{screen.first}/sheets/a-101.pdf", headers=bearer("reader"))
    assert r.status_code == 200, r.text
    assert unquote(r.headers["content-disposition"].split("filename*=UTF-8''")[1]) == (
        "A101 - FLOOR PLAN - LEVEL 1.pdf"
    )
    with pymupdf.open(stream=r.content) as one, pymupdf.open(EXAMPLE) as source:
        assert one.page_count == 1
        assert one[0].get_text() == source[a101 - 1].get_text()
    missing = httpx.get(
        f"{screen.api}/v1/jobs/{screen.first}/sheets/Z999.pdf", headers=bearer("reader")
    )
    assert missing.status_code == 404 and missing.json()["error"] == "no_such_sheet"
    z = httpx.get(
        f"{screen.api}/v1/jobs/{screen.first}/sheets.zip", headers=bearer("reader"), timeout=120
    )
    assert z.status_code == 200
    with zipfile.ZipFile(io.BytesIO(z.content)) as archive:
        names = archive.namelist()
    assert len(names) == report["page_count"]
    # Each sheet by its number and its title as the report states it now (the browser tests
    # on this shared stack may have corrected some titles before this test runs).
    named = {
        f"{p['sheet']['sheet_number']} - {p['sheet']['sheet_title']}.pdf"
        for p in report["pages"]
        if p["sheet"]["sheet_number"] and p["sheet"]["sheet_title"]
    }
    assert "A101 - FLOOR PLAN - LEVEL 1.pdf" in names and len(named) >= 4
    assert named <= set(names)


def test_the_linked_set_has_the_outline_labels_and_links_and_passes_intake(
    screen: ScreenStack, tmp_path: Path
):
    """Outline grouped by discipline; page labels are sheet numbers; each link lands on the
    page of the sheet its words name; the references the report lists as not in the set are
    listed in the outline, unlinked; the file passes intake with nothing to strip."""
    report = screen.report(screen.first)
    r = httpx.get(
        f"{screen.api}/v1/jobs/{screen.first}/set.pdf", headers=bearer("reader"), timeout=120
    )
    assert r.status_code == 200
    assert "bookmarked.pdf" in unquote(r.headers["content-disposition"])
    path = tmp_path / "set.pdf"
    path.write_bytes(r.content)
    numbers = {p["page_number"]: p["sheet"]["sheet_number"] for p in report["pages"]}
    with pymupdf.open(path) as doc:
        for page in doc:
            assert page.get_label() == (numbers[page.number + 1] or str(page.number + 1))
        toc = doc.get_toc()
        groups = [title for level, title, _ in toc if level == 1]
        assert groups == [
            "general",
            "architectural",
            "structural",
            "Other sheets",
            "References to sheets not in this set",
        ]
        assert [2, "A101 — FLOOR PLAN - LEVEL 1", page_of(report, "A101")] in toc
        unresolved = report["set"]["unresolved_references"]
        listed = [t for level, t, _ in toc if level == 2 and " (on " in t]
        assert sorted(t.split(" (on ")[0] for t in listed) == sorted(
            u["target"] for u in unresolved
        )
        landed = []
        for page in doc:
            for link in page.get_links():
                words = page.get_text("words", clip=link["from"] * page.derotation_matrix)
                text = " ".join(w[4] for w in words)
                target = numbers[link["page"] + 1]
                landed.append((text, target))
        assert landed, "the sample set's references to its own sheets are linked"
        assert all(
            target and target.replace("-", "") in text.replace("-", "") for text, target in landed
        )
    accepted, prepared = check_and_prepare(path, max_pages=100, refuse_active_content=True)
    assert accepted.page_count == report["page_count"] and prepared.intake.removed == {}
