"""How the CLI finds and trusts a running stack: the endpoints a `sheetflow up` leaves in
its data dir, a taken API port, and a readiness answer from an instance that is not ours."""

import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from typer.testing import CliRunner

from shared.infra.settings import Settings
from sheetflow import cli
from sheetflow.cli import client as cli_client
from sheetflow.cli import commands, present
from sheetflow.endpoints import Endpoints, read_endpoints, remove_endpoints, write_endpoints

runner = CliRunner()


def endpoints(pid: int) -> Endpoints:
    return Endpoints(
        pid=pid,
        api="http://127.0.0.1:8080",
        nats_url="nats://127.0.0.1:4333",
        s3_endpoint="127.0.0.1:9333",
        namespace="sheetflow",
    )


def ended_pid() -> int:
    """The pid of a process that has already exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_endpoints_of_a_running_up_are_found_and_a_stale_file_is_ignored(tmp_path):
    """The file names where `up` listens while its process lives; once it is gone the file
    is ignored, and only the process that wrote it removes it."""
    write_endpoints(tmp_path, endpoints(os.getpid()))
    assert read_endpoints(tmp_path) == endpoints(os.getpid())
    settings = Settings(_env_file=None, data_dir=tmp_path)
    assert commands.running_up(settings, "x").nats_url == "nats://127.0.0.1:4333"
    remove_endpoints(tmp_path)
    assert read_endpoints(tmp_path) is None

    write_endpoints(tmp_path, endpoints(ended_pid()))
    assert read_endpoints(tmp_path) is None
    with pytest.raises(present.CliError, match="no `sheetflow up` is running"):
        commands.running_up(settings, "no NATS to listen to")
    remove_endpoints(tmp_path)  # not ours: left alone
    assert (tmp_path / "endpoints.json").exists()


def test_endpoints_never_hold_a_password(tmp_path):
    """`up` against a NATS whose URLs carry a user and password writes the addresses only:
    anyone may read the file."""
    urls = "nats://svc:pw-4242@10.0.0.1:4222, nats://svc:pw-4242@10.0.0.2:4222"
    write_endpoints(tmp_path, endpoints(os.getpid()).model_copy(update={"nats_url": urls}))
    text = (tmp_path / "endpoints.json").read_text()
    assert "pw-4242" not in text and "svc" not in text
    found = read_endpoints(tmp_path)
    assert found is not None
    assert found.nats_url == "nats://10.0.0.1:4222,nats://10.0.0.2:4222"


def test_events_and_submit_without_an_address_say_no_up_is_running(tmp_path, monkeypatch):
    """With no --nats/--api, no configured URL and no running `up`, both commands say so."""
    monkeypatch.chdir(tmp_path)
    pdf = tmp_path / "set.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    for argv in (["events"], ["submit", "set.pdf"]):
        result = runner.invoke(cli.app, argv)
        assert result.exit_code == 1, result.output
        assert "no `sheetflow up` is running" in result.output.replace("\n", " ")


class OtherInstance(BaseHTTPRequestHandler):
    """Another sheetflow's ingest: ready, with its own instance name."""

    def do_GET(self) -> None:
        body = b'{"status": "ready", "instance": "ingest@elsewhere:4242"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_instance():
    server = ThreadingHTTPServer(("127.0.0.1", 0), OtherInstance)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_up_on_a_taken_port_stops_before_starting_anything(tmp_path, monkeypatch, other_instance):
    """With the API port held by another instance, `up` exits 1 naming the port, never says
    ready, and starts nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHEETFLOW_API_PORT", str(other_instance))
    result = runner.invoke(cli.app, ["up"])
    assert result.exit_code == 1
    assert f"port {other_instance}" in result.output and "already in use" in result.output
    assert "ready (Ctrl-C" not in result.output
    assert list(tmp_path.iterdir()) == [], "nothing is started or written"


def test_readiness_of_another_instance_is_not_ours(other_instance):
    """A ready answer naming another process does not count; naming ours it does."""
    with httpx.Client(base_url=f"http://127.0.0.1:{other_instance}") as client:
        with pytest.raises(present.CliError, match="was not ready"):
            cli_client.wait_ready(client, lambda: None, 1.0, instance_pid=lambda: 1234)
        cli_client.wait_ready(client, lambda: None, 5.0, instance_pid=lambda: 4242)


def test_a_free_port_passes_the_check():
    """A port nothing listens on is free."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    commands.ensure_port_free(Settings(_env_file=None, api_port=port))
