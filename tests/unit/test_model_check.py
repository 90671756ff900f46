"""A configured model that cannot be used is never silent: checked once at start against the
scripted model server (the real client), half-configured settings said on the console, and
a run whose model calls failed ends with exit code 2 naming them."""

import socket
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from services.report.assemble import JobInfo, build_report
from shared.contracts.interfaces import LLMError
from shared.contracts.models import Coverage, ModelFailure, PageVerdict, VerifiedPage
from shared.contracts.report import Report
from shared.infra.llm import check_model_server, model_settings_warnings
from shared.infra.settings import Settings
from shared.sheet.header import SheetHeader
from sheetflow import cli
from sheetflow.cli import commands, present
from tests.support.model_server import ModelReply, ScriptedModelServer
from tests.support.pdfs import add_notes_page, make_pdf

runner = CliRunner()


def dead_url() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def with_model(base_url: str, **extra) -> Settings:
    fields = {"llm_base_url": base_url, "llm_extract_model": "vision-x", **extra}
    return Settings(_env_file=None, **fields)


def test_a_dead_model_server_is_named_with_its_model():
    """Nothing listening: the error names the URL and the model."""
    url = dead_url()
    with pytest.raises(LLMError) as caught:
        check_model_server(with_model(url), timeout=2)
    assert url in str(caught.value) and "vision-x" in str(caught.value)


def test_a_model_the_server_does_not_list_is_named():
    """The server lists other models: the missing one is named, with what it offers."""
    with ScriptedModelServer(models=["llava", "qwen2-vl"]) as server:
        with pytest.raises(LLMError) as caught:
            check_model_server(with_model(server.base_url, llm_verify_model="qwen2-vl"))
        check_model_server(with_model(server.base_url, llm_extract_model="llava"))
    message = str(caught.value)
    assert "does not know model vision-x" in message and "llava, qwen2-vl" in message


def test_a_server_without_a_model_list_is_asked_for_one_token():
    """No GET /models: one tiny completion per model decides, and a refusal is named."""
    with ScriptedModelServer() as server:
        check_model_server(with_model(server.base_url, llm_structured_output="off"))
        assert [r["max_tokens"] for r in server.requests] == [1]
        server.responder = lambda req: ModelReply(status=404, content="model not found")
        with pytest.raises(LLMError, match=r"cannot run model vision-x .*HTTP 404"):
            check_model_server(with_model(server.base_url))


@pytest.mark.parametrize(
    ("behaviour", "found"), [("honour", True), ("ignore", True), ("reject", False)]
)
def test_the_start_up_check_finds_whether_the_server_takes_a_reply_schema(behaviour, found):
    """Asked once at start with a tiny schema: a server that takes ``response_format``
    (honoured or ignored) says yes, one that refuses it with a 400 says no; the services
    started with the checked settings are told (``llm_structured_output`` on/off)."""
    with ScriptedModelServer(models=["vision-x"], response_format=behaviour) as server:
        settings = with_model(server.base_url)
        assert check_model_server(settings) is found
        checked = commands.check_model(settings)
        probes = [r["response_format"]["type"] for r in server.requests]
    assert probes == ["json_schema", "json_schema"]
    assert checked.llm_structured_output == ("on" if found else "off")


def test_a_known_answer_is_not_asked_again():
    """``llm_structured_output`` set (on or off): the check asks the server nothing more."""
    with ScriptedModelServer(models=["vision-x"]) as server:
        for value in ("on", "off"):
            settings = with_model(server.base_url, llm_structured_output=value)
            assert check_model_server(settings) is None
            assert commands.check_model(settings).llm_structured_output == value
        assert server.requests == []


def test_a_refused_key_is_named_without_showing_it():
    """401 on the model list: the message points at the API key and never shows it."""
    with ScriptedModelServer(models=["vision-x"]) as server:
        server.models = None
        server.responder = lambda req: ModelReply(status=401, content="bad key sk-secret-1")
        settings = with_model(server.base_url, llm_api_key=SecretStr("sk-secret-1"))
        with pytest.raises(LLMError) as caught:
            check_model_server(settings)
    assert "sk-secret-1" not in str(caught.value) and "HTTP 401" in str(caught.value)


def test_half_configured_model_settings_are_said():
    """A model without a server, or a server without a rung-1 model, gets a sentence; a
    complete configuration or none gets none."""
    only_model = Settings(_env_file=None, llm_extract_model="vision-x")
    only_url = Settings(_env_file=None, llm_base_url="http://127.0.0.1:9/v1")
    assert "SHEETFLOW_LLM_BASE_URL is not set" in model_settings_warnings(only_model)[0]
    assert "SHEETFLOW_LLM_EXTRACT_MODEL is not" in model_settings_warnings(only_url)[0]
    assert model_settings_warnings(with_model("http://127.0.0.1:9/v1")) == []
    assert model_settings_warnings(Settings(_env_file=None)) == []


def test_half_configured_model_settings_are_printed_on_the_console(capsys):
    """The warning reaches the console, not only a log."""
    commands.check_model(Settings(_env_file=None, llm_extract_model="vision-x"))
    assert "warning:" in capsys.readouterr().err


def test_run_with_a_dead_model_server_stops_before_starting_anything(tmp_path, monkeypatch):
    """`sheetflow run` against a model server that does not answer exits 1 naming the URL
    and the model, having started and written nothing."""
    monkeypatch.chdir(tmp_path)
    url = dead_url()
    monkeypatch.setenv("SHEETFLOW_LLM_BASE_URL", url)
    monkeypatch.setenv("SHEETFLOW_LLM_EXTRACT_MODEL", "vision-x")
    (tmp_path / "set.pdf").write_bytes(make_pdf(add_notes_page))
    result = runner.invoke(cli.app, ["run", "set.pdf"])
    assert result.exit_code == 1
    assert url in result.output and "vision-x" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["set.pdf"], "nothing is started or written"


def degraded_report() -> Report:
    """A one-page report whose vision call failed: the page was read offline, degraded."""
    coverage = Coverage(total_lines=4, covered_lines=4, ratio=1.0)
    reason = "the model call failed: HTTP 500"
    page = VerifiedPage(
        job_id="j_1",
        page_number=1,
        has_text_layer=True,
        degraded=True,
        extraction_status="degraded",
        extraction_reason=f"{reason}; the page was read offline instead",
        sheet=SheetHeader(sheet_number="A101"),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=PageVerdict(ok=True),
        model_failures=[ModelFailure(stage="extract", reason=reason)],
    )
    job = JobInfo(
        job_id="j_1",
        file_name="set.pdf",
        page_count=1,
        created_at=datetime(2026, 5, 29, tzinfo=UTC),
    )
    return build_report(job, [page], finished_at=datetime(2026, 5, 29, 0, 1, tzinfo=UTC))


def test_a_run_whose_model_failed_exits_2_naming_the_page(tmp_path, capsys):
    """Model failures make the exit code 2; the table marks the page degraded and the
    failure is named with its page, stage and reason."""
    code = present.conclude(degraded_report(), tmp_path)
    captured = capsys.readouterr()
    assert code == 2
    assert "DEGRADED" in captured.out and "model failures: 1" in captured.out
    assert "page 1 (extract): the model call failed: HTTP 500" in captured.err
