"""The configuration docs (.env.example, README) and compose.yaml agree with the code."""

import importlib.util
import re
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from shared.contracts.report import ReportSummary
from shared.infra.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {f"SHEETFLOW_{name.upper()}" for name in Settings.model_fields}
# `SHEETFLOW_X=value`, or commented out as `# SHEETFLOW_X=value` (left unset by default)
ENV_LINE = re.compile(r"^(?:#\s*)?(SHEETFLOW_[A-Z0-9_]+)=(.*)$")
TABLE_ROW = re.compile(r"^\|\s*`(SHEETFLOW_[A-Z0-9_]+)`\s*\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|\s*$")


def env_example() -> dict[str, tuple[str, bool]]:
    """Variable → (value, commented out) as written in .env.example."""
    found: dict[str, tuple[str, bool]] = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if m := ENV_LINE.match(line):
            assert m.group(1) not in found, f"{m.group(1)} appears twice in .env.example"
            found[m.group(1)] = (m.group(2), line.startswith("#"))
    return found


def readme_table() -> dict[str, tuple[str, str]]:
    """Variable → (default, meaning) from README's configuration table."""
    rows = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        if m := TABLE_ROW.match(line):
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def default_text(name: str) -> str | None:
    value = Settings.model_fields[name].default
    if value is None:
        return None
    if hasattr(value, "get_secret_value"):
        value = value.get_secret_value()
    return str(value).lower() if isinstance(value, bool) else str(value)


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def app_services() -> dict[str, dict]:
    """Compose services built from sheetflow's image."""
    return {n: s for n, s in compose()["services"].items() if "build" in s}


def one_shots() -> set[str]:
    return {n for n, s in compose()["services"].items() if s.get("restart") == "no"}


def test_env_example_documents_every_setting_and_nothing_else():
    """Every Settings field is in .env.example, and every variable there is a Settings field."""
    documented = set(env_example())
    assert FIELDS - documented == set(), "missing from .env.example"
    assert documented - FIELDS == set(), "unknown variables in .env.example"


def test_env_example_values_are_the_defaults():
    """A value in .env.example is the setting's default; an empty one means no default."""
    for var, (value, commented) in env_example().items():
        name = var.removeprefix("SHEETFLOW_").lower()
        expected = default_text(name)
        if value == "":
            assert expected is None and commented, f"{var} has a default ({expected}); write it"
        else:
            assert value == expected, f"{var}={value} but the default is {expected}"


def test_env_example_loads_to_the_default_settings():
    """Used as a .env file, .env.example yields exactly the default settings."""
    loaded = Settings(_env_file=ROOT / ".env.example")
    assert loaded.model_dump() == Settings(_env_file=None).model_dump()


def test_every_env_example_variable_has_a_comment_above_it():
    """Each variable line is preceded by a one-line explanation."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    for i, line in enumerate(lines):
        if ENV_LINE.match(line):
            above = lines[i - 1]
            assert above.startswith("# ") and not ENV_LINE.match(above), f"no comment above {line}"


def test_readme_table_documents_every_setting_with_its_default():
    """README's configuration table has one row per Settings field, its default and meaning."""
    rows = readme_table()
    assert set(rows) == FIELDS
    for var, (default, meaning) in rows.items():
        expected = default_text(var.removeprefix("SHEETFLOW_").lower())
        assert default == (f"`{expected}`" if expected is not None else "unset"), var
        assert len(meaning) > 10, f"{var} needs a meaning"


def test_readme_quick_start_commands():
    """The README carries the two quick-start commands, and .ci/run runs the test one."""
    readme = (ROOT / "README.md").read_text()
    test_command = "pip install -e '.[test]' && python -m pytest"
    assert "pip install -e . && sheetflow run examples/drawing-set.pdf" in readme
    assert test_command in readme
    ci = ROOT / ".ci" / "run"
    assert test_command in ci.read_text()
    assert ci.stat().st_mode & 0o111, ".ci/run must be executable"


def test_compose_runs_one_image_with_every_service():
    """Every service runs from the one image as `python -m services.<name>`, a real module."""
    services = app_services()
    assert {s["command"][2] for s in services.values()} == {
        f"services.{n}" for n in ("ingest", "extract", "coverage", "verify", "report", "webhooks")
    }
    for name, service in services.items():
        assert service["build"] == "." and service["image"] == "sheetflow:latest", name
        python, flag, module = service["command"]
        assert (python, flag) == ("python", "-m"), name
        assert importlib.util.find_spec(f"{module}.__main__"), f"{module} has no __main__"


def test_compose_sets_only_known_settings():
    """Every SHEETFLOW_ variable compose sets exists in Settings."""
    for name, service in app_services().items():
        env = service.get("environment") or {}
        assert isinstance(env, dict), f"{name}: use the mapping form for environment"
        unknown = {k for k in env if k.startswith("SHEETFLOW_")} - FIELDS
        assert not unknown, f"{name} sets unknown variables {unknown}"


def test_compose_secrets_are_required():
    """The S3 secret key, MinIO root password and API token must be set, never defaulted."""
    services = compose()["services"]
    required = re.compile(r"^\$\{[A-Z0-9_]+:\?[^}]+\}$")
    for name, service in app_services().items():
        assert required.match(service["environment"]["SHEETFLOW_S3_SECRET_KEY"]), name
    assert required.match(services["ingest"]["environment"]["SHEETFLOW_API_TOKEN"])
    assert required.match(services["minio"]["environment"]["MINIO_ROOT_PASSWORD"])


@pytest.mark.parametrize(
    "name", ["nats", "minio", "ingest", "extract", "coverage", "verify", "report", "webhooks"]
)
def test_compose_service_has_a_healthcheck(name):
    """Every long-running service declares a healthcheck command."""
    check = compose()["services"][name]["healthcheck"]
    assert check["test"][0] in ("CMD", "CMD-SHELL") and len(check["test"]) > 1


def test_compose_dependencies_wait_for_health():
    """depends_on waits for service_healthy (a one-shot: for its successful completion)."""
    services = compose()["services"]
    shots = one_shots()
    for name, service in services.items():
        for dep, spec in (service.get("depends_on") or {}).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            wanted = "service_completed_successfully" if dep in shots else "service_healthy"
            assert spec["condition"] == wanted, f"{name} → {dep}"
    for name in app_services():
        assert {"nats", "minio"} <= set(services[name]["depends_on"]), name


def test_compose_extract_has_two_replicas_and_jetstream_has_a_volume():
    """extract runs two replicas; NATS runs JetStream on a persistent volume, MinIO too."""
    spec = compose()
    services = spec["services"]
    assert services["extract"]["deploy"]["replicas"] == 2
    nats_cmd = services["nats"]["command"]
    assert "-js" in nats_cmd and nats_cmd[nats_cmd.index("-sd") + 1] == "/data"
    assert any(v.endswith(":/data") for v in services["nats"]["volumes"])
    assert any(v.endswith(":/data") for v in services["minio"]["volumes"])
    assert {"nats-data", "minio-data"} <= set(spec["volumes"])


def summary_field_names() -> set[str]:
    """Every field of the report's summary, nested ones as ``parent.child``."""
    names = set()
    for name, field in ReportSummary.model_fields.items():
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            names |= {f"{name}.{child}" for child in nested.model_fields}
        else:
            names.add(name)
    return names


def test_readme_defines_every_summary_field():
    """The README's report section has a row, with its definition, for every summary field."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The report", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\|\s*`([a-z_.]+)`\s*\|\s*([^|]+?)\s*\|\s*$", section, re.M))
    assert summary_field_names() == set(rows)
    assert all(len(definition) > 10 for definition in rows.values())
