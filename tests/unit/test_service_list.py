"""One list of services (``sheetflow.services.SERVICES``): the service packages, the launcher,
the host, the command line, compose and the Kubernetes manifests all name the same ones, and
the README says where a new one goes."""

import contextlib
import inspect
import io
import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from sheetflow import cli, host, runtime
from sheetflow.services import PIPELINE, SERVICES

ROOT = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"^services\.(\w+)$")


def _module_run(command: list[str]) -> str | None:
    """The service a container's command runs (``python -m services.NAME``), if any."""
    if command[:2] == ["python", "-m"] and (match := COMMAND.match(command[2])):
        return match.group(1)
    return None


def test_every_service_package_is_in_the_list_and_only_those():
    """A folder of ``services/`` that runs as ``python -m services.NAME`` is a listed
    service, and every listed service is such a folder; the pipeline is listed first."""
    runnable = {p.parent.name for p in (ROOT / "services").glob("*/__main__.py")}
    assert runnable == set(SERVICES) and len(SERVICES) == len(set(SERVICES))
    assert SERVICES[: len(PIPELINE)] == PIPELINE


def test_the_launcher_the_host_and_the_command_line_take_the_list():
    """The launcher starts the list by default, the host accepts exactly its names, and
    `sheetflow worker` refuses a name outside it, naming the list."""
    for launcher in (runtime.supervised_stack, runtime.running_stack):
        assert inspect.signature(launcher).parameters["services"].default is SERVICES
    assert _host_choices() == list(SERVICES)
    refused = CliRunner().invoke(cli.app, ["worker", "nope"])
    assert refused.exit_code != 0 and ", ".join(SERVICES) in refused.output


def _host_choices() -> list[str]:
    """The names `python -m sheetflow.host` accepts, from its usage line."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.suppress(SystemExit):
        host.main(["--not-a-service"])
    match = re.search(r"\{([\w,]+)\}", err.getvalue())
    assert match, err.getvalue()
    return match.group(1).split(",")


def test_compose_runs_every_service_with_its_healthcheck():
    """compose.yaml has one container per service, running it and checking its health by
    its name, and runs no service that is not listed."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    run = {name: _module_run(spec.get("command", [])) for name, spec in compose.items()}
    assert {service for service in run.values() if service} == set(SERVICES)
    for name in SERVICES:
        assert run[name] == name
        assert compose[name]["healthcheck"]["test"][1:4] == ["sheetflow", "healthcheck", name]


def test_the_kubernetes_base_deploys_every_service():
    """deploy/k8s/base lists a manifest per service, whose Deployment runs it and no other."""
    base = ROOT / "deploy" / "k8s" / "base"
    resources = yaml.safe_load((base / "kustomization.yaml").read_text())["resources"]
    deployed: dict[str, str | None] = {}
    for resource in resources:
        for doc in yaml.safe_load_all((base / resource).read_text()):
            if doc and doc["kind"] == "Deployment":
                [container] = doc["spec"]["template"]["spec"]["containers"]
                deployed[doc["metadata"]["name"]] = _module_run(container.get("command", []))
    services = {name: service for name, service in deployed.items() if service}
    assert services == {name: name for name in SERVICES}


def test_the_readme_says_where_a_new_service_goes():
    """README's "Adding a service" names the list and every place it is checked against."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Adding a service", 1)[1].split("\n## ", 1)[0]
    for place in (
        "sheetflow/services.py",
        "services/NAME/",
        "compose.yaml",
        "deploy/k8s/base/NAME.yaml",
        "kustomization.yaml",
        ".env.example",
        "tests/unit/test_service_list.py",
    ):
        assert place in section, place
