"""One POST of a delivery to its target, bounded every way a target could hold it up: the
address checked (and connected to as checked), no redirect followed, a timeout over the
whole exchange, and no more of the answer read than a few bytes."""

import asyncio
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from shared.infra.webhooks import resolve_target


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    latency_ms: float
    error: str | None  # None: delivered
    final: bool  # no later attempt can change it (a refused target, a redirect)


@dataclass(frozen=True)
class Limits:
    allow_networks: list[str]
    timeout_s: float
    max_response_bytes: int


def _pinned(url: str, address: str) -> tuple[str, str]:
    """``url`` with its host replaced by the checked ``address``, and the Host header the
    target expects."""
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    port = f":{parts.port}" if parts.port else ""
    name = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else (parts.hostname or "")
    return parts._replace(netloc=f"{host}{port}").geturl(), f"{name}{port}"


async def _read_at_most(response: httpx.Response, limit: int) -> None:
    """Read the answer up to ``limit`` bytes and stop: what a target says is not needed, and a
    target must not be able to make us read forever."""
    if response.is_stream_consumed:  # an answer built in memory (a test's transport)
        return
    read = 0
    async for chunk in response.aiter_raw():
        read += len(chunk)
        if read >= limit:
            break


async def post(
    client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], limits: Limits
) -> Outcome:
    started = time.monotonic()

    def took() -> float:
        return round((time.monotonic() - started) * 1000, 1)

    addresses, refused = await resolve_target(url, limits.allow_networks)
    if refused:
        return Outcome(None, took(), f"target refused: {refused}", final=True)
    pinned, host = _pinned(url, addresses[0])
    # TLS is still checked against the name in the URL (SNI and the certificate's name).
    extensions = {"sni_hostname": urlsplit(url).hostname} if url.startswith("https") else {}
    status: int | None = None
    try:
        async with (
            asyncio.timeout(limits.timeout_s),
            client.stream(
                "POST",
                pinned,
                content=body,
                headers={**headers, "Host": host},
                extensions=extensions,
                follow_redirects=False,
            ) as response,
        ):
            status = response.status_code
            await _read_at_most(response, limits.max_response_bytes)
    except (TimeoutError, httpx.HTTPError) as exc:
        # An answer that came is the answer, however the rest of its body went.
        if status is None:
            error = (
                f"no answer within {limits.timeout_s:g}s"
                if isinstance(exc, TimeoutError)
                else f"{type(exc).__name__}: {exc}"[:300]
            )
            return Outcome(None, took(), error, final=False)
    if 200 <= status < 300:
        return Outcome(status, took(), None, final=True)
    if 300 <= status < 400:
        return Outcome(status, took(), f"redirect ({status}) not followed", final=True)
    return Outcome(status, took(), f"answered {status}", final=False)
