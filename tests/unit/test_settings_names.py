"""Setting names: the contract's names are accepted as well, and a SHEETFLOW_ variable that
names no setting is named at start instead of silently ignored."""

import logging

from services.coverage.app import create_app
from shared.infra.settings import Settings, unknown_variables
from sheetflow import cli
from tests.unit.test_cli import runner


def test_the_contract_s_name_of_a_setting_is_accepted(monkeypatch, tmp_path):
    """SHEETFLOW_EXTRACT_FALLBACK_MAX_OBJECTS (the contract's name) sets fallback_max_objects
    as SHEETFLOW_FALLBACK_MAX_OBJECTS does; the setting's own name wins when both are set."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHEETFLOW_EXTRACT_FALLBACK_MAX_OBJECTS", "7")
    assert Settings().fallback_max_objects == 7
    monkeypatch.setenv("SHEETFLOW_FALLBACK_MAX_OBJECTS", "9")
    assert Settings().fallback_max_objects == 9
    assert Settings(fallback_max_objects=3).fallback_max_objects == 3
    assert unknown_variables({"SHEETFLOW_EXTRACT_FALLBACK_MAX_OBJECTS": "7"}, None) == []


def test_a_misspelt_variable_is_named(tmp_path):
    """A SHEETFLOW_ variable no setting reads, in the environment or the .env file, is named;
    settings' own variables and other programs' variables are not."""
    env_file = tmp_path / ".env"
    env_file.write_text("SHEETFLOW_LOG_LEVEL=INFO\nSHEETFLOW_JUDGE_MODEL=x\n")
    environ = {"SHEETFLOW_VERIFY_OCR_CHEK": "false", "SHEETFLOW_NAMESPACE": "s", "PATH": "/bin"}
    assert unknown_variables(environ, env_file) == [
        "SHEETFLOW_JUDGE_MODEL",
        "SHEETFLOW_VERIFY_OCR_CHEK",
    ]


def test_a_service_and_the_cli_warn_at_start(monkeypatch, tmp_path, caplog):
    """A service names the variable in a warning as it starts; the CLI on stderr."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHEETFLOW_VERIFY_OCR_CHEK", "false")
    monkeypatch.delenv("SHEETFLOW_NATS_URL", raising=False)
    with caplog.at_level(logging.WARNING):
        # Nothing is connected until the app runs.
        create_app(Settings(nats_url="nats://127.0.0.1:4222", s3_endpoint="127.0.0.1:9"))
    assert "SHEETFLOW_VERIFY_OCR_CHEK names no setting" in caplog.text
    result = runner.invoke(cli.app, ["events"])
    assert "SHEETFLOW_VERIFY_OCR_CHEK names no setting" in result.output
