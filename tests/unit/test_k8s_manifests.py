"""The Kubernetes manifests (deploy/k8s) render, and agree with compose.yaml, the settings and
the consumers the code declares."""

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from faststream.nats.subscriber.usecases.basic import LogicSubscriber
from pydantic import ValidationError

from services.extract.app import create_app as create_extract_app
from shared.infra.settings import Settings, nats_server_list
from sheetflow.runtime import find_binary
from sheetflow.services import SERVICES
from tests.unit.test_config_docs import FIELDS, app_services

ROOT = Path(__file__).resolve().parents[2]
OVERLAY = ROOT / "deploy" / "k8s" / "overlays" / "small"


def render_command() -> list[str] | None:
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize", str(OVERLAY)]
    if shutil.which("kustomize"):
        return ["kustomize", "build", str(OVERLAY)]
    return None


@cache
def rendered() -> tuple[dict, ...]:
    command = render_command()
    if command is None:
        pytest.skip("neither kubectl nor kustomize is on PATH to render deploy/k8s")
    out = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return tuple(doc for doc in yaml.safe_load_all(out.stdout) if doc)


def of_kind(kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in rendered() if d["kind"] == kind}


def one(kind: str, name: str) -> dict:
    found = of_kind(kind)
    assert name in found, f"no {kind} {name}; have {sorted(found)}"
    return found[name]


def container(deployment: dict) -> dict:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


def settings_map() -> dict[str, str]:
    """The shared settings ConfigMap (its generated name carries a hash suffix)."""
    (data,) = [
        cm["data"]
        for name, cm in of_kind("ConfigMap").items()
        if name.startswith("sheetflow-settings")
    ]
    return data


def secret_keys() -> set[str]:
    secret = one("Secret", "sheetflow-secrets")
    return set(secret.get("stringData", {})) | set(secret.get("data", {}))


def env_names(deployment: dict) -> set[str]:
    """Every variable the container gets: its own env and the ConfigMap/Secret it loads."""
    spec = container(deployment)
    names = {e["name"] for e in spec.get("env", [])}
    for source in spec.get("envFrom", []):
        if "configMapRef" in source:
            assert source["configMapRef"]["name"] in of_kind("ConfigMap")
            names |= set(settings_map())
        if "secretRef" in source:
            assert source["secretRef"]["name"] == "sheetflow-secrets"
            names |= secret_keys()
    return names


def namespace() -> str:
    (ns,) = of_kind("Namespace")
    assert all(d["metadata"].get("namespace") == ns for d in rendered() if d["kind"] != "Namespace")
    return ns


def service_port(name: str, port: int) -> bool:
    service = of_kind("Service").get(name)
    if not service:
        return False
    return port in {p["port"] for p in service["spec"]["ports"]}


def nats_pods() -> list[str]:
    """``nats-0.nats-headless`` ... : the stable DNS name of every NATS node."""
    nats = one("StatefulSet", "nats")
    headless = nats["spec"]["serviceName"]
    assert one("Service", headless)["spec"]["clusterIP"] == "None"
    return [f"nats-{i}.{headless}" for i in range(nats["spec"]["replicas"])]


def test_overlay_renders_every_part():
    """The overlay renders NATS, MinIO, the five services, settings, secrets and the scaler."""
    assert set(of_kind("Deployment")) == set(SERVICES)
    assert {"nats", "minio"} <= set(of_kind("StatefulSet"))
    assert "extract" in of_kind("ScaledObject")
    assert settings_map() and secret_keys()
    assert namespace()


@pytest.mark.parametrize("name", SERVICES)
def test_every_deployment_has_probes_and_resources(name):
    """Readiness and liveness probes, CPU and memory requests, a memory limit."""
    spec = container(one("Deployment", name))
    assert spec.get("readinessProbe") and spec.get("livenessProbe"), name
    resources = spec["resources"]
    assert {"cpu", "memory"} <= set(resources["requests"]), name
    assert "memory" in resources["limits"], name


@pytest.mark.parametrize("name", SERVICES)
def test_deployments_run_compose_images_and_commands(name):
    """Each Deployment runs the compose service's image and command."""
    compose = app_services()[name]
    spec = container(one("Deployment", name))
    assert spec["command"] == compose["command"]
    repository, _, tag = spec["image"].rpartition(":")
    compose_repository, _, compose_tag = compose["image"].rpartition(":")
    assert repository.rsplit("/", 1)[-1] == compose_repository, spec["image"]
    assert tag == compose_tag


@pytest.mark.parametrize("name", SERVICES)
def test_deployments_set_every_variable_compose_sets(name):
    """Every variable compose gives a service a value is given to its Deployment too
    (compose's pass-through ones without a value are optional)."""
    compose_env = app_services()[name]["environment"]
    required = {k for k, v in compose_env.items() if k.startswith("SHEETFLOW_") and v is not None}
    assert required - env_names(one("Deployment", name)) == set()


def test_manifests_set_only_known_settings():
    """Every SHEETFLOW_ variable in the ConfigMap, the Secret and any env is a setting."""
    names = set(settings_map()) | secret_keys()
    for deployment in of_kind("Deployment").values():
        names |= {e["name"] for e in container(deployment).get("env", [])}
    sheetflow = {n for n in names if n.startswith("SHEETFLOW_")}
    assert sheetflow == names
    assert sheetflow - FIELDS == set()


def test_settings_load_and_secrets_refuse_to_start_as_placeholders():
    """The ConfigMap loads as Settings; with the Secret's placeholders production refuses to
    start, so nothing runs until real secrets are set."""
    secret = one("Secret", "sheetflow-secrets")["stringData"]
    env = {**settings_map(), **secret}
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(
            _env_file=None, **{k.removeprefix("SHEETFLOW_").lower(): v for k, v in env.items()}
        )
    real = {
        **env,
        "SHEETFLOW_S3_SECRET_KEY": "x" * 32,
        "SHEETFLOW_API_TOKEN": "y" * 32,
        "SHEETFLOW_LINK_KEY": "z" * 32,
    }
    settings = Settings(
        _env_file=None, **{k.removeprefix("SHEETFLOW_").lower(): v for k, v in real.items()}
    )
    assert settings.environment == "production"


def test_services_connect_to_every_nats_node_and_keep_three_copies():
    """SHEETFLOW_NATS_URL lists every NATS node; the stream has as many replicas as nodes."""
    data = settings_map()
    urls = [urlsplit(u) for u in nats_server_list(data["SHEETFLOW_NATS_URL"])]
    assert [u.hostname for u in urls] == nats_pods()
    assert all(u.port == 4222 and service_port("nats-headless", 4222) for u in urls)
    assert int(data["SHEETFLOW_STREAM_REPLICAS"]) == len(nats_pods()) == 3


def test_s3_endpoint_is_a_service_of_the_overlay():
    """SHEETFLOW_S3_ENDPOINT (host:port) is the MinIO Service the overlay runs."""
    host, port = settings_map()["SHEETFLOW_S3_ENDPOINT"].split(":")
    assert service_port(host, int(port))
    minio = container(one("StatefulSet", "minio"))
    refs = {e["valueFrom"]["secretKeyRef"]["key"] for e in minio["env"]}
    assert refs == {"SHEETFLOW_S3_ACCESS_KEY", "SHEETFLOW_S3_SECRET_KEY"}


@pytest.mark.parametrize("name", [n for n in SERVICES if n != "ingest"])
def test_worker_probes_ask_every_nats_node_about_this_worker(name):
    """A worker's probes run `sheetflow healthcheck <name>` against every NATS node's monitor."""
    spec = container(one("Deployment", name))
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        command = spec[probe]["exec"]["command"]
        assert command[:3] == ["sheetflow", "healthcheck", name], probe
        monitors = [urlsplit(u) for u in nats_server_list(command[command.index("--monitor") + 1])]
        assert [m.hostname for m in monitors] == nats_pods()
        assert all(m.port == 8222 for m in monitors)


def test_nats_config_is_valid_and_routes_to_every_node(tmp_path):
    """nats-server (the pip-installed one) accepts the rendered config; its routes are the
    StatefulSet's pods and its server name is the pod's."""
    conf = one("ConfigMap", "nats-config")["data"]["nats.conf"]
    for pod in nats_pods():
        assert f"nats://{pod}:6222" in conf
    assert "server_name: $POD_NAME" in conf
    env_names_ = {e["name"] for e in container(one("StatefulSet", "nats"))["env"]}
    assert "POD_NAME" in env_names_
    path = tmp_path / "nats.conf"
    path.write_text(conf)
    checked = subprocess.run(
        [find_binary("nats-server"), "-t", "-c", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "POD_NAME": "nats-0"},
    )
    assert checked.returncode == 0, checked.stderr + checked.stdout


def extract_consumers(stream_namespace: str) -> dict[str | None, str]:
    """Durable consumer → subject, as the extract service declares them."""
    settings = Settings(
        _env_file=None, namespace=stream_namespace, nats_url="nats://unused:4222", s3_endpoint="x:1"
    )
    broker = create_extract_app(settings).broker
    assert broker is not None
    return {
        sub.config.durable_name: sub.subject.template
        for sub in broker.subscribers
        if isinstance(sub, LogicSubscriber)
    }


def test_keda_scales_extract_on_its_real_consumers():
    """The ScaledObject scales the extract Deployment from 1 to a set maximum on the backlog of
    the stream and durable consumers the extract service really uses, through the monitoring
    port of the NATS nodes in this namespace."""
    scaled = one("ScaledObject", "extract")["spec"]
    assert scaled["scaleTargetRef"]["name"] == "extract" and "extract" in of_kind("Deployment")
    assert scaled["minReplicaCount"] == 1 and scaled["maxReplicaCount"] > 1
    assert "replicas" not in one("Deployment", "extract")["spec"], "KEDA owns the replica count"

    ns = settings_map()["SHEETFLOW_NAMESPACE"]
    stream = Settings(_env_file=None, namespace=ns).stream_name
    consumers = extract_consumers(ns)
    triggers = scaled["triggers"]
    assert triggers and all(t["type"] == "nats-jetstream" for t in triggers)
    for trigger in triggers:
        meta = trigger["metadata"]
        assert meta["stream"] == stream
        assert meta["consumer"] in consumers, f"{meta['consumer']} is no extract consumer"
        assert meta["account"] == "$G"
        assert int(meta["lagThreshold"]) >= 1
        host, port = meta["natsServerMonitoringEndpoint"].split(":")
        headless = one("StatefulSet", "nats")["spec"]["serviceName"]
        assert host == f"{headless}.{namespace()}.svc.cluster.local"
        assert service_port(headless, int(port))
    page_extract = Settings(_env_file=None, namespace=ns).subject("page.extract")
    assert consumers[triggers[0]["metadata"]["consumer"]] == page_extract
