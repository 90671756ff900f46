"""NATS credentials for auth tests: NKey seeds, and the decentralized (JWT) setup behind a
``.creds`` file: an operator, a system account, an account with JetStream and a user, each
claim signed by its issuer's NKey as nats-server checks it."""

import base64
import hashlib
import json
import os
import time
from pathlib import Path

import nkeys

UNLIMITED_ACCOUNT = {
    "subs": -1,
    "data": -1,
    "payload": -1,
    "imports": -1,
    "exports": -1,
    "wildcards": True,
    "conn": -1,
    "leaf": -1,
    "mem_storage": -1,  # JetStream on for the account
    "disk_storage": -1,
    "streams": -1,
    "consumer": -1,
}


def new_seed(prefix: int) -> bytes:
    return nkeys.encode_seed(os.urandom(32), prefix)


def public_key(seed: bytes) -> str:
    return nkeys.from_seed(bytearray(seed)).public_key.decode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def signed_jwt(issuer_seed: bytes, subject: str, name: str, nats: dict) -> str:
    """A NATS JWT for ``subject``, signed by ``issuer_seed``."""
    claims = {"iat": int(time.time()), "iss": public_key(issuer_seed), "sub": subject}
    claims |= {"name": name, "nats": {**nats, "version": 2}}
    digest = hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest()
    claims["jti"] = base64.b32encode(digest).decode().rstrip("=")
    signing_input = ".".join(
        _b64(json.dumps(part).encode()) for part in ({"typ": "JWT", "alg": "ed25519-nkey"}, claims)
    )
    signature = nkeys.from_seed(bytearray(issuer_seed)).sign(signing_input.encode())
    return f"{signing_input}.{_b64(signature)}"


def creds_setup(directory: Path) -> tuple[Path, Path]:
    """A server config trusting a fresh operator (accounts preloaded in memory) and the
    ``.creds`` file of a user of its JetStream-enabled account: (config, creds)."""
    operator = new_seed(nkeys.PREFIX_BYTE_OPERATOR)
    system, account = new_seed(nkeys.PREFIX_BYTE_ACCOUNT), new_seed(nkeys.PREFIX_BYTE_ACCOUNT)
    user = new_seed(nkeys.PREFIX_BYTE_USER)
    operator_pub, system_pub = public_key(operator), public_key(system)
    account_pub = public_key(account)
    config = directory / "operator.conf"
    config.write_text(
        f'operator: "{signed_jwt(operator, operator_pub, "op", {"type": "operator"})}"\n'
        f"system_account: {system_pub}\n"
        "resolver: MEMORY\n"
        "resolver_preload: {\n"
        f'  {system_pub}: "{signed_jwt(operator, system_pub, "SYS", {"type": "account"})}"\n'
        f'  {account_pub}: "'
        + signed_jwt(operator, account_pub, "app", {"type": "account", "limits": UNLIMITED_ACCOUNT})
        + '"\n}\n'
    )
    user_jwt = signed_jwt(
        account,
        public_key(user),
        "svc",
        {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1},
    )
    creds = directory / "svc.creds"
    creds.write_text(
        f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{user.decode()}\n------END USER NKEY SEED------\n"
    )
    return config, creds
