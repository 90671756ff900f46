"""The event tail: every event on the stream, or the subjects asked for, printed as one JSON
line each as it happens, over core NATS."""

import asyncio
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import nats

from shared.infra.redact import redact_url
from shared.infra.settings import Settings, nats_server_list
from shared.infra.tls import tls_context
from sheetflow.cli.client import secret
from sheetflow.cli.present import CliError, stderr


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
