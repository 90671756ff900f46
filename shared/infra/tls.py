"""TLS to NATS from the settings: apart from the broker, so a client that only connects
(the CLI following events) does not import the broker's stack."""

import ssl

from shared.infra.settings import Settings


def tls_context(settings: Settings) -> ssl.SSLContext | None:
    """TLS to NATS with the configured CA and client certificate, when any is set."""
    if not (settings.nats_tls_ca_file or settings.nats_tls_cert_file):
        return None
    ctx = ssl.create_default_context(
        cafile=str(settings.nats_tls_ca_file) if settings.nats_tls_ca_file else None
    )
    if settings.nats_tls_cert_file:
        ctx.load_cert_chain(
            str(settings.nats_tls_cert_file),
            str(settings.nats_tls_key_file) if settings.nats_tls_key_file else None,
        )
    return ctx
