"""The embedded servers' generated credentials, kept owner-only under the data dir: the S3
keys and NATS user and password (``credentials.env``), nats-server's configuration, and
SeaweedFS's S3 identities, certificates and ``security.toml``."""

import contextlib
import datetime
import ipaddress
import json
import os
import secrets
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pydantic import SecretStr

AUTH_DIR = "auth"  # under the data dir


def owner_only_dir(path: Path) -> Path:
    """``path``, a directory only its owner can enter (whatever made it before)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    return path


def auth_dir(data_dir: Path) -> Path:
    """The owner-only directory of the embedded servers' secrets under ``data_dir``."""
    return owner_only_dir(data_dir / AUTH_DIR)


def _write_owner_only(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, owner-only from the first byte (replacing what was there)."""
    scratch = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        scratch.unlink()
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    scratch.replace(path)


EXTERNAL_NATS_SETTINGS = (
    "nats_token",
    "nats_nkey_seed_file",
    "nats_creds_file",
    "nats_tls_ca_file",
    "nats_tls_cert_file",
    "nats_tls_key_file",
)
CREDENTIAL_NAMES = (
    "SHEETFLOW_S3_ACCESS_KEY",
    "SHEETFLOW_S3_SECRET_KEY",
    "SHEETFLOW_NATS_USER",
    "SHEETFLOW_NATS_PASSWORD",
)


def embedded_credentials(data_dir: Path) -> dict[str, str]:
    """The embedded servers' credentials (S3 keys, NATS user and password) by their
    ``SHEETFLOW_`` names: generated the first time, then kept (owner-only, in an owner-only
    directory) in ``auth/credentials.env`` under ``data_dir``, so a restarted server still
    opens its data and only whoever can read that file can reach the drawings and the jobs.
    The file is in ``SHEETFLOW_`` variable form, for a worker joining from another shell."""
    path = auth_dir(data_dir) / "credentials.env"
    with contextlib.suppress(FileNotFoundError):
        lines = path.read_text().splitlines()
        values = dict(line.split("=", 1) for line in lines if "=" in line)
        if all(values.get(name) for name in CREDENTIAL_NAMES):
            return {name: values[name] for name in CREDENTIAL_NAMES}
    values = {
        "SHEETFLOW_S3_ACCESS_KEY": f"sheetflow-{secrets.token_hex(4)}",
        "SHEETFLOW_S3_SECRET_KEY": secrets.token_urlsafe(32),
        "SHEETFLOW_NATS_USER": "sheetflow",
        "SHEETFLOW_NATS_PASSWORD": secrets.token_urlsafe(32),
    }
    _write_owner_only(path, "".join(f"{k}={v}\n" for k, v in values.items()).encode())
    return values


def link_key(data_dir: Path) -> str:
    """The key that signs the deployment's links (``SHEETFLOW_LINK_KEY``): generated the first
    time, then kept owner-only in ``auth/link.key`` under ``data_dir``, so a link stays valid
    across restarts and only whoever can read that file can sign one."""
    path = auth_dir(data_dir) / "link.key"
    with contextlib.suppress(FileNotFoundError):
        if key := path.read_text().strip():
            return key
    key = secrets.token_urlsafe(32)
    _write_owner_only(path, key.encode())
    return key


def embedded_s3_credentials(data_dir: Path) -> tuple[str, str]:
    """The embedded S3 server's access key and secret (see :func:`embedded_credentials`)."""
    values = embedded_credentials(data_dir)
    return values["SHEETFLOW_S3_ACCESS_KEY"], values["SHEETFLOW_S3_SECRET_KEY"]


def embedded_nats_login(data_dir: Path) -> dict[str, Any]:
    """The settings that log in to the embedded NATS of ``data_dir``: its user and password,
    and no other NATS credentials or TLS (those were meant for a server that is not it)."""
    values = embedded_credentials(data_dir)
    return {
        **dict.fromkeys(EXTERNAL_NATS_SETTINGS),
        "nats_user": values["SHEETFLOW_NATS_USER"],
        "nats_password": SecretStr(values["SHEETFLOW_NATS_PASSWORD"]),
    }


def nats_config(data_dir: Path) -> Path:
    """nats-server's configuration admitting only the generated user: in a file, not on the
    command line, which any local user can read."""
    values = embedded_credentials(data_dir)
    user, password = values["SHEETFLOW_NATS_USER"], values["SHEETFLOW_NATS_PASSWORD"]
    path = auth_dir(data_dir) / "nats.conf"
    text = f'authorization {{\n  user: "{user}"\n  password: "{password}"\n}}\n'
    _write_owner_only(path, text.encode())
    return path


def weed_identities(data_dir: Path, access: str, secret: str) -> Path:
    """weed's S3 identity file granting the one key pair everything."""
    path = auth_dir(data_dir) / "weed-identities.json"
    identity = {
        "name": "sheetflow",
        "credentials": [{"accessKey": access, "secretKey": secret}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }
    _write_owner_only(path, json.dumps({"identities": [identity]}).encode())
    return path


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: str,
    signer: ec.EllipticCurvePrivateKey,
    *extensions: tuple[x509.ExtensionType, bool],
) -> x509.Certificate:
    """A certificate of ``key`` for ``subject``, valid ten years, signed by ``signer``."""
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
    )
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signer, hashes.SHA256())


def _weed_certificate(directory: Path) -> tuple[Path, Path, Path]:
    """A CA certificate and one certificate (and key) it signed for 127.0.0.1, server and
    client alike: weed's servers demand it of each other on every internal port. The CA's
    key is thrown away once it has signed, so nothing else can ever be vouched for."""
    ca_path, cert_path, key_path = (directory / n for n in ("ca.crt", "node.crt", "node.key"))
    if ca_path.exists() and cert_path.exists() and key_path.exists():
        return ca_path, cert_path, key_path
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = "sheetflow embedded S3 CA"
    ca = _certificate(
        ca_name, ca_key, ca_name, ca_key, (x509.BasicConstraints(ca=True, path_length=0), True)
    )
    loopback = [x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")), x509.DNSName("localhost")]
    usage = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    node = _certificate(
        "sheetflow",
        key,
        ca_name,
        ca_key,
        (x509.SubjectAlternativeName(loopback), False),
        (x509.ExtendedKeyUsage(usage), False),
    )
    pem = serialization.Encoding.PEM
    plain = serialization.NoEncryption()
    _write_owner_only(key_path, key.private_bytes(pem, serialization.PrivateFormat.PKCS8, plain))
    _write_owner_only(cert_path, node.public_bytes(pem))
    _write_owner_only(ca_path, ca.public_bytes(pem))
    return ca_path, cert_path, key_path


def weed_security(data_dir: Path) -> Path:
    """The directory holding weed's ``security.toml`` (weed reads it from its working
    directory), so that only the S3 port serves anyone: every other port of weed (master,
    volume, filer and admin HTTP, every gRPC port) demands the generated client certificate,
    and the volume and filer servers also demand a JWT signed with a generated key for each
    read and write (the filer's unix socket speaks plain HTTP)."""
    directory = owner_only_dir(auth_dir(data_dir) / "weed")
    # TOML's basic strings are JSON's: json.dumps quotes a path whatever it holds.
    ca, cert, key = (json.dumps(str(path)) for path in _weed_certificate(directory))
    tls = f"cert = {cert}\nkey = {key}\n"
    jwt = ("jwt.signing", "jwt.signing.read", "jwt.filer_signing", "jwt.filer_signing.read")
    sections = [
        *(f'[{name}]\nkey = "{secrets.token_urlsafe(32)}"\n' for name in jwt),
        "[access]\nui = false\n",
        "[filer.expose_directory_metadata]\nenabled = false\n",
        f"[grpc]\nca = {ca}\n",
        *(
            f"[grpc.{part}]\n{tls}"
            for part in ("master", "volume", "filer", "s3", "admin", "worker", "client")
        ),
        f"[https.client]\nenabled = true\n{tls}ca = {ca}\n",
        *(f"[https.{part}]\n{tls}ca = {ca}\n" for part in ("master", "volume", "filer", "admin")),
    ]
    _write_owner_only(directory / "security.toml", "\n".join(sections).encode())
    return directory
