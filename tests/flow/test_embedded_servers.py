"""The embedded servers answer only to the credentials generated for their data dir: the S3
port to its keys, NATS to its user, and no other port (weed's master, volume and filer, every
gRPC port, every unix socket) to anyone without the generated certificate."""

import contextlib
import functools
import glob
import socket
import ssl
import stat
import time
from pathlib import Path

import httpx
import nats
import psutil
import pytest
from minio import Minio
from minio.error import S3Error

from shared.infra.settings import Settings
from shared.infra.storage import ObjectStore
from sheetflow import runtime
from sheetflow.credentials import AUTH_DIR
from sheetflow.runtime import (
    EmbeddedServers,
    RuntimeStartError,
    launch_nats,
    launch_s3,
)

KEY, BODY = "jobs/j_x/source.pdf", b"%PDF-1.7 drawings only the keys may read"
# An HTTP/2 client preface and an empty SETTINGS frame: what a gRPC client opens with.
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


async def test_embedded_s3_refuses_anonymous_and_wrong_keys(servers: EmbeddedServers, settings):
    """Without keys, or with the development defaults, the bucket cannot be listed or read;
    the generated keys live owner-only in the data dir and are what the stack uses."""
    store = ObjectStore(settings)
    await store.ensure_bucket()
    await store.put_bytes("jobs/j_x/source.pdf", b"%PDF-1.7 drawings")
    endpoint, bucket = settings.s3_endpoint, settings.s3_bucket
    for url in (f"http://{endpoint}/{bucket}", f"http://{endpoint}/{bucket}/jobs/j_x/source.pdf"):
        r = httpx.get(url, timeout=10)
        assert r.status_code == 403, f"{url} answered {r.status_code} without keys"
    guessed = Minio(
        endpoint, access_key="sheetflow", secret_key="sheetflow-dev-secret", secure=False
    )
    try:
        list(guessed.list_objects(bucket, recursive=True))
        raise AssertionError("the development default keys were accepted")
    except S3Error as exc:
        assert exc.code in ("SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied")

    keys = servers.settings.data_dir.resolve() / AUTH_DIR / "credentials.env"
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    assert stat.S_IMODE(keys.parent.stat().st_mode) == 0o700
    text = keys.read_text()
    assert f"SHEETFLOW_S3_SECRET_KEY={settings.s3_secret_key.get_secret_value()}" in text
    assert f"SHEETFLOW_NATS_PASSWORD={settings.nats_password.get_secret_value()}" in text
    assert await store.get_bytes("jobs/j_x/source.pdf") == b"%PDF-1.7 drawings"


def listening(procs: list[psutil.Process]) -> tuple[set[int], set[str]]:
    """The TCP ports and unix socket paths the processes listen on."""
    ports: set[int] = set()
    paths: set[str] = set()
    for proc in procs:
        for conn in proc.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN:
                ports.add(conn.laddr.port)
        for conn in proc.net_connections(kind="unix"):
            if conn.laddr and not conn.raddr:
                paths.add(conn.laddr)
    return ports, paths


def attempts(bucket: str) -> list[tuple[str, str, bytes | None]]:
    """Reads, writes and deletes of the object and its bucket as S3, weed's filer, volume
    and master servers spell them."""
    return [
        ("GET", "/", None),
        ("GET", f"/{bucket}/{KEY}", None),  # S3, path style
        ("GET", f"/{bucket}?list-type=2", None),
        ("GET", f"/buckets/{bucket}/{KEY}", None),  # the filer
        ("GET", f"/buckets/{bucket}/?pretty=y", None),
        ("GET", "/1,0100000000", None),  # a volume server's file id
        ("GET", "/dir/status", None),  # the master
        ("GET", "/vol/status", None),
        ("GET", "/dir/assign", None),
        ("PUT", f"/{bucket}/{KEY}", b"forged"),
        ("POST", f"/buckets/{bucket}/{KEY}", b"forged"),
        ("PUT", f"/buckets/{bucket}/jobs/j_x/report.json", b"{}"),
        ("POST", "/submit", b"forged"),
        ("DELETE", f"/{bucket}/{KEY}", None),
        ("DELETE", f"/buckets/{bucket}/{KEY}", None),
        ("DELETE", f"/buckets/{bucket}/?recursive=true", None),
        ("GET", f"/col/delete?collection={bucket}", None),
    ]


def refused(client: httpx.Client, method: str, path: str, body: bytes | None) -> str | None:
    """None when the request is turned away (no connection, no TLS without a certificate, or
    400/401/403/405); otherwise what answered."""
    try:
        r = client.request(method, path, content=body, timeout=5)
    except (httpx.TransportError, ssl.SSLError, OSError):
        return None
    if r.status_code in (400, 401, 403, 405) and BODY not in r.content:
        return None
    return f"{method} {path} answered {r.status_code}: {r.content[:120]!r}"


def grpc_refused(connect) -> bool:
    """Whether a gRPC client (HTTP/2, in plain text and over TLS without a certificate)
    gets no HTTP/2 answer: a server speaking it answers the preface with a SETTINGS frame."""
    answers = []
    for tls in (False, True):
        try:
            with contextlib.closing(connect()) as raw:
                raw.settimeout(5)
                sock = raw
                if tls:
                    context = ssl.create_default_context()
                    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
                    context.set_alpn_protocols(["h2"])
                    sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
                sock.sendall(H2_PREFACE)
                answers.append(sock.recv(9))
        except (ssl.SSLError, OSError):
            answers.append(b"")
    return all(len(a) < 9 or a[3] != 0x04 for a in answers)


def tcp_answers(ports: set[int], s3_port: int, bucket: str) -> list[str]:
    """What answered the attempts through each TCP port, in plain HTTP, over TLS without a
    certificate, and (but on the S3 port) as a gRPC client."""
    answered = []
    for port in sorted(ports):
        for scheme in ("http", "https"):
            with httpx.Client(base_url=f"{scheme}://127.0.0.1:{port}", verify=False) as client:
                for method, path, body in attempts(bucket):
                    if (what := refused(client, method, path, body)) is not None:
                        answered.append(f"{scheme}://127.0.0.1:{port}: {what}")
        tcp = functools.partial(socket.create_connection, ("127.0.0.1", port))
        if port != s3_port and not grpc_refused(tcp):
            answered.append(f"127.0.0.1:{port} speaks gRPC without a certificate")
    return answered


def socket_answers(sockets: set[str], bucket: str) -> list[str]:
    """Unix sockets open to other users, and what answered the attempts through each."""
    assert sockets, "weed's unix sockets not found"
    answered = []
    for path in sorted(sockets):
        mode = Path(path).stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            answered.append(f"{path} is open to other users ({oct(stat.S_IMODE(mode))})")
        if "grpc" in path:

            def unix(p: str = path) -> socket.socket:
                sock = socket.socket(socket.AF_UNIX)
                sock.connect(p)
                return sock

            if not grpc_refused(unix):
                answered.append(f"{path} speaks gRPC without a certificate")
            continue
        transport = httpx.HTTPTransport(uds=path)
        with httpx.Client(base_url="http://weed", transport=transport) as client:
            for method, url_path, body in attempts(bucket):
                if (what := refused(client, method, url_path, body)) is not None:
                    answered.append(f"{path}: {what}")
    return answered


def world_readable_files(root: Path) -> list[Path]:
    """Files under ``root`` that a user other than the owner could read."""

    def open_to_others(path: Path) -> bool:
        return bool(path.stat().st_mode & stat.S_IROTH)

    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and open_to_others(path):
            parents = [p for p in path.parents if root in (p, *p.parents)]
            if all(p.stat().st_mode & stat.S_IXOTH for p in parents):
                found.append(path)
    return found


def secrets_of(settings: Settings, data_dir: Path) -> list[str]:
    """Every secret the embedded stack holds: its keys, passwords and private key."""
    auth = data_dir / AUTH_DIR
    assert settings.s3_secret_key and settings.nats_password
    values = [settings.s3_secret_key.get_secret_value(), settings.nats_password.get_secret_value()]
    for line in (auth / "weed" / "security.toml").read_text().splitlines():
        if line.startswith("key = ") and "/" not in line:  # a JWT signing key, not a path
            values.append(line.split('"')[1])
    key_pem = (auth / "weed" / "node.key").read_text()
    values.append("".join(key_pem.splitlines()[1:-1]))
    return values


async def test_no_port_of_the_embedded_stack_serves_without_credentials(
    servers: EmbeddedServers, settings
):
    """Every TCP port and unix socket the embedded NATS and S3 processes listen on is tried
    without credentials: NATS refuses the connection; each S3 server port refuses to read,
    write or delete the object, in plain HTTP and over TLS without the certificate, and no
    gRPC client gets an answer; the unix sockets are the owner's alone. The object is whole
    afterwards, and no file others can read holds a secret."""
    store = ObjectStore(settings)
    await store.ensure_bucket()
    await store.put_bytes(KEY, BODY)
    procs = [psutil.Process(p.pid) for p in servers.processes]
    ports, sockets = listening(procs)
    nats_port = int(settings.nats_url.rsplit(":", 1)[1])
    s3_port = int(settings.s3_endpoint.rsplit(":", 1)[1])
    assert {nats_port, s3_port} <= ports
    assert len(ports) >= 8, f"weed's master, volume, filer and gRPC ports not found: {ports}"

    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(settings.nats_url, allow_reconnect=False, connect_timeout=5)
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(
            settings.nats_url,
            user=settings.nats_user,
            password="sheetflow-dev-secret",
            allow_reconnect=False,
            connect_timeout=5,
        )

    answered = tcp_answers(ports - {nats_port}, s3_port, settings.s3_bucket)
    answered += socket_answers(sockets, settings.s3_bucket)
    assert not answered, "\n".join(answered)
    assert await store.get_bytes(KEY) == BODY
    assert await store.list_keys("jobs/") == [KEY]

    data_dir = servers.settings.data_dir.resolve()
    secrets = secrets_of(servers.settings, data_dir)
    leaks = [
        str(path)
        for path in world_readable_files(data_dir)
        if any(secret in path.read_text(errors="replace") for secret in secrets)
    ]
    assert not leaks, f"secrets in files others can read: {leaks}"


def test_a_second_server_on_the_same_data_dir_is_refused_with_the_holder_named(
    servers: EmbeddedServers,
):
    """Starting NATS or S3 on a data dir whose servers still run says which process holds
    it, instead of the server's own complaint about a lock."""
    data_dir = servers.settings.data_dir.resolve()
    pids = {str(p.pid) for p in servers.processes}
    for launch in (launch_nats, launch_s3):
        with pytest.raises(RuntimeStartError, match="is in use by process") as refused:
            launch(data_dir)
        assert any(pid in str(refused.value) for pid in pids)


def test_a_port_taken_before_a_server_binds_it_moves_the_server(tmp_path: Path, monkeypatch):
    """NATS and S3 whose chosen port another process took meanwhile start on other ports, and
    the settings say where; neither start fails."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        chosen = iter([taken, taken])  # the first choice of each server is the taken port
        choose = runtime.free_port
        monkeypatch.setattr(runtime, "free_port", lambda **kw: next(chosen, 0) or choose(**kw))
        servers = EmbeddedServers(Settings(_env_file=None, data_dir=tmp_path))
        first = servers.launch()
        try:
            assert first.nats_url and first.s3_endpoint
            assert first.nats_url.endswith(f":{taken}") and first.s3_endpoint.endswith(f":{taken}")
            assert servers.wait_ready() is True
            moved = servers.settings
            assert moved.nats_url and moved.s3_endpoint
            assert taken not in (
                int(moved.nats_url.rsplit(":", 1)[1]),
                int(moved.s3_endpoint.rsplit(":", 1)[1]),
            )
            assert all(proc.alive() for proc in servers.processes)
            assert len(servers.processes) == 2
        finally:
            servers.stop()


def weed_sockets(port: int) -> list[str]:
    offsets = (0, *runtime.WEED_PORT_OFFSETS)
    return [p for off in offsets for p in glob.glob(f"/tmp/seaweedfs-*-{port + off}.sock")]


def test_a_killed_weed_leaves_no_socket_behind(tmp_path: Path):
    """SIGKILLed, the embedded S3 server's unix sockets in /tmp go with it."""
    server = launch_s3(tmp_path).wait()
    port = int(server.address.rsplit(":", 1)[1])
    try:
        deadline = time.monotonic() + 10
        while not weed_sockets(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert weed_sockets(port), "weed made no socket to leave behind"
    finally:
        server.proc.kill()
    assert weed_sockets(port) == []
