"""Signed links: a URL to something a reader may read that works without a token until it
expires, for a person to hand to someone who has none. The signature is an HMAC-SHA256, keyed
with the deployment's link key (``SHEETFLOW_LINK_KEY``; ``sheetflow up`` and ``run`` generate
one per data dir), of the method, the path, the resource's own query, the expiry and who made
the link; another path, a changed query or expiry, or a past expiry is refused."""

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import urlencode

# The query parameters a signed link adds to the resource's own.
EXPIRES, BY, SIGNATURE = "expires", "by", "signature"
LINK_PARAMS = (EXPIRES, BY, SIGNATURE)


@dataclass(frozen=True)
class LinkRefused(Exception):
    """Why a signed link does not open: ``expired`` or ``bad_signature``."""

    error: str
    detail: str


def _message(path: str, query: dict[str, str], expires: int, by: str) -> bytes:
    own = urlencode(sorted((k, v) for k, v in query.items() if k not in LINK_PARAMS))
    return f"GET\n{path}\n{own}\n{expires}\n{by}".encode()


def signature(key: str, path: str, query: dict[str, str], expires: int, by: str) -> str:
    return hmac.new(key.encode(), _message(path, query, expires, by), hashlib.sha256).hexdigest()


def signed_query(key: str, path: str, query: dict[str, str], expires: int, by: str) -> str:
    """The query of the signed link: the resource's own parameters, then expiry, maker and
    signature."""
    own = [(k, v) for k, v in query.items() if k not in LINK_PARAMS]
    mark = signature(key, path, query, expires, by)
    return urlencode([*own, (EXPIRES, str(expires)), (BY, by), (SIGNATURE, mark)])


def is_signed(query: dict[str, str]) -> bool:
    return SIGNATURE in query


def verify(key: str, path: str, query: dict[str, str], now: float) -> str:
    """Who made the signed link (its ``by``), when ``query`` signs ``path`` and has not
    expired; ``LinkRefused`` otherwise. The signature is compared in constant time, and
    before the expiry is believed."""
    given, by, expires = query.get(SIGNATURE, ""), query.get(BY, ""), query.get(EXPIRES, "")
    if not expires.isdigit():
        raise LinkRefused("bad_signature", "The link's signature does not match it.")
    expected = signature(key, path, query, int(expires), by)
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise LinkRefused("bad_signature", "The link's signature does not match it.")
    if int(expires) <= now:
        raise LinkRefused("link_expired", "The link has expired; ask for a new one.")
    return by
