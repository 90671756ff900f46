"""Secrets kept out of what is printed, logged or served: credentials inside URLs."""

from urllib.parse import urlsplit, urlunsplit

REDACTED = "***"


def redact_url(url: str) -> str:
    """``url`` with any user name and password replaced by ``***`` (``nats://***@host:4222``);
    each URL of a comma-separated server list is redacted; text without user info comes back
    unchanged."""
    return ",".join(_redact_one(part) for part in url.split(","))


def _redact_one(url: str) -> str:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))
