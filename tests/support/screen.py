"""One stack for the review screen's tests (its API tests and its browser tests): every service
a job needs, tokens of three roles, and a project with two uploads of the sample set, the
second renumbering sheet A601 as A609 (so the register proposes a match). Shared by both
modules for the session: the jobs cost a pipeline run each."""

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from shared.infra.settings import ApiToken, Settings
from sheetflow.services import PIPELINE
from tests.support.revisions import edited
from tests.support.stack import TEST_TIMINGS, Stack, module_settings, shared_stack

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"
PROJECT = "tower-s"
TOKENS = {"reviewer": "dana-rev-token-1", "reader": "rita-read-token-1", "submitter": "sam-sub-1"}
NAMES = {"reviewer": "dana", "reader": "rita", "submitter": "sam"}
CSRF_INPUT = re.compile(r'name="csrf" value="([^"]+)"')


def bearer(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role]}"}


@dataclass
class ScreenStack:
    stack: Stack
    first: str  # the project's first upload (the sample set)
    second: str  # its second: sheet A601 renumbered A609

    @property
    def api(self) -> str:
        return self.stack.api

    @property
    def settings(self) -> Settings:
        return self.stack.settings

    def report(self, job_id: str) -> dict[str, Any]:
        r = httpx.get(f"{self.api}/v1/jobs/{job_id}/report", headers=bearer("reader"), timeout=10)
        assert r.status_code == 200, r.text
        return r.json()


def wait_report(stack: Stack, job_id: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = httpx.get(f"{stack.api}/v1/jobs/{job_id}/report", headers=bearer("reader"), timeout=10)
        if r.status_code == 200:
            return
        time.sleep(0.5)
    raise AssertionError(f"no report for {job_id} in {timeout}s\n{stack.logs()}")


def submit(stack: Stack, pdf: bytes, name: str) -> str:
    return stack.submit(pdf, name=name, options={"project": PROJECT}, headers=bearer("submitter"))


@contextlib.contextmanager
def screen_stack(session: Settings, data_dir: Path) -> Iterator[ScreenStack]:
    tokens = [
        ApiToken(name=NAMES[role], role=role, token=SecretStr(value))
        for role, value in TOKENS.items()
    ]
    settings = module_settings(session, data_dir, "screen", api_tokens=tokens, **TEST_TIMINGS)
    with shared_stack(settings, *PIPELINE) as stack:
        pdf = EXAMPLE.read_bytes()
        first = submit(stack, pdf, "drawing-set.pdf")
        wait_report(stack, first)
        second = submit(stack, edited(pdf, [(3, "A601", "A609", None)]), "addendum-1.pdf")
        wait_report(stack, second)
        yield ScreenStack(stack, first, second)


def signed_in(api: str, role: str) -> tuple[httpx.Client, str]:
    """A client signed in to the screen as ``role`` (its session cookie kept), and the
    session's CSRF token as the pages print it."""
    client = httpx.Client(base_url=api, timeout=30)
    page = client.get("/app/signin")
    nonce = CSRF_INPUT.search(page.text)
    assert nonce, page.text
    r = client.post(
        "/app/signin", data={"token": TOKENS[role], "csrf": nonce.group(1), "next": "/app/"}
    )
    assert r.status_code == 303 and r.headers["location"] == "/app/", r.text
    home = client.get("/app/")
    csrf = CSRF_INPUT.search(home.text)
    assert home.status_code == 200 and csrf, home.text
    return client, csrf.group(1)
