"""One settings object for every service: every knob is a ``SHEETFLOW_`` variable.

Documented in ``.env.example``; a test checks the two agree.
"""

import ipaddress
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from dotenv import dotenv_values
from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRETS = {"changeme", "change-me", "sheetflow-dev-secret", "set-me"}

# What a token may do, each role everything the one before it may: read jobs and reports;
# also upload; also correct; also manage webhooks and cancel others' jobs.
Role = Literal["reader", "submitter", "reviewer", "admin"]
# The name the single SHEETFLOW_API_TOKEN goes by (an admin), in logs and records.
LEGACY_TOKEN_NAME = "default"


class ApiToken(BaseModel):
    """One API token: its name (written to access logs and correction records; the value
    never is) and its role."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.@-]{1,64}$", examples=["ci-uploader"])
    role: Role
    token: SecretStr


class WebhookTarget(BaseModel):
    """A webhook subscription the deployment fixes (the API manages others)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,48}$", examples=["erp"])
    url: str = Field(pattern=r"^https?://[^/?#]+", examples=["https://erp.example.com/hooks"])
    events: list[str] = Field(min_length=1, examples=[["report.ready", "sheet.corrected"]])
    secret: SecretStr


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SHEETFLOW_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    environment: Literal["development", "production"] = "development"
    namespace: str = Field(
        "sheetflow",
        pattern=r"^[A-Za-z0-9_-]+$",
        description="subject prefix, stream name and KV/bucket prefix",
    )
    data_dir: Path = Path(".sheetflow")
    log_level: str = "INFO"
    restart_limit: int = Field(
        5, ge=0, description="crashes of one process `sheetflow up/run` restarts per window"
    )
    restart_window_s: float = Field(
        60.0, gt=0, description="the window, in seconds, the restart limit counts crashes in"
    )

    # NATS: unset url → `sheetflow up/run` starts an embedded server
    nats_url: str | None = Field(
        None, description="one server URL, or a comma-separated list of a cluster's servers"
    )
    nats_user: str | None = None
    nats_password: SecretStr | None = None
    nats_token: SecretStr | None = None
    nats_nkey_seed_file: Path | None = None
    nats_creds_file: Path | None = None
    nats_tls_ca_file: Path | None = None
    nats_tls_cert_file: Path | None = None
    nats_tls_key_file: Path | None = None

    # S3: unset endpoint → an embedded S3 server
    s3_endpoint: str | None = Field(None, description="host:port, no scheme")
    s3_access_key: str = "sheetflow"
    s3_secret_key: SecretStr = SecretStr("sheetflow-dev-secret")
    s3_bucket: str = "sheetflow"
    s3_secure: bool = False
    s3_region: str | None = None
    s3_ca_file: Path | None = None

    # Ingest API
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    api_token: SecretStr | None = Field(
        None, description="one token with the admin role (named 'default'), as before roles"
    )
    api_tokens: list[ApiToken] = Field(
        [],
        description='JSON list of {"name", "role", "token"} (role: reader|submitter|'
        "reviewer|admin)",
    )
    public_url: str | None = Field(
        None,
        pattern=r"^https?://[^/?#]+",
        description="where people and clients reach the deployment: the base of every link "
        "(events, webhooks, the screen); unset: links are relative",
    )
    link_key: SecretStr | None = Field(
        None,
        description="key of signed links (HMAC); `sheetflow up`/`run` generate one per data "
        "dir; unset elsewhere: no signed links",
    )
    link_max_s: int = Field(
        7 * 24 * 3600, ge=60, description="the longest a signed link may stay valid, seconds"
    )
    session_ttl_s: float = Field(
        12 * 3600.0, gt=0, description="how long a screen session lasts after sign-in, seconds"
    )
    max_upload_mb: int = 200
    max_pages: int = 2000
    active_content: Literal["strip", "refuse"] = Field(
        "strip", description="scripts, launch actions and embedded files in an upload"
    )
    keep_original_upload: bool = Field(
        False, description="keep the upload as received when active content was stripped"
    )
    intake_timeout_s: float = Field(
        60.0, gt=0, description="seconds to store an upload and queue its pages before a 503"
    )
    request_timeout_s: float = Field(
        8.0,
        gt=0,
        description="seconds an API request (other than an upload) and each of an upload's S3 "
        "calls wait on NATS or S3 before a 503",
    )
    inspect_workers: int = Field(4, ge=1, description="uploads inspected at once")
    inspect_timeout_s: float = Field(
        30.0, gt=0, description="seconds an upload's inspection may take (and wait for)"
    )
    inspect_max_mb: int = Field(
        1024, ge=64, description="memory an upload's inspection may allocate, MB"
    )
    inspect_quick_s: float = Field(
        1.0,
        ge=0,
        description="seconds of a first look at a small upload by inspectors of its own (0: "
        "none); one that needs longer gets the full inspection",
    )
    inspect_quick_workers: int = Field(
        2, ge=1, description="small uploads given a first look at once"
    )

    # Webhooks
    webhooks: list[WebhookTarget] = Field(
        [], description='JSON list of {"name", "url", "events", "secret"}, beside the API\'s'
    )
    webhook_allow_networks: list[str] = Field(
        [],
        description="networks (CIDR) a webhook may target beyond public addresses, e.g. "
        '["10.0.0.0/8"]; private, loopback and link-local ones are refused otherwise',
    )
    webhook_timeout_s: float = Field(
        10.0, gt=0, description="seconds a webhook target has to answer a delivery"
    )
    webhook_retry_for_s: float = Field(
        86400.0, gt=0, description="how long a delivery is retried before it is marked failed"
    )
    webhook_backoff_s: float = Field(
        5.0, gt=0, description="wait before a delivery's second attempt, doubling after"
    )
    webhook_backoff_max_s: float = Field(
        3600.0, gt=0, description="the longest wait between two attempts of a delivery"
    )
    webhook_max_response_bytes: int = Field(
        4096, ge=0, description="bytes of a target's answer read (the rest is never read)"
    )

    retention_days: float = Field(
        30.0, description="events and job state older than this are dropped from NATS"
    )
    stream_replicas: int = Field(
        1, ge=1, le=5, description="copies of the stream and KV bucket (3 on a NATS cluster)"
    )

    # Delivery
    max_deliver: int = Field(5, ge=1)
    ack_wait_s: float = 30.0
    in_progress_interval_s: float = 10.0
    retry_backoff_s: float = 1.0
    retry_backoff_max_s: float = 30.0
    outage_patience_s: float = Field(
        300.0, description="how long a stage waits out a NATS/S3 outage before failing the page"
    )
    stall_after_s: float = Field(
        120.0, description="a running job with no page progress this long is reported stalled"
    )
    report_cell_wait_s: float = Field(
        60.0,
        gt=0,
        description="seconds the report waits for extract to read pages again in their set's "
        "template cell before it writes the job's report without the answers still out",
    )

    # Extract
    extract_concurrency: int = Field(4, ge=1)
    job_window_pages: int = Field(
        16,
        ge=1,
        description="pages of one job waiting for extract at once; each page started queues "
        "the next, so jobs take turns (about twice the deployment's extract slots)",
    )
    text_layer_enabled: bool = Field(
        True, description="off: pages are treated as having no text layer (vision and OCR only)"
    )
    text_layer_min_chars: int = 20
    text_layer_max_chars: int = 12000
    page_image_max_px: int = 2048
    page_image_max_pixels: int = 16_000_000
    page_max_side_in: float = Field(
        200.0, description="pages with a longer side (inches) are refused as absurd"
    )
    max_image_pixels: int = Field(
        1_000_000_000,
        ge=1,
        description="pages holding an image of more pixels are failed (image_too_large)",
    )
    page_max_content_mb: int = Field(
        64, description="pages whose content streams inflate past this are refused"
    )
    page_render_timeout_s: float = Field(
        60.0, gt=0, description="seconds a page's render and text reading may take"
    )
    page_render_max_mb: int = Field(
        2048, ge=64, description="memory a page's render and text reading may allocate, MB"
    )
    ocr_enabled: bool = True
    fallback_max_objects: int = Field(
        200,
        # The verification contract's name for it, accepted as well.
        validation_alias=AliasChoices(
            "fallback_max_objects",
            "SHEETFLOW_FALLBACK_MAX_OBJECTS",
            "SHEETFLOW_EXTRACT_FALLBACK_MAX_OBJECTS",
        ),
    )

    # Model (OpenAI-compatible); unset base_url → offline extractor
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_extract_model: str | None = None
    llm_structure_model: str | None = None
    llm_verify_model: str | None = None
    llm_timeout_s: float = 120.0
    llm_max_retries: int = 4
    llm_max_tokens: int = Field(
        8192, description="completion token limit of extraction calls (the judge is not capped)"
    )
    extract_reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        None,
        description="a reasoning model's effort on extraction calls (sent where the server "
        "takes it); unset: the server's default",
    )
    extract_reasoning_max_tokens: int | None = Field(
        None,
        ge=1,
        description="tokens a reasoning model may think on an extraction call, on top of "
        "llm_max_tokens for the reply (sent where the server takes it)",
    )
    llm_concurrency: int = Field(8, ge=1, description="in-flight model calls per process")
    llm_structured_output: Literal["auto", "on", "off"] = Field(
        "auto",
        description="ask for replies in their JSON schema (response_format json_schema); auto: "
        "as the start-up check finds the server",
    )
    vision_max_tiles: int = Field(
        6, ge=0, description="tiles per page at most for the vision pass of a large sheet"
    )

    # Coverage
    extract_coverage_floor: float = Field(0.6, ge=0.0, le=1.0)
    extract_text_retry_enabled: bool = True
    extract_fallback_enabled: bool = True

    # Verify
    verify_text_max_chars: int = 8000
    verify_hi_dpi_crops: bool = True
    verify_crop_dpi: int = 300
    verify_crop_margin_pts: float = 36.0
    verify_max_images: int = 6
    verify_max_objects: int = 40
    verify_ocr_check: bool = Field(
        True,
        description="read a sample of each text page's claims with OCR from its render: the "
        "independent check of the default (offline) run",
    )
    verify_ocr_max_objects: int = Field(
        12, ge=0, description="objects per page the OCR check reads, besides the title block"
    )
    verify_ocr_lines_per_font: int = Field(
        1,
        ge=1,
        description="lines the OCR check reads of each font a page's claims are set in (a "
        "broken text encoding is a font's), the title block's counted",
    )

    @field_validator("link_key")
    @classmethod
    def _no_empty_key(cls, key: SecretStr | None) -> SecretStr | None:
        # compose passes an unset variable as empty: no key, not an empty one
        return key if key and key.get_secret_value() else None

    @field_validator("webhook_allow_networks")
    @classmethod
    def _networks(cls, networks: list[str]) -> list[str]:
        for network in networks:
            ipaddress.ip_network(network, strict=False)  # a ValueError names the bad one
        return networks

    @model_validator(mode="after")
    def _refuse_placeholders_in_production(self) -> "Settings":
        if self.environment == "production":
            if self.s3_secret_key.get_secret_value() in PLACEHOLDER_SECRETS:
                raise ValueError("SHEETFLOW_S3_SECRET_KEY holds a placeholder; set a real secret")
            if self.link_key and self.link_key.get_secret_value() in PLACEHOLDER_SECRETS:
                raise ValueError("SHEETFLOW_LINK_KEY holds a placeholder; set a real key")
            if self.api_token and self.api_token.get_secret_value() in PLACEHOLDER_SECRETS:
                raise ValueError("SHEETFLOW_API_TOKEN holds a placeholder; set a real token")
            for token in self.api_tokens:
                if token.token.get_secret_value() in PLACEHOLDER_SECRETS:
                    raise ValueError(f"API token {token.name!r} holds a placeholder")
        return self

    @model_validator(mode="after")
    def _tokens_are_told_apart(self) -> "Settings":
        # A name must say who acted, and a value must say which name it is.
        names = [t.name for t in self.tokens]
        if len(set(names)) != len(names):
            raise ValueError(f"API token names must differ: {sorted(names)}")
        values = [t.token.get_secret_value() for t in self.tokens]
        if len(set(values)) != len(values) or "" in values:
            raise ValueError("every API token needs a value of its own")
        return self

    @property
    def tokens(self) -> list[ApiToken]:
        """Every API token, the single SHEETFLOW_API_TOKEN among them as an admin."""
        legacy = (
            [ApiToken(name=LEGACY_TOKEN_NAME, role="admin", token=self.api_token)]
            if self.api_token
            else []
        )
        return legacy + self.api_tokens

    @property
    def stream_name(self) -> str:
        return self.namespace

    @property
    def nats_servers(self) -> list[str]:
        """The server URLs in ``nats_url``: a client tries each and fails over between them."""
        return nats_server_list(self.nats_url or "")

    @property
    def kv_bucket(self) -> str:
        return f"{self.namespace}-jobs"

    @property
    def structure_model(self) -> str | None:
        return self.llm_structure_model or self.llm_extract_model

    @property
    def model_configured(self) -> bool:
        return bool(self.llm_base_url and self.llm_extract_model)

    def subject(self, name: str) -> str:
        return f"{self.namespace}.{name}"


def variable_names() -> set[str]:
    """Every ``SHEETFLOW_`` variable a setting reads: its own name and the contract's."""
    names = set()
    for name, field in Settings.model_fields.items():
        names.add(f"SHEETFLOW_{name.upper()}")
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            names.update(str(a).upper() for a in alias.choices if str(a).startswith("SHEETFLOW_"))
    return names


def unknown_variables(
    environ: Mapping[str, str], env_file: Path | None = Path(".env")
) -> list[str]:
    """The ``SHEETFLOW_`` variables of the environment (and of the ``.env`` file) that name no
    setting: a misspelt one would otherwise be silently ignored."""
    given = set(environ)
    if env_file is not None and env_file.is_file():
        given |= {k for k in dotenv_values(env_file) if k}
    known = variable_names()
    return sorted(
        name
        for name in given
        if name.upper().startswith("SHEETFLOW_") and name.upper() not in known
    )


def warn_unknown_variables(
    log: logging.Logger, environ: Mapping[str, str] | None = None
) -> list[str]:
    """Log a warning naming every ``SHEETFLOW_`` variable that names no setting (at start)."""
    unknown = unknown_variables(os.environ if environ is None else environ)
    for name in unknown:
        log.warning("%s names no setting: it is ignored (see .env.example)", name)
    return unknown


def revealed_json(value: list[Any]) -> str:
    """A list setting as its environment variable holds it: JSON, secrets in clear (for a
    child process's environment, never for a log)."""

    def plain(item: Any) -> Any:
        if isinstance(item, BaseModel):
            return plain(item.model_dump())
        if isinstance(item, dict):
            return {k: plain(v) for k, v in item.items()}
        if isinstance(item, SecretStr):
            return item.get_secret_value()
        if isinstance(item, list):
            return [plain(i) for i in item]
        return item

    return json.dumps(plain(value))


def nats_server_list(urls: str) -> list[str]:
    """``"nats://a:4222, nats://b:4222"`` → ``["nats://a:4222", "nats://b:4222"]``."""
    return [url.strip() for url in urls.split(",") if url.strip()]
