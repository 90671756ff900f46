"""Sessions of people signed in to the screen: a person gives their token once and gets a
session id in a cookie (HttpOnly, ``SameSite=Strict``); the server keeps the session (the
token's name and role, its CSRF token, when it expires) in the job state store under the id's
hash, so nothing of the token reaches the browser, every ingest process knows the session, and
signing out or expiring ends it on the server. A session whose token the deployment no longer
has (or whose role changed) ends at its next request."""

import hashlib
import secrets
from datetime import datetime, timedelta

from pydantic import BaseModel

from services.ingest.roles import ANONYMOUS, Caller
from shared.contracts.interfaces import StateStore
from shared.infra.jobs import now
from shared.infra.settings import Role, Settings

COOKIE = "sheetflow_session"
# The sign-in form's own CSRF token travels in this cookie and in the form (double submit).
SIGNIN_COOKIE = "sheetflow_signin"
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"


class Session(BaseModel):
    name: str
    role: Role
    csrf: str
    created_at: datetime
    expires_at: datetime

    @property
    def caller(self) -> Caller:
        return Caller(self.name, self.role)


def _key(session_id: str) -> str:
    # The id itself is never stored: whoever reads the store cannot take over a session.
    return f"session.{hashlib.sha256(session_id.encode()).hexdigest()}"


def new_token() -> str:
    return secrets.token_urlsafe(32)


async def open_session(state: StateStore, caller: Caller, ttl_s: float) -> tuple[str, Session]:
    """A new session of ``caller``, kept for ``ttl_s``: its id (for the cookie) and record."""
    session_id, started = new_token(), now()
    session = Session(
        name=caller.name,
        role=caller.role,
        csrf=new_token(),
        created_at=started,
        expires_at=started + timedelta(seconds=ttl_s),
    )
    await state.put(_key(session_id), session)
    return session_id, session


def _still_valid(session: Session, settings: Settings) -> bool:
    """Whether the deployment still has the session's token, with the same role."""
    if not settings.tokens:
        return session.name == ANONYMOUS
    return any(t.name == session.name and t.role == session.role for t in settings.tokens)


async def find_session(
    state: StateStore, settings: Settings, session_id: str | None
) -> Session | None:
    """The live session ``session_id`` names; None (and the record removed) once it has
    expired or its token is gone."""
    if not session_id:
        return None
    found = await state.get(_key(session_id))
    if found is None:
        return None
    session = Session.model_validate(found[0])
    if session.expires_at <= now() or not _still_valid(session, settings):
        await state.delete(_key(session_id))
        return None
    return session


async def close_session(state: StateStore, session_id: str | None) -> None:
    if session_id:
        await state.delete(_key(session_id))


def csrf_matches(expected: str | None, given: str | None) -> bool:
    return bool(expected and given) and secrets.compare_digest(
        (expected or "").encode(), (given or "").encode()
    )
