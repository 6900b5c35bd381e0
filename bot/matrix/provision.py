"""Rooms made as a person, for the local demo (bot/dev/local.py): the bot's own account
never needs this."""

from __future__ import annotations

from nio import AsyncClient, JoinResponse, LoginResponse, RoomCreateResponse


async def ensure_rooms_as(
    homeserver: str,
    user_id: str,
    password: str,
    wanted: list[tuple[str, str, str | None]],
    have: dict[str, str],
    invite: list[str],
) -> dict[str, str]:
    """Log in as the person and make each wanted room (key, name, alias) that `have` has
    no id for, inviting `invite`; returns every key's room id. A room made before aliases
    is given its alias now (the homeserver refuses when it has one)."""
    rooms = dict(have)
    client = AsyncClient(homeserver, user_id)
    try:
        login = await client.login(password, device_name="local-setup")
        if not isinstance(login, LoginResponse):
            raise RuntimeError(f"the demo user could not log in: {login}")
        for key, name, alias in wanted:
            if not rooms.get(key):
                room = await client.room_create(name=name, invite=invite, alias=alias)
                if not isinstance(room, RoomCreateResponse):
                    raise RuntimeError(f"the room {name!r} could not be made: {room}")
                rooms[key] = room.room_id
            elif alias:
                server = user_id.split(":", 1)[1]
                await client.room_put_alias(f"#{alias}:{server}", rooms[key])
        await client.logout()
    finally:
        await client.close()
    return rooms


async def ensure_member_as(
    homeserver: str, inviter: tuple[str, str], member: tuple[str, str], room_id: str
) -> None:
    """`member` (user id, password) joined to the room, invited by `inviter` (a member who
    may invite) when they are not in it yet."""
    client = AsyncClient(homeserver, member[0])
    try:
        login = await client.login(member[1], device_name="local-setup")
        if not isinstance(login, LoginResponse):
            raise RuntimeError(f"{member[0]} could not log in: {login}")
        if not isinstance(await client.join(room_id), JoinResponse):
            host = AsyncClient(homeserver, inviter[0])
            try:
                if not isinstance(
                    await host.login(inviter[1], device_name="local-setup"), LoginResponse
                ):
                    raise RuntimeError(f"{inviter[0]} could not log in")
                await host.room_invite(room_id, member[0])
                await host.logout()
            finally:
                await host.close()
            joined = await client.join(room_id)
            if not isinstance(joined, JoinResponse):
                raise RuntimeError(f"{member[0]} could not join {room_id}: {joined}")
        await client.logout()
    finally:
        await client.close()
