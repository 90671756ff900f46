"""The ``sheetflow`` command: run the stack, process a PDF, follow events.

Thin on purpose: the embedded launcher is :mod:`sheetflow.runtime`, the HTTP API is
the ingest service; this module parses arguments, polls the API and prints.
Errors a user can act on become one message and exit code 1, never a traceback.
"""

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import httpx
import nats
import psutil
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from shared.asyncapi import asyncapi_document
from shared.broker import tls_context
from shared.interfaces import LLMError
from shared.llm import check_model_server, model_settings_warnings
from shared.redact import redact_url
from shared.report import PageReport, Report, report_json_schema
from shared.settings import Settings, nats_server_list
from sheetflow.endpoints import Endpoints, read_endpoints, remove_endpoints, write_endpoints
from sheetflow.runtime import (
    S3_AUTH_DIR,
    SERVICES,
    ManagedProcess,
    RuntimeStartError,
    Supervisor,
    free_port,
    supervised_stack,
)

app = typer.Typer(
    help="sheetflow: turn PDF drawing sets into structured, verified, per-sheet data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
stdout = Console(soft_wrap=True)  # long paths and URLs stay whole, for copy and paste
stderr = Console(stderr=True, soft_wrap=True)

EXIT_OK, EXIT_ERROR, EXIT_PAGES_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 130
FINISHED = ("complete", "partial", "canceled")
POLL_S = 0.5
READY_TIMEOUT_S = 180.0
REPORT_TIMEOUT_S = 30.0
OUT_HELP = "where report.json and report.html go (default ./sheetflow-out/JOB_ID)"
# Progress bars: a page counts toward a stage once it has reached it or any later one.
STAGE_BARS: dict[str, tuple[str, ...]] = {
    "extracted": ("extracted", "covered", "verified"),
    "covered": ("covered", "verified"),
    "verified": ("verified",),
    "failed": ("failed",),
}


class CliError(Exception):
    """A failure the user can act on: printed as one message, exit code 1."""


# ---------------------------------------------------------------- plumbing


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn CliError / RuntimeStartError into a message and exit 1; Ctrl-C into exit 130."""
    try:
        yield
    except (CliError, RuntimeStartError) as exc:
        stderr.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(EXIT_ERROR) from None
    except KeyboardInterrupt:
        stderr.print("interrupted; everything this command started is stopped")
        raise typer.Exit(EXIT_INTERRUPTED) from None


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt once; repeats are ignored so the
    ``finally`` that stops child processes always runs to the end."""

    def interrupt(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = "_".join(str(p) for p in first["loc"]).upper()
        where = f" SHEETFLOW_{field}" if field else ""
        raise CliError(f"invalid configuration{where}: {first['msg']}") from None


def existing_file(path: Path) -> Path:
    if path.is_dir():
        raise CliError(f"{path} is a directory: give the PDF file itself")
    if not path.exists():
        raise CliError(f"no such file: {path}")
    if not path.is_file():
        raise CliError(f"{path} is not a regular file")
    return path


def accepted_pdf(path: Path, settings: Settings) -> Path:
    """``path`` when this deployment's API would accept it, checked the way ingest checks an
    upload and refused with the API's own words, before anything is started."""
    from services.ingest.refusals import Refusal
    from services.ingest.source import prepare_source  # the ingest service's own checks
    from services.ingest.upload import too_large
    from services.ingest.validation import inspect_pdf

    existing_file(path)
    try:
        if path.stat().st_size > settings.max_upload_mb * 1024 * 1024:
            raise too_large(settings.max_upload_mb * 1024 * 1024)
        inspect_pdf(path, max_pages=settings.max_pages)
        refuse = settings.active_content == "refuse"
        prepare_source(path, refuse_active_content=refuse, write=False)
    except Refusal as exc:
        reason = exc.detail.rstrip(".")
        raise CliError(f"{path.name} cannot be processed: {reason} ({exc.error})") from None
    return path


def check_model(settings: Settings) -> None:
    """Say on the console when the model settings half-work; stop with the reason when the
    configured model server does not answer or does not know a configured model."""
    for warning in model_settings_warnings(settings):
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    try:
        check_model_server(settings)
    except LLMError as exc:
        raise CliError(str(exc)) from None


def available_services() -> tuple[str, ...]:
    """The services installed in this environment (each has a ``__main__``)."""
    return tuple(n for n in SERVICES if importlib.util.find_spec(f"services.{n}.__main__"))


def supervisor_line(line: str) -> None:
    stderr.print(f"[yellow]supervisor:[/] {escape(line)}")


def api_url(settings: Settings) -> str:
    # A wildcard bind address is reachable on loopback.
    host = "127.0.0.1" if settings.api_host in ("0.0.0.0", "::", "") else settings.api_host
    return f"http://{host}:{settings.api_port}"


def secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


# ---------------------------------------------------------------- the HTTP API


def api_client(
    api: str, token: str | None, *, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(
        base_url=api.rstrip("/"), headers=headers, timeout=30.0, transport=transport
    )


def error_detail(response: httpx.Response) -> str:
    """The API's ``{"error", "detail"}`` body as a sentence, or the raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    if isinstance(body, dict) and "detail" in body:
        return f"{body['detail']} ({body.get('error', response.status_code)})"
    return json.dumps(body)[:300]


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


def ingest_pid(procs: list[ManagedProcess]) -> int | None:
    """The pid of the ingest process among ``procs`` (what its /readyz names)."""
    return next((p.pid for p in procs if p.name.startswith("ingest")), None)


def ensure_port_free(settings: Settings) -> None:
    """Stop with a clear error when the API port is already taken (by another `up`?)."""
    host = "0.0.0.0" if settings.api_host in ("", "::") else settings.api_host
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, settings.api_port))
            return
        except OSError:
            pass
    other = read_endpoints(settings.data_dir.resolve())
    running = f" (`sheetflow up`, pid {other.pid}, serves {other.api})" if other else ""
    raise CliError(
        f"port {settings.api_port} on {host} is already in use{running}: stop what listens "
        "there, or set SHEETFLOW_API_PORT to a free port"
    )


def submit_file(client: httpx.Client, pdf: Path) -> dict[str, Any]:
    """Upload ``pdf``; the API's 202 body ``{job_id, status_url, report_url}``."""
    try:
        with pdf.open("rb") as fh:
            files = {"file": (pdf.name, fh, "application/pdf")}
            r = client.post("/v1/jobs", files=files, timeout=300)
    except httpx.HTTPError as exc:
        api = redact_url(str(client.base_url))
        raise CliError(f"could not reach the API at {api}: {exc}") from None
    if r.status_code != 202:
        raise CliError(f"the API rejected {pdf.name} (HTTP {r.status_code}): {error_detail(r)}")
    return r.json()


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
                was_stalled = bool(status.get("stalled"))
                if status["status"] in FINISHED:
                    return status
            time.sleep(POLL_S)
    counts = ", ".join(f"{k} {v}" for k, v in (status or {}).get("pages", {}).items())
    raise CliError(f"job {job_id} did not finish within {timeout:.0f}s ({counts or 'no status'})")


def fetch_reports(client: httpx.Client, job_id: str, out_dir: Path) -> dict[str, Any]:
    """Write ``report.json`` and ``report.html`` into ``out_dir``; the parsed report."""
    deadline = time.monotonic() + REPORT_TIMEOUT_S
    files: dict[str, bytes] = {}
    for name, path in (("report.json", "report"), ("report.html", "report.html")):
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
                time.sleep(POLL_S)
            else:
                raise CliError(f"could not fetch {name} (HTTP {r.status_code}): {error_detail(r)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out_dir / name).write_bytes(data)
    return json.loads(files["report.json"])


# ---------------------------------------------------------------- the summary


def verdict_text(page: PageReport) -> str:
    verdict = _verification_text(page)
    return f"{verdict}; DEGRADED" if page.degraded else verdict


def _verification_text(page: PageReport) -> str:
    verification = page.verification
    if page.status == "failed" and page.failure_stage == "canceled":
        return "canceled"
    if page.status == "failed" or verification is None:
        return "FAILED"
    if verification.skipped:
        return f"skipped ({verification.skipped})"
    if verification.unjudged:
        return "unjudged"
    if verification.ok:
        return "ok"
    return ", ".join(verification.kinds) or "problems"


def coverage_text(page: PageReport) -> str:
    """The page's coverage, and on a scan, that it was measured over the words OCR read."""
    coverage = page.coverage
    measured = coverage is not None and coverage.total_lines > 0
    if page.status == "verified" and not page.has_text_layer and not measured:
        return "- (no text layer)"
    if coverage is None or not measured:
        return "-"
    ocr = "" if page.has_text_layer else " OCR"
    return f"{coverage.ratio:.2f} ({coverage.covered_lines}/{coverage.total_lines}{ocr})"


def sheet_table(report: Report) -> Table:
    table = Table(title=f"{report.file_name} ({report.status})")
    for column in ("page", "sheet", "title", "discipline", "coverage", "verdict"):
        table.add_column(column, justify="right" if column == "page" else "left", overflow="fold")
    for page in report.pages:
        sheet = page.sheet
        table.add_row(
            str(page.page_number),
            escape(sheet.sheet_number or "-"),
            escape(sheet.sheet_title or "-"),
            escape(sheet.discipline or "-"),
            coverage_text(page),
            escape(verdict_text(page)),
        )
    return table


def summary_lines(report: Report) -> list[str]:
    summary = report.summary
    coverage = summary.extraction_coverage
    verification = summary.verification
    guard = summary.guard
    mean = coverage.mean_ratio
    rate = verification.problem_rate
    failed_structuring = coverage.text_structuring_failed_pages
    return [
        (
            f"pages: {report.page_count}, failed: {len(summary.failed_pages)}, "
            f"degraded: {len(summary.degraded_pages)}, "
            f"model failures: {len(summary.model_failures)}"
        ),
        f"coverage: mean {mean if mean is not None else '-'}, "
        f"below floor {coverage.pages_below_floor_count}, "
        f"text-structured {coverage.text_structured_pages}"
        + (f" ({failed_structuring} failed)" if failed_structuring else "")
        + f", fallback {coverage.fallback_pages_count}",
        (
            f"verification: verified {verification.pages_verified} = "
            f"passed {verification.pages_passed} + with problems {verification.verify_failed} + "
            f"unjudged {verification.pages_unjudged} "
            f"(skipped blank {verification.pages_skipped_blank}), "
            f"problem rate {f'{rate:.0%}' if rate is not None else '-'}"
        ),
        (
            f"guard: kept {guard.kept}, rescued {guard.rescued}, "
            f"vision unverified {guard.vision_unverified}, dropped {guard.dropped}"
        ),
    ]


def model_failure_lines(report: Report) -> list[str]:
    """One line per model call that failed for good: the page, the stage and why."""
    return [f"page {f.page_number} ({f.stage}): {f.reason}" for f in report.summary.model_failures]


def intake_lines(report: Report) -> list[str]:
    """What ingest did to the upload: active content removed, a damaged file repaired."""
    intake = report.summary.intake
    lines = []
    if intake.removed:
        kinds = ", ".join(f"{k.replace('_', ' ')} ({n})" for k, n in intake.removed.items())
        lines.append(f"intake: removed {kinds} (never run)")
    if intake.repaired:
        lost = intake.damaged_pages
        pages = f"; lost pages {', '.join(map(str, lost))}" if lost else ""
        lines.append(f"intake: the file was damaged and repaired{pages}")
    return lines


def conclude(report: Report, out_dir: Path) -> int:
    """Print the summary; the exit code: 0 complete, 2 when a page failed or a configured
    model call failed for good (its pages were read offline or left unjudged), 1 canceled."""
    stdout.print(sheet_table(report))
    for line in [*summary_lines(report), *intake_lines(report)]:
        stdout.print(escape(line))
    stdout.print(f"report: {out_dir / 'report.json'}  {out_dir / 'report.html'}")
    failed = report.summary.failed_pages
    if report.status == "canceled":
        stderr.print("[red]error:[/] the job was canceled")
        return EXIT_ERROR
    for f in failed:
        where = f"page {f.page_number} ({f.stage})"
        stderr.print(f"[red]failed:[/] {escape(where)}: {escape(f.reason)}")
    model_failures = model_failure_lines(report)
    for line in model_failures:
        stderr.print(f"[yellow]model failed:[/] {escape(line)}")
    return EXIT_PAGES_FAILED if failed or model_failures else EXIT_OK


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


# ---------------------------------------------------------------- commands


@app.command()
def up(
    extract_workers: Annotated[int, typer.Option(min=1, help="extract worker processes")] = 1,
) -> None:
    """Run everything on this machine in the foreground (embedded NATS/S3 when unconfigured)."""
    with user_errors():
        settings = load_settings()
        ensure_port_free(settings)
        check_model(settings)
        services = available_services()
        try:
            with (
                stop_on_signals(),
                supervised_stack(
                    settings,
                    extract_workers=extract_workers,
                    services=services,
                    say=supervisor_line,
                ) as (live, supervisor),
            ):
                print_endpoints(settings, live, services, extract_workers)
                with api_client(api_url(live), secret(live.api_token)) as client:
                    wait_ready(
                        client,
                        supervisor.check,
                        READY_TIMEOUT_S,
                        instance_pid=lambda: ingest_pid(supervisor.processes),
                    )
                serve(live, supervisor)
        except KeyboardInterrupt:
            stderr.print("stopped")


def serve(live: Settings, supervisor: Supervisor) -> None:
    """Say ready, and tell `events`/`submit` where this instance listens while it runs."""
    data_dir = live.data_dir.resolve()
    endpoints = Endpoints(
        pid=os.getpid(),
        api=api_url(live),
        nats_url=live.nats_url or "",
        s3_endpoint=live.s3_endpoint or "",
        namespace=live.namespace,
    )
    write_endpoints(data_dir, endpoints)
    try:
        stderr.print("[green]ready[/] (Ctrl-C stops everything)")
        while True:
            supervisor.check()
            time.sleep(POLL_S)
    finally:
        remove_endpoints(data_dir)


def print_endpoints(
    configured: Settings, live: Settings, services: tuple[str, ...], extract_workers: int
) -> None:
    data_dir = live.data_dir.resolve()
    api = api_url(live)
    nats_note = "" if configured.nats_url else f" (embedded, data in {data_dir / 'nats'})"
    s3_note = (
        ""
        if configured.s3_endpoint
        else f" (embedded, data in {data_dir / 's3'}, keys in {data_dir / S3_AUTH_DIR})"
    )
    rows = [
        ("NATS", f"{redact_url(live.nats_url or '')}{nats_note}"),
        ("S3", f"{live.s3_endpoint} bucket {live.s3_bucket}{s3_note}"),
        ("API", api),
        ("API docs", f"{api}/docs"),
        ("AsyncAPI", f"{api}/asyncapi.json"),
        ("logs", str(data_dir / "logs")),
        (
            "services",
            ", ".join(f"{n} x{extract_workers}" if n == "extract" else n for n in services),
        ),
    ]
    for label, value in rows:  # plain lines: a long path must never be cut to the terminal width
        stdout.print(f"[bold]{label:<9}[/] {escape(value)}")
    missing = [n for n in SERVICES if n not in services]
    if missing:
        stderr.print(f"[yellow]not installed, not started:[/] {', '.join(missing)}")


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="the PDF drawing set")],
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    extract_workers: Annotated[int, typer.Option(min=1, help="extract worker processes")] = 1,
    timeout: Annotated[float, typer.Option(min=1, help="seconds to wait for the job")] = 3600,
    keep_logs: Annotated[
        bool, typer.Option(help="keep this run's service logs even when it succeeds")
    ] = False,
) -> None:
    """Process FILE end to end on this machine and write its report (exit 2 if a page or a
    model call failed)."""
    with user_errors():
        settings = load_settings()
        pdf = accepted_pdf(file, settings)
        check_model(settings)
        runs = settings.data_dir.resolve() / "runs"
        workdir = runs / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        updates: dict[str, Any] = {"data_dir": workdir}
        if "api_port" in settings.model_fields_set:
            ensure_port_free(settings)
        else:
            updates["api_port"] = free_port()  # never collide with a running `sheetflow up`
        try:
            code = run_job(settings.model_copy(update=updates), pdf, out, extract_workers, timeout)
        except CliError as exc:
            raise CliError(f"{exc}\nservice logs: {workdir / 'logs'}") from None
        finally:
            # The run's NATS/S3 stores only served this job; its report is in out_dir now.
            for store in ("nats", "s3", S3_AUTH_DIR):
                shutil.rmtree(workdir / store, ignore_errors=True)
        if code == EXIT_OK and not keep_logs:
            remove_finished_runs(runs)
        else:
            stderr.print(f"service logs: {workdir / 'logs'}")
    raise typer.Exit(code)


def run_job(
    settings: Settings, pdf: Path, out: Path | None, extract_workers: int, timeout: float
) -> int:
    """Start the stack, process ``pdf``, print its summary the moment the report is written
    (before everything is stopped); the exit code."""
    services = available_services()
    for name in SERVICES:
        if name not in services:
            stderr.print(f"[yellow]warning:[/] services.{name} is not installed; pages stall there")
    with stop_on_signals(), contextlib.ExitStack() as stack:
        with stderr.status("starting NATS, S3 and the services"):
            live, supervisor = stack.enter_context(
                supervised_stack(
                    settings,
                    extract_workers=extract_workers,
                    services=services,
                    say=supervisor_line,
                )
            )
            check = supervisor.check
            client = stack.enter_context(api_client(api_url(live), secret(live.api_token)))
            wait_ready(
                client,
                check,
                READY_TIMEOUT_S,
                instance_pid=lambda: ingest_pid(supervisor.processes),
            )
        created = submit_file(client, pdf)
        stderr.print(f"job {created['job_id']}: {pdf.name}")
        report, out_dir = wait_and_report(
            client, created["job_id"], out, timeout=timeout, check=check
        )
        return conclude(report, out_dir)


def remove_finished_runs(runs: Path) -> None:
    """Remove the directories (service logs) of every run in ``runs`` that has ended: this
    one, and earlier ones whether they succeeded or not. A run still going is left alone."""
    for workdir in runs.glob("*-*"):
        pid = workdir.name.rsplit("-", 1)[1]
        if pid.isdigit() and (int(pid) == os.getpid() or not psutil.pid_exists(int(pid))):
            shutil.rmtree(workdir, ignore_errors=True)


@app.command()
def submit(
    file: Annotated[Path, typer.Argument(help="the PDF drawing set")],
    api: Annotated[
        str | None,
        typer.Option(
            help="base URL of the ingest API, e.g. http://host:8080 (default: the `sheetflow "
            "up` running from this directory)"
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(envvar="SHEETFLOW_API_TOKEN", show_default=False, help="bearer token"),
    ] = None,
    wait: Annotated[bool, typer.Option(help="follow the job and fetch its report")] = False,
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    timeout: Annotated[float, typer.Option(min=1, help="seconds to wait with --wait")] = 3600,
) -> None:
    """Upload FILE to a running deployment; with --wait, follow it like `run`."""
    with user_errors():
        pdf = existing_file(file)
        api = api or running_up(load_settings(), "an API to send to: pass --api URL").api
        with api_client(api, token) as client:
            created = submit_file(client, pdf)
            stdout.print(f"job {created['job_id']}")
            stdout.print(f"status: {created['status_url']}")
            stdout.print(f"report: {created['report_url']}")
            if not wait:
                return
            report, out_dir = wait_and_report(client, created["job_id"], out, timeout=timeout)
    raise typer.Exit(conclude(report, out_dir))


@app.command()
def events(
    subject: Annotated[
        list[str] | None,
        typer.Option(help="subject to follow, e.g. report.ready (repeatable; default all)"),
    ] = None,
    nats_url: Annotated[
        str | None, typer.Option("--nats", help="NATS URL (default SHEETFLOW_NATS_URL)")
    ] = None,
) -> None:
    """Print every event as one JSON line as it happens, until Ctrl-C."""
    with user_errors():
        settings = load_settings()
        url, namespace = nats_url or settings.nats_url, settings.namespace
        if not url:
            found = running_up(
                settings, "NATS to listen to: pass --nats URL or set SHEETFLOW_NATS_URL"
            )
            url, namespace = found.nats_url, found.namespace
            stderr.print(f"following the `sheetflow up` (pid {found.pid}) at {redact_url(url)}")
        subjects = [full_subject(namespace, s) for s in subject or []]
        subjects = subjects or [f"{namespace}.>"]
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(print_events(url, subjects, nats_options(settings)))


def running_up(settings: Settings, missing: str) -> Endpoints:
    """Where the `sheetflow up` of this data dir listens, or a CliError saying what is
    missing (``missing`` completes "no ...")."""
    found = read_endpoints(settings.data_dir.resolve())
    if found is None:
        raise CliError(
            f"no {missing}; no `sheetflow up` is running with data dir "
            f"{settings.data_dir.resolve()}"
        )
    return found


def full_subject(namespace: str, name: str) -> str:
    """``report.ready`` → ``sheetflow.report.ready``; a full subject stays as it is."""
    return name if name.startswith(f"{namespace}.") else f"{namespace}.{name}"


def event_line(subject: str, data: bytes) -> str:
    """One event as one JSON line: subject, time received, payload (JSON when it parses)."""
    try:
        payload: Any = json.loads(data)
    except ValueError:
        payload = data.decode(errors="replace")
    received = datetime.now(UTC).isoformat()
    event = {"subject": subject, "received_at": received, "data": payload}
    return json.dumps(event, separators=(",", ":"))


def nats_options(settings: Settings) -> dict[str, Any]:
    """nats-py connect options for the configured credentials and TLS."""
    options: dict[str, Any] = {}
    if settings.nats_user:
        options.update(user=settings.nats_user, password=secret(settings.nats_password) or "")
    if settings.nats_token:
        options["token"] = secret(settings.nats_token)
    if settings.nats_creds_file:
        options["user_credentials"] = str(settings.nats_creds_file)
    if settings.nats_nkey_seed_file:
        options["nkeys_seed"] = str(settings.nats_nkey_seed_file)
    tls = tls_context(settings)
    if tls:
        options["tls"] = tls
    return options


async def print_events(
    url: str,
    subjects: list[str],
    options: dict[str, Any],
    write: Callable[[str], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> None:
    """Subscribe (core NATS) to ``subjects`` and write each message as a JSON line, forever;
    ``say`` (the console) hears when the connection is lost and when it is back."""

    def print_line(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    show = write or print_line
    say = say or stderr.print

    async def quiet(exc: Exception) -> None:  # reconnects are retried; no tracebacks on screen
        pass

    async def lost() -> None:
        say(f"[yellow]lost the connection to NATS at {redact_url(url)}[/]; no events until back")

    async def back() -> None:
        say(f"[green]reconnected[/] to NATS at {redact_url(url)}")

    try:
        nc = await asyncio.wait_for(
            nats.connect(
                nats_server_list(url),
                name="sheetflow-cli",
                max_reconnect_attempts=-1,
                error_cb=quiet,
                disconnected_cb=lost,
                reconnected_cb=back,
                **options,
            ),
            timeout=10,
        )
    except (TimeoutError, OSError, nats.errors.Error) as exc:
        where = redact_url(url)
        raise CliError(f"could not connect to NATS at {where} ({type(exc).__name__})") from None

    async def on_message(msg: Any) -> None:
        show(event_line(msg.subject, msg.data))

    try:
        for subject in subjects:
            await nc.subscribe(subject, cb=on_message)
        say(f"listening on {', '.join(subjects)} (Ctrl-C stops)")
        await asyncio.Event().wait()
    finally:
        await nc.close()


def write_document(document: dict[str, Any], out: Path | None) -> None:
    """``document`` as indented JSON to ``out``, or to stdout without one."""
    text = json.dumps(document, indent=2)
    if out is None:
        sys.stdout.write(text + "\n")
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    stderr.print(f"wrote {out}")


@app.command("asyncapi")
def asyncapi_cmd(
    out: Annotated[Path | None, typer.Option(help="file to write (default stdout)")] = None,
) -> None:
    """Write the AsyncAPI document of every event (JSON), naming the configured NATS (or the
    running `sheetflow up`'s)."""
    with user_errors():
        settings = load_settings()
        if not settings.nats_url and (found := read_endpoints(settings.data_dir.resolve())):
            settings = settings.model_copy(update={"nats_url": found.nats_url})
        write_document(asyncapi_document(settings), out)


@app.command("report-schema")
def report_schema_cmd(
    out: Annotated[Path | None, typer.Option(help="file to write (default stdout)")] = None,
) -> None:
    """Write the JSON Schema of report.json (every summary field defined)."""
    write_document(report_json_schema(), out)


@app.command()
def worker(
    name: Annotated[str, typer.Argument(help=f"one of: {', '.join(SERVICES)}")],
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="pages in flight (extract only)")
    ] = None,
) -> None:
    """Run one service in the foreground against the configured NATS/S3 (e.g. more extract)."""
    with user_errors():
        if name not in SERVICES:
            raise CliError(f"unknown service {name!r}: choose one of {', '.join(SERVICES)}")
        if concurrency is not None and name != "extract":
            raise CliError("--concurrency applies to the extract service only")
        if name not in available_services():
            raise CliError(f"services.{name} is not installed in this environment")
        settings = load_settings()
        if not (settings.nats_url and settings.s3_endpoint):
            raise CliError(
                "a worker joins a running deployment: set SHEETFLOW_NATS_URL and "
                "SHEETFLOW_S3_ENDPOINT (`sheetflow up` prints both)"
            )
        if name in ("extract", "verify"):  # the services that call a model
            check_model(settings)
    argv = [sys.executable, "-m", f"services.{name}"]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    sys.stdout.flush()
    os.execv(sys.executable, argv)


@app.command(hidden=True)
def healthcheck(
    name: Annotated[str, typer.Argument(help="the service this container runs")],
    monitor: Annotated[
        str, typer.Option(help="NATS monitoring URL, or every cluster node's, comma-separated")
    ] = "http://nats:8222",
) -> None:
    """Container healthcheck: ingest answers /readyz; a worker holds its NATS connection
    (on any node of a cluster: each node lists only its own clients)."""
    with user_errors():
        settings = load_settings()
    if name == "ingest":
        try:
            healthy = httpx.get(f"{api_url(settings)}/readyz", timeout=3).status_code == 200
        except (httpx.HTTPError, OSError):
            healthy = False
    else:
        client = f"sheetflow-{name}"
        healthy = any(holds_connection(url, client) for url in nats_server_list(monitor))
    raise typer.Exit(EXIT_OK if healthy else EXIT_ERROR)


def holds_connection(monitor: str, client_name: str) -> bool:
    """Whether the NATS server monitored at ``monitor`` has ``client_name`` connected from
    this host; False when that server does not answer."""
    try:
        url = f"{monitor.rstrip('/')}/connz"
        connz = httpx.get(url, params={"limit": 4096}, timeout=3).json()
        return has_connection(connz, client_name, own_ip(monitor))
    except (httpx.HTTPError, OSError, ValueError):
        return False


def has_connection(connz: dict[str, Any], client_name: str, ip: str) -> bool:
    """Whether NATS's ``/connz`` lists a connection named ``client_name`` from ``ip``."""
    connections = connz.get("connections") or []
    return any(c.get("name") == client_name and c.get("ip") == ip for c in connections)


def own_ip(url: str) -> str:
    """This host's address on the route to ``url`` (what NATS sees as the client ip)."""
    host = httpx.URL(url).host
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((host, 9))  # UDP connect sends nothing; it only picks the route
        return s.getsockname()[0]
