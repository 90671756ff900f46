"""The signature a delivery carries, in the form Stripe and GitHub use: an HMAC-SHA256 of the
timestamp and the body with the subscription's secret, so a receiver can tell the sender
knew the secret, the body is as sent, and the delivery is recent (a replayed capture is
not)."""

import hashlib
import hmac

SIGNATURE_HEADER = "Sheetflow-Signature"


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">``."""
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"
