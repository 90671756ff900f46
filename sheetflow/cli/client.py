"""The ingest API seen from the command line: upload a file, follow its job with a live bar
per stage, fetch its report. Connection trouble and the API's refusals become a CliError."""

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from shared.contracts.report import Report
from shared.infra.redact import redact_url
from shared.infra.settings import Settings
from sheetflow.cli.present import CliError, stderr

FINISHED = ("complete", "partial", "canceled")
POLL_S = 0.5
# A job is polled this soon at first, then a quarter later each time up to POLL_S: a small
# job's end is seen within a tenth of a second or two, a long one's costs no more polls.
FIRST_POLL_S = 0.1
REPORT_TIMEOUT_S = 30.0
# Progress bars: a page counts toward a stage once it has reached it or any later one.
STAGE_BARS: dict[str, tuple[str, ...]] = {
    "extracted": ("extracted", "covered", "verified"),
    "covered": ("covered", "verified"),
    "verified": ("verified",),
    "failed": ("failed",),
}


def api_url(settings: Settings) -> str:
    # A wildcard bind address is reachable on loopback.
    host = "127.0.0.1" if settings.api_host in ("0.0.0.0", "::", "") else settings.api_host
    return f"http://{host}:{settings.api_port}"


def secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


def own_token(settings: Settings) -> str | None:
    """The token the CLI uses on a stack it started: the first configured one that may
    upload (the single SHEETFLOW_API_TOKEN comes first); None when the API takes none."""
    for token in settings.tokens:
        if token.role != "reader":
            return token.token.get_secret_value()
    return None


def api_client(
    api: str, token: str | None, *, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(
        base_url=api.rstrip("/"), headers=headers, timeout=30.0, transport=transport
    )


TOKEN_HINT = "pass the API's token with --token or set SHEETFLOW_API_TOKEN"


def error_detail(response: httpx.Response) -> str:
    """The API's ``{"error", "detail"}`` body as a sentence, or the raw text; a refused
    token (401) says how to give one."""
    try:
        body = response.json()
    except ValueError:
        said = response.text.strip()[:300] or response.reason_phrase
    else:
        if isinstance(body, dict) and "detail" in body:
            said = f"{body['detail']} ({body.get('error', response.status_code)})"
        else:
            said = json.dumps(body)[:300]
    return f"{said}; {TOKEN_HINT}" if response.status_code == 401 else said


def wait_ready(
    client: httpx.Client,
    check: Callable[[], None],
    timeout: float,
    *,
    instance_pid: Callable[[], int | None] | None = None,
) -> None:
    """Poll ``/readyz`` until the API says NATS and S3 answer; with ``instance_pid`` (the
    pid of our ingest process now: a supervisor may restart it), only that process counts:
    another instance on the port is not ours."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        check()
        with contextlib.suppress(httpx.HTTPError, ValueError):
            r = client.get("/readyz", timeout=2)
            instance = r.json().get("instance", "") if r.status_code == 200 else None
            if instance is not None and (
                instance_pid is None or instance.endswith(f":{instance_pid()}")
            ):
                return
        time.sleep(0.1)
    raise CliError(
        f"the API at {redact_url(str(client.base_url))} was not ready within {timeout:.0f}s"
    )


def submit_file(
    client: httpx.Client,
    pdf: Path,
    project: str | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Upload ``pdf`` (to ``project``'s register, when named; with job ``options``, when
    given); the API's 202 body ``{job_id, status_url, report_url}``."""
    route = f"/v1/projects/{project}/jobs" if project else "/v1/jobs"
    data = {"options": json.dumps(options)} if options else None
    try:
        with pdf.open("rb") as fh:
            files = {"file": (pdf.name, fh, "application/pdf")}
            r = client.post(route, files=files, data=data, timeout=300)
    except httpx.HTTPError as exc:
        api = redact_url(str(client.base_url))
        raise CliError(f"could not reach the API at {api}: {exc}") from None
    if r.status_code != 202:
        raise CliError(f"the API rejected {pdf.name} (HTTP {r.status_code}): {error_detail(r)}")
    return r.json()


def call_api(client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One request to the API: its answer when 2xx, else a CliError with the API's words."""
    try:
        r = client.request(method, path, **kwargs)
    except httpx.HTTPError as exc:
        api = redact_url(str(client.base_url))
        raise CliError(f"could not reach the API at {api}: {exc}") from None
    if not r.is_success:
        raise CliError(f"the API refused {method} {path} (HTTP {r.status_code}): {error_detail(r)}")
    return r


def job_status(client: httpx.Client, job_id: str) -> dict[str, Any] | None:
    """The job's status, or None on a transient failure (503, connection trouble)."""
    try:
        r = client.get(f"/v1/jobs/{job_id}", timeout=15)
    except httpx.TransportError:
        return None
    if r.status_code == 503:
        return None
    if r.status_code != 200:
        raise CliError(f"could not read job {job_id} (HTTP {r.status_code}): {error_detail(r)}")
    return r.json()


def stage_counts(pages: dict[str, int]) -> dict[str, int]:
    """Pages that reached each progress bar's stage, from the API's per-stage counts."""
    return {bar: sum(pages.get(s, 0) for s in stages) for bar, stages in STAGE_BARS.items()}


def follow_job(
    client: httpx.Client, job_id: str, *, timeout: float, check: Callable[[], None] = lambda: None
) -> dict[str, Any]:
    """Poll the job with a live bar per stage until it finishes; its last status."""
    deadline = time.monotonic() + timeout
    status: dict[str, Any] | None = None
    was_stalled = False
    columns = (
        TextColumn("{task.description:>10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=stderr) as progress:
        bars: dict[str, Any] = {}
        poll_s = FIRST_POLL_S
        while time.monotonic() < deadline:
            check()
            status = job_status(client, job_id) or status
            if status:
                if not bars:
                    bars = {b: progress.add_task(b, total=status["page_count"]) for b in STAGE_BARS}
                for bar, count in stage_counts(status["pages"]).items():
                    progress.update(bars[bar], completed=count)
                if status.get("stalled") and not was_stalled:
                    detail = escape(status.get("detail", ""))
                    progress.console.print(f"[yellow]job stalled:[/] {detail}")
                elif was_stalled and not status.get("stalled"):
                    progress.console.print("[green]job moving again[/]")
                was_stalled = bool(status.get("stalled"))
                if status["status"] in FINISHED:
                    return status
            time.sleep(poll_s)
            poll_s = min(poll_s * 1.25, POLL_S)
    counts = ", ".join(f"{k} {v}" for k, v in (status or {}).get("pages", {}).items())
    raise CliError(f"job {job_id} did not finish within {timeout:.0f}s ({counts or 'no status'})")


def fetch_reports(client: httpx.Client, job_id: str, out_dir: Path) -> dict[str, Any]:
    """Write ``report.json``, ``report.html``, the sheet log ``sheets.csv`` and the set
    bookmarked and linked, ``set.pdf``, into ``out_dir``; the parsed report."""
    deadline = time.monotonic() + REPORT_TIMEOUT_S
    files: dict[str, bytes] = {}
    served = (
        ("report.json", "report"),
        ("report.html", "report.html"),
        ("sheets.csv", "sheets.csv"),
        ("set.pdf", "set.pdf"),
    )
    for name, path in served:
        while name not in files:
            if time.monotonic() > deadline:
                raise CliError(f"job {job_id}: {name} not served in {REPORT_TIMEOUT_S:.0f}s")
            try:
                r = client.get(f"/v1/jobs/{job_id}/{path}", timeout=30)
            except httpx.TransportError:
                time.sleep(POLL_S)
                continue
            if r.status_code == 200:
                files[name] = r.content
            elif r.status_code in (404, 503):  # written a moment after the status flips
                time.sleep(FIRST_POLL_S)
            else:
                raise CliError(f"could not fetch {name} (HTTP {r.status_code}): {error_detail(r)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out_dir / name).write_bytes(data)
    return json.loads(files["report.json"])


def wait_and_report(
    client: httpx.Client,
    job_id: str,
    out: Path | None,
    *,
    timeout: float,
    check: Callable[[], None] = lambda: None,
) -> tuple[Report, Path]:
    follow_job(client, job_id, timeout=timeout, check=check)
    out_dir = out or Path("sheetflow-out") / job_id
    document = fetch_reports(client, job_id, out_dir)
    try:
        return Report.model_validate(document), out_dir
    except ValidationError as exc:
        raise CliError(
            f"the report in {out_dir} does not match this sheetflow's report schema "
            f"(another version served it?): {exc.error_count()} errors, first: "
            f"{exc.errors()[0]['msg']} at {'.'.join(map(str, exc.errors()[0]['loc']))}"
        ) from None
