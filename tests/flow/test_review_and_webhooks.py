"""A person's review and the systems around it, end to end on the embedded servers with every
service running (one stack for the module): a reviewer's correction rebuilds the report and
is heard over NATS and a webhook; webhooks deliver signed events at least once, retried after
a 500 and counted once by idempotency key, with a delivery log and a replay; redirecting,
slow and private-address targets are refused as specified; tokens act by role."""

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from shared.infra.settings import ApiToken, Settings
from sheetflow.runtime import EmbeddedServers, free_port
from sheetflow.services import SERVICES
from tests.support.buckets import remove_bucket
from tests.support.sets import indexed_set
from tests.support.stack import Stack, stack, stream_messages
from tests.support.webhook_receiver import Receiver, receiver, verify_signature

pytestmark = pytest.mark.slow

ROLES = ("reader", "submitter", "reviewer", "admin")
SECRET = "whsec_flow_test_secret_0123456789"
TIMEOUT_S = 1.0  # the webhook timeout; the slow target answers after 3


def auth(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer token-of-{role}-7q"}


@dataclass
class Review:
    stack: Stack
    hook: Receiver
    settings: Settings

    def call(self, method: str, path: str, role: str = "admin", **kw) -> httpx.Response:
        return httpx.request(
            method, f"{self.stack.api}{path}", headers=auth(role), timeout=30, **kw
        )

    def subscribe(self, path: str, events: list[str]) -> str:
        r = self.call(
            "POST",
            "/v1/webhooks",
            json={"url": f"{self.hook.url}{path}", "events": events, "secret": SECRET},
        )
        assert r.status_code == 201, r.text
        assert r.json()["secret"] == SECRET and r.json()["created_by"] == "admin-bot"
        return r.json()["id"]

    def deliveries(self, webhook: str) -> list[dict]:
        r = self.call("GET", f"/v1/webhooks/{webhook}/deliveries")
        assert r.status_code == 200, r.text
        return r.json()

    def settled(self, webhook: str, count: int = 1, timeout: float = 60) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.deliveries(webhook)
            if len(found) >= count and all(d["state"] != "pending" for d in found):
                return found
            time.sleep(0.3)
        raise AssertionError(f"{webhook} deliveries not settled: {self.deliveries(webhook)}")


@pytest.fixture(scope="module")
def review(servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Review]:
    tag = uuid.uuid4().hex[:10]
    settings = servers.settings.model_copy(
        update={
            "namespace": f"rv{tag}",
            "s3_bucket": f"rv-{tag}",
            "data_dir": Path(tmp_path_factory.mktemp("review")),
            "api_port": free_port(),
            "api_tokens": [
                ApiToken(name=f"{role}-bot", role=role, token=SecretStr(f"token-of-{role}-7q"))
                for role in ROLES
            ],
            "webhook_allow_networks": ["127.0.0.0/8"],
            "webhook_timeout_s": TIMEOUT_S,
            "webhook_backoff_s": 0.3,
            "webhook_backoff_max_s": 1.0,
            "webhook_retry_for_s": 4.0,
            "ack_wait_s": 10.0,
            "retry_backoff_s": 0.2,
            "retry_backoff_max_s": 2.0,
        }
    )
    with receiver(slow_s=3.0) as hook, stack(settings, *SERVICES) as s:
        yield Review(s, hook, settings)
    remove_bucket(settings)


@pytest.fixture(scope="module")
def subscribed(review: Review) -> dict[str, str]:
    """Webhooks made before the job: a flaky target (500 twice), a redirecting one and a
    slow one, each wanting every event."""
    review.hook.answers["/flaky"] = [500, 500, 200]
    events = ["report.ready"]
    return {name: review.subscribe(f"/{name}", events) for name in ("flaky", "redirect", "slow")}


@pytest.fixture(scope="module")
def job(review: Review, subscribed: dict[str, str]) -> str:
    pdf = indexed_set().tobytes()
    job_id = review.stack.submit(pdf, name="indexed.pdf", headers=auth("submitter"))
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        r = review.call("GET", f"/v1/jobs/{job_id}/report", "reader")
        if r.status_code == 200:
            return job_id
        time.sleep(0.5)
    raise AssertionError(f"no report for {job_id}\n{review.stack.logs()}")


def test_a_webhook_is_signed_retried_after_500s_and_one_event_by_key(review, subscribed, job):
    """The flaky target answers 500 twice: it sees three signed POSTs of report.ready with
    one idempotency key, and the delivery log says 500, 500, 200; a replay sends it again
    under the same key."""
    posts = review.hook.wait_for("/flaky", 3)
    by_key = review.hook.events_by_key("/flaky")
    assert len(by_key) == 1, list(by_key)
    [(key, attempts)] = by_key.items()
    for post in attempts:
        assert verify_signature(SECRET, post.body, post.headers["sheetflow-signature"])
        assert post.event["event"] == "report.ready" and post.event["data"]["job_id"] == job
        assert post.headers["sheetflow-delivery"] == key == post.event["delivery_id"]
    assert [p.headers["sheetflow-attempt"] for p in posts] == ["1", "2", "3"]
    [delivery] = review.settled(subscribed["flaky"])
    assert delivery["state"] == "delivered" and delivery["delivery_id"] == key
    assert [a["status_code"] for a in delivery["attempts"]] == [500, 500, 200]
    assert all(a["latency_ms"] >= 0 for a in delivery["attempts"])

    r = review.call("POST", f"/v1/webhooks/{subscribed['flaky']}/deliveries/{key}/replay")
    assert r.status_code == 202 and r.json()["round"] == 2
    review.hook.wait_for("/flaky", 4)
    assert list(review.hook.events_by_key("/flaky")) == [key]
    [delivery] = review.settled(subscribed["flaky"])
    assert (delivery["round"], delivery["attempts"][-1]["round"]) == (2, 2)


def test_redirecting_slow_and_private_targets_are_refused(review, subscribed, job):
    """A redirect is not followed (the delivery fails at once, its target called once); a
    slow target is cut off at the timeout and failed once the retry time is spent; a
    private address is refused when subscribed."""
    [redirected] = review.settled(subscribed["redirect"])
    assert redirected["state"] == "failed" and len(review.hook.on("/redirect")) == 1
    assert redirected["attempts"][0]["error"] == "redirect (302) not followed"
    assert review.hook.on("/ok") == []  # where it pointed: never called

    [slow] = review.settled(subscribed["slow"], timeout=30)
    assert slow["state"] == "failed" and len(slow["attempts"]) >= 2
    for attempt in slow["attempts"]:
        assert attempt["error"] == f"no answer within {TIMEOUT_S:g}s"
        assert attempt["latency_ms"] < TIMEOUT_S * 1000 + 1000

    for url in ("http://10.0.0.7/hook", "http://169.254.169.254/latest", "http://[::1]:9/h"):
        r = review.call("POST", "/v1/webhooks", json={"url": url, "events": ["report.ready"]})
        assert r.status_code == 422 and r.json()["error"] == "target_not_allowed", url


def test_roles_on_the_running_api(review, subscribed, job):
    """Over the real API: a reader reads the report and the sheet log but may not upload,
    manage webhooks or cancel; no token is 401."""
    assert review.call("GET", f"/v1/jobs/{job}/sheets.csv", "reader").status_code == 200
    assert review.call("GET", "/v1/webhooks", "reader").status_code == 403
    assert review.call("GET", "/v1/webhooks", "reviewer").status_code == 403
    listed = review.call("GET", "/v1/webhooks", "admin").json()
    assert {w["id"] for w in listed} >= set(subscribed.values())
    assert all(w["secret"] is None for w in listed)
    assert review.call("DELETE", f"/v1/jobs/{job}", "reader").status_code == 403
    assert httpx.get(f"{review.stack.api}/v1/jobs/{job}", timeout=10).status_code == 401
    # The access log names each request's token, never its value.
    log = review.stack.procs["ingest"].log_path.read_text()
    assert f'/v1/jobs/{job}/sheets.csv HTTP/1.1" 200 OK token=reader-bot' in log
    assert "token-of-" not in log


def report_at(review: Review, job: str, revision: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = review.call("GET", f"/v1/jobs/{job}/report", "reader").json()
        if found.get("revision", 1) >= revision:
            return found
        time.sleep(0.3)
    raise AssertionError(f"report revision {revision} not written\n{review.stack.logs()}")


async def test_a_reviewer_corrects_a_sheet_and_everyone_hears(review, subscribed, job):
    """A reviewer renumbers the second A-201 as A-102 (listed in the index, missing from the
    set): the record names the reviewer; report.json and report.html show the new number
    from "person" with the old beside it, the set step no longer finds the duplicate nor the
    missing sheet; sheet.corrected and report.ready (revision 2) reach NATS subscribers and a
    signed webhook."""
    hooked = review.subscribe("/review", ["sheet.corrected", "report.ready"])
    before = report_at(review, job, 1)
    assert [d["sheet_number"] for d in before["set"]["duplicates"]] == ["A-201"]
    assert "A-102" in {m["sheet_number"] for m in before["set"]["missing"]}
    fix = {"sheet_number": "A-102", "reason": "the second A-201 is the second floor plan"}
    path = f"/v1/jobs/{job}/pages/4/sheet"
    assert review.call("POST", path, "reader", json=fix).status_code == 403
    assert review.call("POST", path, "submitter", json=fix).status_code == 403
    # A problem the page does not report cannot be reviewed (this set's pages report none).
    decision = {"decision": "dismiss", "reason": "not a problem"}
    r = review.call("POST", f"/v1/jobs/{job}/pages/4/problems/1", "reviewer", json=decision)
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    r = review.call("POST", path, "reviewer", json=fix)
    assert r.status_code == 201, r.text
    record = r.json()
    assert (record["by"], record["before"], record["after"]) == (
        "reviewer-bot",
        {"sheet_number": "A-201"},
        {"sheet_number": "A-102"},
    )

    after = report_at(review, job, 2)
    fourth = after["pages"][3]
    assert (fourth["sheet"]["sheet_number"], fourth["sheet"]["sheet_number_source"]) == (
        "A-102",
        "person",
    )
    assert fourth["review"]["original"] == {"sheet_number": "A-201"}
    assert after["set"]["duplicates"] == []
    assert "A-102" not in {m["sheet_number"] for m in after["set"]["missing"]}
    assert [r["record_id"] for r in after["review"]] == [record["record_id"]]
    assert after["summary"]["review"]["pages_corrected"] == 1
    html = review.call("GET", f"/v1/jobs/{job}/report.html", "reader").text
    assert "(was A-201)" in html and 'id="review-log"' in html and "reviewer-bot" in html
    csv_text = review.call("GET", f"/v1/jobs/{job}/sheets.csv", "reader").text
    assert "A-102" in csv_text and "corrected: sheet_number" in csv_text

    corrected = await stream_messages(review.settings, "sheet.corrected", expect=1)
    assert [(e["page_number"], e["after"], e["by"]) for e in corrected] == [
        (4, {"sheet_number": "A-102"}, "reviewer-bot")
    ]
    ready = await stream_messages(review.settings, "report.ready", expect=2)
    assert [e.get("revision", 1) for e in ready] == [1, 2]

    posts = review.hook.wait_for("/review", 2)
    assert sorted(p.event["event"] for p in posts) == ["report.ready", "sheet.corrected"]
    assert all(verify_signature(SECRET, p.body, p.headers["sheetflow-signature"]) for p in posts)
    ready_post = next(p for p in posts if p.event["event"] == "report.ready")
    assert ready_post.event["data"]["revision"] == 2
    assert {d["state"] for d in review.settled(hooked, 2)} == {"delivered"}
