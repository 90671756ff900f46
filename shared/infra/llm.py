"""The OpenAI-compatible chat client every service uses (extract and verify).

One ``POST {base}/chat/completions`` per call, with bounded retries (exponential backoff
with jitter, or the server's own small ``Retry-After``) on 429, 5xx, timeouts, connection
errors and malformed replies; a per-process limit on calls in flight; and a clean fallback
for servers that reject ``response_format``. Errors never carry the API key.

A call that gives its reply's JSON schema asks for it (``response_format`` of type
``json_schema``) where the server supports structured output: the start-up model check
asks the server once (``check_model_server``) and hands the answer to the services
(``SHEETFLOW_LLM_STRUCTURED_OUTPUT``); a client left to find out (``auto``) asks on its first
such call and remembers a refusal. Replies are parsed tolerantly either way: a server may
accept the schema and ignore it.
"""

import asyncio
import base64
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from shared.contracts.interfaces import ChatResult, LLMError
from shared.contracts.models import Usage
from shared.infra.settings import Settings

log = logging.getLogger("sheetflow.llm")

RETRYABLE_STATUS = {408, 409, 425, 429}
# A Retry-After longer than this is not honoured as-is: the exponential backoff applies.
RETRY_AFTER_MAX_S = 30.0
# Words in a 400/422 body that say the server does not support JSON mode.
JSON_MODE_HINTS = ("response_format", "json_object", "json_schema", "json mode", "json_mode")
# The schema the start-up check asks for: any server that supports structured output can
# answer it in a few tokens.
PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
PROBE_MAX_TOKENS = 16


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


class _JsonModeRejected(Exception):
    pass


class _ReasoningRejected(Exception):
    """The server refused the reasoning fields (400/422 naming them)."""


def image_part(data: bytes, mime: str = "image/png") -> dict:
    """An image content part carrying ``data`` as a base64 data URL."""
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}


# The fields a reasoning request adds: OpenAI's effort, and the reasoning object other
# OpenAI-compatible servers (OpenRouter, LiteLLM) take for effort and a thinking budget.
REASONING_FIELDS = frozenset({"reasoning_effort", "reasoning"})


def reasoning_fields(reasoning: dict[str, Any]) -> dict[str, Any]:
    """The request fields for ``reasoning`` (``effort``, ``max_tokens``; either may be unset)."""
    given = {k: v for k, v in reasoning.items() if v is not None}
    fields: dict[str, Any] = {"reasoning": given} if given else {}
    if given.get("effort"):
        fields["reasoning_effort"] = given["effort"]
    return fields


def schema_format(schema: dict[str, Any], name: str = "reply") -> dict[str, Any]:
    """The ``response_format`` asking for a reply in ``schema`` (OpenAI's structured output;
    not strict, so servers that check schemas strictly accept a loose one)."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date: the exponential backoff decides


class LLMClient:
    """Chat completions against ``settings.llm_base_url``. Pass ``http`` to share a client
    (it is then not closed by :meth:`aclose`)."""

    def __init__(self, settings: Settings, http: httpx.AsyncClient | None = None):
        self._settings = settings
        self._http = http or httpx.AsyncClient()
        self._owns_http = http is None
        self._semaphore = asyncio.Semaphore(settings.llm_concurrency)
        self._json_mode_supported = True
        self._reasoning_supported = True
        # Whether the server takes a json_schema response_format: None until known.
        self._structured: bool | None = {"on": True, "off": False}.get(
            settings.llm_structured_output
        )
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
        self._key = key
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._wait_backoff = wait_exponential_jitter(
            initial=settings.retry_backoff_s, max=settings.retry_backoff_max_s
        )

    async def chat(
        self,
        *,
        model: str,
        messages: list[dict],
        max_tokens: int | None = None,
        json_mode: bool = True,
        schema: dict[str, Any] | None = None,
        reasoning: dict[str, Any] | None = None,
    ) -> ChatResult:
        """One chat completion; raises :class:`LLMError` when it cannot be had. With a
        ``schema``, the reply is asked in it where the server supports structured output,
        else in JSON mode (``json_mode``), else as it comes. ``reasoning`` (``effort``,
        ``max_tokens``) is sent as ``reasoning_effort`` and ``reasoning`` where the server
        takes them; a server that refuses them is not asked again."""
        base_url = self._settings.llm_base_url
        if not base_url:
            raise LLMError("no model server is configured (SHEETFLOW_LLM_BASE_URL is unset)")
        url = f"{base_url.rstrip('/')}/chat/completions"
        payload: dict[str, Any] = {"model": model, "messages": messages}
        if max_tokens:
            payload["max_tokens"] = max_tokens
        if reasoning and self._reasoning_supported:
            payload |= reasoning_fields(reasoning)
            try:
                return await self._formatted(url, payload, json_mode, schema)
            except _ReasoningRejected:
                self._reasoning_supported = False
                log.info("model server rejected the reasoning fields; not sent again")
                payload = {k: v for k, v in payload.items() if k not in REASONING_FIELDS}
        return await self._formatted(url, payload, json_mode, schema)

    async def _formatted(
        self, url: str, payload: dict[str, Any], json_mode: bool, schema: dict[str, Any] | None
    ) -> ChatResult:
        """The call in the reply format the server takes: the schema, JSON mode, or none."""
        if schema is not None and self._structured is not False:
            try:
                answer = await self._with_retries(
                    url, {**payload, "response_format": schema_format(schema)}
                )
            except _JsonModeRejected:
                # Remembered for this client, like JSON mode below.
                self._structured = False
                log.info("model server rejected a json_schema response_format; not asked again")
            else:
                self._structured = True
                return answer
        if json_mode and self._json_mode_supported:
            try:
                json_payload = {**payload, "response_format": {"type": "json_object"}}
                return await self._with_retries(url, json_payload)
            except _JsonModeRejected:
                # Remembered for this client: the server will not learn JSON mode mid-run.
                self._json_mode_supported = False
                log.info("model server rejected response_format; continuing without JSON mode")
        return await self._with_retries(url, payload)

    async def aclose(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._owns_http:
            await self._http.aclose()

    async def _with_retries(self, url: str, payload: dict) -> ChatResult:
        attempts = self._settings.llm_max_retries + 1
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=self._wait,
            retry=retry_if_exception_type(_Retryable),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._post_once(url, payload)
        except _Retryable as exc:
            raise LLMError(f"the model server failed {attempts} times; last: {exc}") from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if (
            isinstance(exc, _Retryable)
            and exc.retry_after is not None
            and exc.retry_after <= RETRY_AFTER_MAX_S
        ):
            return exc.retry_after
        return self._wait_backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning("model call attempt %d failed (%s); retrying", state.attempt_number, exc)

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    async def _post_once(self, url: str, payload: dict) -> ChatResult:
        async with self._semaphore:
            try:
                response = await self._http.post(
                    url,
                    json=payload,
                    headers=self._headers,
                    timeout=self._settings.llm_timeout_s,
                )
            except httpx.TimeoutException:
                raise _Retryable(f"no answer within {self._settings.llm_timeout_s:g} s") from None
            except httpx.TransportError as exc:
                raise _Retryable(
                    self._redact(f"could not reach the model server ({type(exc).__name__}: {exc})")
                ) from None
        body = self._redact(response.text[:300])
        status = response.status_code
        if status in RETRYABLE_STATUS or status >= 500:
            raise _Retryable(f"HTTP {status}: {body}", _retry_after(response))
        if (
            status in (400, 422)
            and "response_format" in payload
            and any(hint in body.lower() for hint in JSON_MODE_HINTS)
        ):
            raise _JsonModeRejected()
        if status in (400, 422) and "reasoning" in body.lower() and REASONING_FIELDS & set(payload):
            raise _ReasoningRejected()
        if status >= 400:
            raise LLMError(f"the model server refused the request (HTTP {status}): {body}")
        return self._parse(response, body)

    @staticmethod
    def _parse(response: httpx.Response, body: str) -> ChatResult:
        try:
            data = response.json()
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
            usage = data.get("usage") or {}
            return ChatResult(
                content=content,
                finish_reason=choice.get("finish_reason"),
                usage=Usage(
                    calls=1,
                    prompt_tokens=int(usage.get("prompt_tokens") or 0),
                    completion_tokens=int(usage.get("completion_tokens") or 0),
                ),
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            # Proxies answer 200 with HTML or an error object under load: worth a retry.
            raise _Retryable(f"malformed response: {body[:120]}") from None


@contextlib.asynccontextmanager
async def model_client(settings: Settings) -> AsyncIterator[LLMClient | None]:
    """The client of the configured model server, closed on the way out; None when no server
    is configured (pages are then read offline and judged by the oracle alone)."""
    if not settings.llm_base_url:
        yield None
        return
    client = LLMClient(settings)
    try:
        yield client
    finally:
        await client.aclose()


def configured_models(settings: Settings) -> list[str]:
    """Every model the settings name (extract, structure, verify), each once."""
    named = (settings.llm_extract_model, settings.structure_model, settings.llm_verify_model)
    return list(dict.fromkeys(m for m in named if m))


def model_settings_warnings(settings: Settings) -> list[str]:
    """Sentences for a model configuration that half-works: models named without a server,
    or a server without a model for rung 1."""
    named = configured_models(settings)
    if named and not settings.llm_base_url:
        return [
            (
                f"model {', '.join(named)} is named but SHEETFLOW_LLM_BASE_URL is not set: no "
                "model is used; pages are read offline"
            )
        ]
    if settings.llm_base_url and not settings.llm_extract_model:
        return [
            (
                f"SHEETFLOW_LLM_BASE_URL is set ({settings.llm_base_url}) but "
                "SHEETFLOW_LLM_EXTRACT_MODEL is not: pages are read offline, without the vision "
                "pass"
            )
        ]
    return []


def check_model_server(
    settings: Settings, *, timeout: float = 10.0, transport: httpx.BaseTransport | None = None
) -> bool | None:
    """Raise :class:`LLMError` naming the URL and the model unless the configured server
    answers and knows every configured model: its model list (``GET /models``) is asked
    first; a server without one is asked for a one-token completion per model instead.

    Returns whether the server takes a ``json_schema`` response_format (asked once, with the
    first configured model, when ``settings.llm_structured_output`` is ``auto``); None when
    that was not asked or the answer says neither."""
    models = configured_models(settings)
    if not (settings.llm_base_url and models):
        return None
    base = settings.llm_base_url.rstrip("/")
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}

    def redact(text: str) -> str:
        return text.replace(key, "***") if key else text

    with httpx.Client(headers=headers, timeout=timeout, transport=transport) as http:
        try:
            listing = http.get(f"{base}/models")
            if listing.status_code in (401, 403):
                raise LLMError(
                    f"the model server at {base} refused the API key (HTTP "
                    f"{listing.status_code}); check SHEETFLOW_LLM_API_KEY"
                )
            if listing.status_code == 200 and (offered := _model_ids(listing)) is not None:
                missing = [m for m in models if m not in offered]
                if missing:
                    shown = ", ".join(sorted(offered)[:10]) or "none"
                    raise LLMError(
                        f"the model server at {base} does not know model {', '.join(missing)} "
                        f"(it offers: {shown})"
                    )
            else:
                for model in models:  # no model list here: one tiny completion per model
                    payload = {"model": model, "messages": [{"role": "user", "content": "ok"}]}
                    url = f"{base}/chat/completions"
                    answer = http.post(url, json={**payload, "max_tokens": 1})
                    if answer.status_code != 200:
                        raise LLMError(
                            f"the model server at {base} cannot run model {model} (HTTP "
                            f"{answer.status_code}: {redact(answer.text[:200])})"
                        )
            if settings.llm_structured_output != "auto":
                return None
            return _takes_schema(http, base, models[0])
        except httpx.HTTPError as exc:
            raise LLMError(
                f"the model server at {base} does not answer ({type(exc).__name__}); "
                f"model {', '.join(models)} cannot be used"
            ) from None


def _takes_schema(http: httpx.Client, base: str, model: str) -> bool | None:
    """Whether the server answers a completion asked in a JSON schema (True), refuses it for
    its ``response_format`` (False), or says neither (None: the services find out)."""
    payload = {
        "model": model,
        "messages": [{"role": "user", "content": 'Reply {"ok": true}'}],
        "max_tokens": PROBE_MAX_TOKENS,
        "response_format": schema_format(PROBE_SCHEMA, "probe"),
    }
    answer = http.post(f"{base}/chat/completions", json=payload)
    if answer.status_code == 200:
        return True
    if answer.status_code in (400, 422) and any(
        hint in answer.text.lower() for hint in JSON_MODE_HINTS
    ):
        return False
    return None


def _model_ids(response: httpx.Response) -> set[str] | None:
    """The model ids of an OpenAI-style ``/models`` answer, or None when it is not one."""
    try:
        return {str(m["id"]) for m in response.json()["data"]}
    except (ValueError, KeyError, TypeError):
        return None
