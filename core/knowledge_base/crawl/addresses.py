"""Which addresses the crawler may reach without `private_addresses` (pure): the project's
own check, the same on every Python version, and the spellings of IPv4 numbers that URL
parsers accept (WHATWG's host parser), read here rather than left to the HTTP client.

An IPv6 address that carries an IPv4 address (IPv4-mapped, -translated or -compatible,
6to4, NAT64's well-known prefix, ISATAP) reaches that IPv4 address: it is judged by it."""

from __future__ import annotations

import ipaddress
import string

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Not on the public internet, whatever a Python version's `is_global` says of them.
NOT_GLOBAL = tuple(
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/128",
        "::1/128",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)
# Prefixes whose addresses stand for the IPv4 address in their last 32 bits.
CARRIERS = tuple(
    ipaddress.IPv6Network(network)
    for network in ("::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96")
)
SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
ISATAP_IDS = (0x00005EFE, 0x02005EFE)
DIGITS = frozenset(string.digits)
# Longer parts are no IPv4 number (and int() would refuse past 4300 digits).
MAX_NUMBER_CHARS = 40


def decide_public_address(address: str) -> bool:
    """Whether an IP address (as a resolver or a URL's host gives it; a zone id makes it
    link-local) is on the public internet: not loopback, private, link-local (a cloud's
    metadata address), shared, reserved, multicast, nor an IPv6 form of such an address."""
    if "%" in address:
        return False
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    return _public(ip)


def _public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _carried_ipv4(ip)
        if carried is not None:
            return _public(carried)
        if ip.teredo is not None:
            return False  # a tunnel to an address it hides from the check
        if (int(ip) >> 32) & 0xFFFFFFFF in ISATAP_IDS and not _public(
            ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        ):
            return False
    if any(ip in network for network in NOT_GLOBAL if network.version == ip.version):
        return False
    return ip.is_global and not ip.is_multicast


def _carried_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, if any."""
    if ip in SIX_TO_FOUR:
        return ip.sixtofour
    for network in CARRIERS:
        if ip in network:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def decide_ends_in_number(host: str) -> bool:
    """Whether a URL's host is an IPv4 address in some spelling (WHATWG: its last label
    is a number), rather than a name."""
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1]
    return bool(last) and (set(last) <= DIGITS or _parse_number(last) is not None)


def parse_ipv4(host: str) -> str | None:
    """The dotted form of an IPv4 host in any spelling URL parsers take: decimal
    (`2130706433`), octal (`0177.0.0.1`), hexadecimal (`0x7f.1`), short (`127.1`), with
    a final dot. None: not a valid IPv4 address (the URL is refused)."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = [_parse_number(part) for part in parts]
    if any(number is None for number in numbers):
        return None
    values = [number for number in numbers if number is not None]
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1] + sum(value * 256 ** (3 - i) for i, value in enumerate(values[:-1]))
    return str(ipaddress.IPv4Address(address))


def _parse_number(part: str) -> int | None:
    """One part of an IPv4 host: decimal, `0x` hexadecimal or `0` octal."""
    radix, digits = 10, part
    if part[:2].lower() == "0x":
        radix, digits = 16, part[2:]
    elif len(part) > 1 and part.startswith("0"):
        radix, digits = 8, part[1:]
    if not part or len(part) > MAX_NUMBER_CHARS:
        return None
    if not digits:
        return 0
    allowed = string.hexdigits if radix == 16 else string.digits[:radix]
    if any(char not in allowed for char in digits):
        return None
    return int(digits, radix)
