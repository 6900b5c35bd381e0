"""Whether to accept an invite: the inviter must be on the allow-list."""

from core.config.model import InviteSettings
from core.ids import UserID, server_of


def decide_invite(inviter: UserID | None, allowed: InviteSettings) -> bool:
    """True when the inviter is listed by user id or belongs to a listed server."""
    if not inviter:
        return False
    return inviter in allowed.allowed_users or server_of(inviter) in allowed.allowed_servers
