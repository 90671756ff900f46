"""The ``sheetflow`` command: run the stack, process a PDF, follow events.

Thin on purpose: the embedded launcher is :mod:`sheetflow.runtime`, the HTTP API is
the ingest service; the commands here parse arguments and hand over to the API client
(:mod:`sheetflow.cli.client`), the event tail (:mod:`sheetflow.cli.events`), the health
checks (:mod:`sheetflow.cli.health`) and what is printed (:mod:`sheetflow.cli.present`).
Errors a user can act on become one message and exit code 1, never a traceback.
"""

import asyncio
import contextlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urljoin

import psutil
import typer
from pydantic import ValidationError
from rich.markup import escape

from shared.contracts.interfaces import LLMError
from shared.contracts.messages import PROJECT_ID_PATTERN
from shared.contracts.report import report_json_schema
from shared.infra.exiting import exit_now
from shared.infra.llm import check_model_server, model_settings_warnings
from shared.infra.redact import redact_url
from shared.infra.settings import Settings, unknown_variables
from sheetflow.cli.client import (
    POLL_S,
    api_client,
    api_url,
    call_api,
    own_token,
    submit_file,
    wait_and_report,
    wait_ready,
)
from sheetflow.cli.health import healthy
from sheetflow.cli.present import (
    EXIT_ERROR,
    EXIT_OK,
    CliError,
    conclude,
    proposals_table,
    stderr,
    stdout,
    supervisor_line,
    user_errors,
    write_document,
)
from sheetflow.credentials import AUTH_DIR, embedded_nats_login
from sheetflow.endpoints import (
    Endpoints,
    read_endpoints,
    remove_endpoints,
    write_endpoints,
)
from sheetflow.runtime import (
    ManagedProcess,
    Supervisor,
    free_port,
    supervised_stack,
)
from sheetflow.services import PIPELINE, SERVICES


class _Cli(typer.Typer):
    """The command as the ``sheetflow`` script calls it: once a command has finished (its
    child processes stopped, its output written), the process ends without the interpreter's
    teardown (``exit_now``). Tests invoke the commands through click, not through this."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            super().__call__(*args, **kwargs)
        except SystemExit as done:
            if done.code is not None and not isinstance(done.code, int):
                raise  # a message to print: the interpreter's own exit says it
            exit_now(done.code or 0)
        exit_now()


app = _Cli(
    help="sheetflow: turn PDF drawing sets into structured, verified, per-sheet data.",
    # Click's own help: it wraps to the terminal (80 columns read well) and names a flag
    # without a type label ("<bool>").
    rich_markup_mode=None,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

READY_TIMEOUT_S = 180.0


class Decision(StrEnum):
    accept = "accept"
    reject = "reject"


PROJECT_HELP = (
    "the project whose drawing register the file's sheets join (its changes are printed); "
    "1-64 letters, digits, '-' or '_'"
)
ISSUE_HELP = (
    "what issue of the set the file is (e.g. 'Addendum 2'), kept with its register versions"
)
ISSUE_DATE_HELP = "the issue's date, YYYY-MM-DD"
OUT_HELP = (
    "where report.json, report.html, sheets.csv and set.pdf go (default ./sheetflow-out/JOB_ID)"
)


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
    for name in unknown_variables(os.environ):
        stderr.print(f"[yellow]warning:[/] {name} names no setting: it is ignored")
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = "_".join(str(p) for p in first["loc"]).upper()
        where = f" SHEETFLOW_{field}" if field else ""
        raise CliError(f"invalid configuration{where}: {first['msg']}") from None


def issue_options(issue: str | None, issue_date: str | None) -> dict[str, str]:
    """The job options naming the upload's issue; a date that is not YYYY-MM-DD refused."""
    options = {"issue": issue} if issue else {}
    if issue_date:
        try:
            options["issue_date"] = date.fromisoformat(issue_date).isoformat()
        except ValueError:
            raise CliError(f"{issue_date!r} is not a date: give it as YYYY-MM-DD") from None
    return options


def project_id(project: str | None) -> str | None:
    if project is not None and not re.fullmatch(PROJECT_ID_PATTERN, project):
        raise CliError(
            f"{project!r} is not a project id: 1 to 64 letters, digits, '-' or '_', starting "
            "with a letter or a digit"
        )
    return project


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


def check_model(settings: Settings) -> Settings:
    """Say on the console when the model settings half-work; stop with the reason when the
    configured model server does not answer or does not know a configured model. Returns
    the settings with what the server said of structured output, for the services started
    with them (they then need not find out)."""
    for warning in model_settings_warnings(settings):
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    try:
        structured = check_model_server(settings)
    except LLMError as exc:
        raise CliError(str(exc)) from None
    if structured is None:
        return settings
    return settings.model_copy(update={"llm_structured_output": "on" if structured else "off"})


def available_services() -> tuple[str, ...]:
    """The services installed in this environment (each has a ``__main__``)."""
    return tuple(n for n in SERVICES if importlib.util.find_spec(f"services.{n}.__main__"))


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


@app.command()
def up(
    extract_workers: Annotated[int, typer.Option(min=1, help="extract worker processes")] = 1,
) -> None:
    """Run everything on this machine in the foreground (embedded NATS/S3 when unconfigured)."""
    with user_errors():
        settings = load_settings()
        ensure_port_free(settings)
        settings = check_model(settings)
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
                with api_client(api_url(live), own_token(live)) as client:
                    wait_ready(
                        client,
                        supervisor.check,
                        READY_TIMEOUT_S,
                        instance_pid=lambda: ingest_pid(supervisor.processes),
                    )
                keeps_registers = not settings.s3_endpoint
                if keeps_registers:
                    # One register per data dir: what `sheetflow run`s kept there joins this S3.
                    from sheetflow.registers import keep_projects, restore_projects

                    restore_projects(live, live.data_dir.resolve())
                try:
                    serve(live, supervisor, nats_embedded=not settings.nats_url)
                finally:
                    if keeps_registers:
                        keep_projects(live, live.data_dir.resolve())
        except KeyboardInterrupt:
            stderr.print("stopped")


def serve(live: Settings, supervisor: Supervisor, *, nats_embedded: bool) -> None:
    """Say ready, and tell `events`/`submit` where this instance listens while it runs."""
    data_dir = live.data_dir.resolve()
    endpoints = Endpoints(
        pid=os.getpid(),
        api=api_url(live),
        nats_url=live.nats_url or "",  # written without its credentials
        s3_endpoint=live.s3_endpoint or "",
        namespace=live.namespace,
        nats_embedded=nats_embedded,
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
    keys = f"credentials in {data_dir / AUTH_DIR}"
    nats_note = "" if configured.nats_url else f" (embedded, data in {data_dir / 'nats'}, {keys})"
    s3_note = "" if configured.s3_endpoint else f" (embedded, data in {data_dir / 's3'}, {keys})"
    rows = [
        ("NATS", f"{redact_url(live.nats_url or '')}{nats_note}"),
        ("S3", f"{live.s3_endpoint} bucket {live.s3_bucket}{s3_note}"),
        ("API", api),
        ("screen", f"{api}/app/  (sign in with an API token)" if live.tokens else f"{api}/app/"),
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
    file: Annotated[Path, typer.Argument(metavar="FILE", help="the PDF drawing set")],
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    extract_workers: Annotated[int, typer.Option(min=1, help="extract worker processes")] = 1,
    timeout: Annotated[float, typer.Option(min=1, help="seconds to wait for the job")] = 3600,
    keep_logs: Annotated[
        bool, typer.Option(help="keep this run's service logs even when it succeeds")
    ] = False,
    project: Annotated[str | None, typer.Option(help=PROJECT_HELP)] = None,
    issue: Annotated[str | None, typer.Option(help=ISSUE_HELP)] = None,
    issue_date: Annotated[str | None, typer.Option(help=ISSUE_DATE_HELP)] = None,
) -> None:
    """Process FILE end to end on this machine and write its report (exit 2 if a page or a
    model call failed). With --project, its sheets join the project's register, which is
    kept in the data dir after the run."""
    with user_errors():
        settings = load_settings()
        project = project_id(project)
        options = issue_options(issue, issue_date)
        pdf = accepted_pdf(file, settings)
        up_running = read_endpoints(settings.data_dir.resolve()) if project else None
        if up_running is not None:
            # The project's register is the up's (one per data dir): the file goes to it.
            stderr.print(
                f"project {project}: sending {pdf.name} to the `sheetflow up` running from "
                f"this data dir (pid {up_running.pid}), which holds the project's register"
            )
            with api_client(up_running.api, own_token(settings)) as client:
                created = submit_file(client, pdf, project, options)
                stderr.print(f"job {created['job_id']}: {pdf.name}")
                report, out_dir = wait_and_report(client, created["job_id"], out, timeout=timeout)
            raise typer.Exit(conclude(report, out_dir))
        settings = check_model(settings)
        runs = settings.data_dir.resolve() / "runs"
        workdir = runs / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        updates: dict[str, Any] = {"data_dir": workdir}
        if "api_port" in settings.model_fields_set:
            ensure_port_free(settings)
        else:
            updates["api_port"] = free_port()  # never collide with a running `sheetflow up`
        try:
            job = RunJob(
                pdf, out, extract_workers, timeout, project, settings.data_dir.resolve(), options
            )
            code = run_job(settings.model_copy(update=updates), job)
        except CliError as exc:
            raise CliError(f"{exc}\nservice logs: {workdir / 'logs'}") from None
        finally:
            # The run's NATS/S3 stores only served this job; its report is in out_dir now.
            for store in ("nats", "s3", AUTH_DIR):
                shutil.rmtree(workdir / store, ignore_errors=True)
        if code == EXIT_OK and not keep_logs:
            remove_finished_runs(runs)
        else:
            stderr.print(f"service logs: {workdir / 'logs'}")
    raise typer.Exit(code)


@dataclass(frozen=True)
class RunJob:
    """What `sheetflow run` processes, and where it keeps a project's register."""

    pdf: Path
    out: Path | None
    extract_workers: int
    timeout: float
    project: str | None
    data_dir: Path
    options: dict[str, str] | None = None


def run_job(settings: Settings, job: RunJob) -> int:
    """Start the stack, process the PDF, print its summary the moment the report is written
    (before everything is stopped); the exit code. A project's register is brought into the
    run's embedded S3 first and kept in the data dir after (the run's S3 is removed)."""
    services = available_services()
    for name in SERVICES:
        if name not in services:
            stderr.print(f"[yellow]warning:[/] services.{name} is not installed; pages stall there")
    keeps_register = job.project is not None and not settings.s3_endpoint
    if not settings.webhooks:
        # The run's stack is its own (fresh stores, an API on a free port): the only webhooks
        # it can deliver are those the settings fix, so without any it spares that start.
        services = tuple(name for name in services if name in PIPELINE)
    with stop_on_signals(), contextlib.ExitStack() as stack:
        with stderr.status("starting NATS, S3 and the services"):
            live, supervisor = stack.enter_context(
                supervised_stack(
                    settings,
                    extract_workers=job.extract_workers,
                    services=services,
                    say=supervisor_line,
                    keep_data=False,  # the run's stores go once its report is written
                    # The services in one process: their shared imports once, not each.
                    hosted=True,
                )
            )
            check = supervisor.check
            client = stack.enter_context(api_client(api_url(live), own_token(live)))
            wait_ready(
                client,
                check,
                READY_TIMEOUT_S,
                instance_pid=lambda: ingest_pid(supervisor.processes),
            )
        if keeps_register and job.project:
            # Imported here, as in `events`: the S3 and NATS clients load only when a command
            # uses them, not before every `run` starts its stack.
            from sheetflow.registers import keep_project, project_dir, restore_project

            restore_project(live, job.data_dir, job.project)
        created = submit_file(client, job.pdf, job.project, job.options)
        stderr.print(f"job {created['job_id']}: {job.pdf.name}")
        report, out_dir = wait_and_report(
            client, created["job_id"], job.out, timeout=job.timeout, check=check
        )
        if keeps_register and job.project:
            keep_project(live, job.data_dir, job.project)
            where = project_dir(job.data_dir, job.project)
            stderr.print(f"register of project {job.project}: {where}")
        return conclude(report, out_dir)


def remove_finished_runs(runs: Path) -> None:
    """Remove the directories (service logs) of every run in ``runs`` that has ended: this
    one, and earlier ones whether they succeeded or not. A run still going is left alone."""
    for workdir in runs.glob("*-*"):
        pid = workdir.name.rsplit("-", 1)[1]
        if pid.isdigit() and (int(pid) == os.getpid() or not psutil.pid_exists(int(pid))):
            shutil.rmtree(workdir, ignore_errors=True)


ApiOption = Annotated[
    str | None,
    typer.Option(
        help="base URL of the ingest API, e.g. http://host:8080 (default: the `sheetflow "
        "up` running from this directory)"
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(envvar="SHEETFLOW_API_TOKEN", show_default=False, help="bearer token"),
]


@app.command()
def submit(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="the PDF drawing set")],
    api: ApiOption = None,
    token: TokenOption = None,
    wait: Annotated[bool, typer.Option(help="follow the job and fetch its report")] = False,
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    timeout: Annotated[float, typer.Option(min=1, help="seconds to wait with --wait")] = 3600,
    project: Annotated[str | None, typer.Option(help=PROJECT_HELP)] = None,
    issue: Annotated[str | None, typer.Option(help=ISSUE_HELP)] = None,
    issue_date: Annotated[str | None, typer.Option(help=ISSUE_DATE_HELP)] = None,
) -> None:
    """Upload FILE to a running deployment; with --wait, follow it like `run`."""
    with user_errors():
        pdf = existing_file(file)
        project = project_id(project)
        options = issue_options(issue, issue_date)
        api = api or running_up(load_settings(), "no API to send to: pass --api URL").api
        with api_client(api, token) as client:
            created = submit_file(client, pdf, project, options)
            stdout.print(f"job {created['job_id']}")
            # Relative links (no SHEETFLOW_PUBLIC_URL on the server) are relative to the API.
            stdout.print(f"status: {urljoin(api, created['status_url'])}")
            stdout.print(f"report: {urljoin(api, created['report_url'])}")
            if not wait:
                return
            report, out_dir = wait_and_report(client, created["job_id"], out, timeout=timeout)
    raise typer.Exit(conclude(report, out_dir))


@app.command()
def proposals(
    project: Annotated[str, typer.Argument(help="the project")],
    api: ApiOption = None,
    token: TokenOption = None,
) -> None:
    """List the matches PROJECT's register proposed for sheets that look renumbered, with
    their ids and statuses (proposed, accepted, rejected)."""
    with user_errors():
        project = project_id(project) or ""
        api = api or running_up(load_settings(), "API to ask: pass --api URL").api
        with api_client(api, token) as client:
            found = call_api(client, "GET", f"/v1/projects/{project}/proposals").json()
        # Imported here, as in `events`: the register's models load only when a command uses them.
        from shared.contracts.register import ProposedMatch

        listed = [ProposedMatch.model_validate(p) for p in found]
        if not listed:
            stdout.print(f"project {project}: no proposed matches")
            return
        stdout.print(proposals_table(project, listed))


@app.command()
def decide(
    project: Annotated[str, typer.Argument(help="the project")],
    proposal: Annotated[str, typer.Argument(help="the proposal's id (see `sheetflow proposals`)")],
    decision: Annotated[
        Decision, typer.Argument(help="accept: the same drawing; reject: two drawings")
    ],
    reason: Annotated[str, typer.Option(help="why (kept in the record)")],
    api: ApiOption = None,
    token: TokenOption = None,
) -> None:
    """Accept or reject a proposed match of PROJECT's register: accepted, the old number's
    versions follow the new number."""
    with user_errors():
        project = project_id(project) or ""
        api = api or running_up(load_settings(), "API to send to: pass --api URL").api
        body = {"decision": f"{decision.value}ed", "reason": reason}
        with api_client(api, token) as client:
            path = f"/v1/projects/{project}/proposals/{proposal}"
            answer = call_api(client, "POST", path, json=body)
        record = answer.json()
        again = " (decided so before)" if answer.status_code == 200 else ""
        stdout.print(
            f"proposal {proposal} {record['decision']} by {record['by']}{again}: "
            f"record {record['record_id']}"
        )


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
                settings, "no NATS to listen to: pass --nats URL or set SHEETFLOW_NATS_URL"
            )
            url, namespace = found.nats_url, found.namespace
            if found.nats_embedded:
                login = embedded_nats_login(settings.data_dir.resolve())
                settings = settings.model_copy(update=login)
            stderr.print(f"following the `sheetflow up` (pid {found.pid}) at {redact_url(url)}")
        from sheetflow.cli.events import full_subject, nats_options, print_events

        subjects = [full_subject(namespace, s) for s in subject or []]
        subjects = subjects or [f"{namespace}.>"]
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(print_events(url, subjects, nats_options(settings)))


def running_up(settings: Settings, missing: str) -> Endpoints:
    """Where the `sheetflow up` of this data dir listens, or a CliError saying what is
    ``missing`` ("no API to send to: ...") and why."""
    found = read_endpoints(settings.data_dir.resolve())
    if found is None:
        raise CliError(
            f"{missing}; no `sheetflow up` is running with data dir {settings.data_dir.resolve()}"
        )
    return found


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
        # Imported here: it builds every event model's schema, which no other command needs.
        from shared.infra.asyncapi import asyncapi_document

        write_document(asyncapi_document(settings), out)


@app.command("report-schema")
def report_schema_cmd(
    out: Annotated[Path | None, typer.Option(help="file to write (default stdout)")] = None,
) -> None:
    """Write the JSON Schema of report.json (every summary field defined)."""
    write_document(report_json_schema(), out)


@app.command()
def worker(
    name: Annotated[str, typer.Argument(metavar="NAME", help=f"one of: {', '.join(SERVICES)}")],
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
            checked = check_model(settings)
            os.environ["SHEETFLOW_LLM_STRUCTURED_OUTPUT"] = checked.llm_structured_output
    argv = [sys.executable, "-m", f"services.{name}"]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    sys.stdout.flush()
    os.execv(sys.executable, argv)


@app.command(hidden=True)
def healthcheck(
    name: Annotated[str, typer.Argument(metavar="NAME", help="the service this container runs")],
    monitor: Annotated[
        str, typer.Option(help="NATS monitoring URL, or every cluster node's, comma-separated")
    ] = "http://nats:8222",
) -> None:
    """Container healthcheck: ingest answers /readyz; a worker holds its NATS connection
    (on any node of a cluster: each node lists only its own clients)."""
    with user_errors():
        settings = load_settings()
    raise typer.Exit(EXIT_OK if healthy(name, settings, monitor) else EXIT_ERROR)
