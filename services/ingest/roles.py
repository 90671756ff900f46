"""Who is calling the API and what their role lets them do: tokens are matched in constant
time, and a caller is known by the token's name from then on (its value is never kept)."""

import secrets
from dataclasses import dataclass
from typing import get_args

from shared.infra.settings import Role, Settings

# Each role may do everything the roles before it may.
ROLES: tuple[Role, ...] = get_args(Role)
# Who calls an API that has no tokens configured (loopback only): it may do anything.
ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Caller:
    name: str
    role: Role

    def may(self, needed: Role) -> bool:
        return ROLES.index(self.role) >= ROLES.index(needed)


def identify(settings: Settings, presented: str | None) -> Caller | None:
    """The caller ``presented`` (a bearer token's value) names; None when it names none.
    Every token is compared, so the time taken does not tell which one came close."""
    tokens = settings.tokens
    if not tokens:
        return Caller(ANONYMOUS, "admin")
    given = (presented or "").encode()
    found = None
    for token in tokens:
        if secrets.compare_digest(given, token.token.get_secret_value().encode()):
            found = Caller(token.name, token.role)
    return found
