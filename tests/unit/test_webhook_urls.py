"""The webhook URL policy (DECISIONS.md "Webhooks", docs/webhooks.md): https only, every
address the host resolves to public, IPv4 carried inside IPv6 unwrapped, the allow list
for local development, and refusals a person understands."""

from __future__ import annotations

import pytest

from adapters.webhooks import StaticResolver, SystemResolver
from booking_core.errors import ValidationFailed
from booking_core.ports import Resolver
from booking_core.webhooks import CheckedUrl, allowed_hosts, check_url

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:4700:4700::1111"
PUBLIC_ONLY = "webhook URLs must be reachable on the public internet"

# Teredo: server 65.54.227.120 (public), client the inverted last 32 bits.
TEREDO_CLIENT_10_0_0_1 = "2001:0:4136:e378:8000:63bf:f5ff:fffe"
TEREDO_CLIENT_8_8_8_8 = "2001:0:4136:e378:8000:63bf:f7f7:f7f7"
TEREDO_SERVER_10_0_0_1 = "2001:0:a00:1:8000:63bf:f7f7:f7f7"

RESOLVER = StaticResolver(
    {
        "hooks.example.com": [PUBLIC_V4, PUBLIC_V6],
        "v6only.example.com": PUBLIC_V6,
        "xn--bcher-kva.example": PUBLIC_V4,
        "example.internal": "10.0.0.5",
        "mixed.example.com": [PUBLIC_V4, "192.168.1.1"],
        "mixed6.example.com": [PUBLIC_V6, "fd00::1"],
        "metadata.example.com": "169.254.169.254",
        "cgnat.example.com": "100.64.1.1",
        "localhost": ["127.0.0.1", "::1"],
        "mapped.example.com": "::ffff:10.0.0.1",
        "nat64.example.com": "64:ff9b::a00:1",
        "teredo.example.com": TEREDO_CLIENT_10_0_0_1,
        "sixtofour.example.com": "2002:a00:1::1",
        "ula.example.com": "fc00::5",
        "docs.example.com": "2001:db8::5",
        "scoped.example.com": "fe80::1%eth0",
        "dev.example.test": "127.0.0.1",
        "other.example.test": "127.0.0.1",
    }
)

REFUSED: list[tuple[str, str]] = [
    # IPv4 literals, one or more per range
    ("https://127.0.0.1/hook", "127.0.0.1 is a loopback address"),
    ("https://127.255.255.254/", "a loopback address"),
    ("https://10.0.0.5/", "10.0.0.5 is a private address"),
    ("https://172.16.0.1/", "a private address"),
    ("https://172.31.255.255/", "a private address"),
    ("https://192.168.1.1/", "a private address"),
    ("https://169.254.169.254/latest/meta-data/", "a link-local address"),
    ("https://100.64.0.1/", "a carrier-grade NAT address"),
    ("https://100.127.255.254/", "a carrier-grade NAT address"),
    ("https://0.0.0.0/", "the unspecified address"),
    ("https://0.1.2.3/", "a 'this network' address"),
    ("https://224.0.0.1/", "a multicast address"),
    ("https://239.255.255.250/", "a multicast address"),
    ("https://240.0.0.1/", "a reserved address"),
    ("https://255.255.255.255/", "the broadcast address"),
    ("https://192.0.2.10/", "a documentation address (192.0.2.0/24)"),
    ("https://198.51.100.7/", "a documentation address (198.51.100.0/24)"),
    ("https://203.0.113.9/", "a documentation address (203.0.113.0/24)"),
    ("https://198.18.0.1/", "a benchmarking address"),
    ("https://198.19.255.1/", "a benchmarking address"),
    ("https://192.0.0.8/", "an IETF protocol assignment"),
    ("https://192.88.99.1/", "a deprecated 6to4 relay address"),
    # IPv4 written as resolvers read it, not as ipaddress does
    ("https://2130706433/", "2130706433 resolves to 127.0.0.1, a loopback address"),
    ("https://0x7f.1/", "resolves to 127.0.0.1, a loopback address"),
    ("https://017700000001/", "resolves to 127.0.0.1, a loopback address"),
    ("https://127.1/", "resolves to 127.0.0.1, a loopback address"),
    ("https://0xa9fea9fe/", "resolves to 169.254.169.254, a link-local address"),
    ("https://012.0.0.1/", "resolves to 10.0.0.1, a private address"),
    # IPv6 literals
    ("https://[::1]/", "::1 is a loopback address"),
    ("https://[::]/", "the unspecified address"),
    ("https://[fe80::1]/", "a link-local address"),
    ("https://[fec0::1]/", "a site-local address"),
    ("https://[fc00::1]/", "a unique-local address"),
    ("https://[fd12:3456:789a::1]:8443/", "a unique-local address"),
    ("https://[ff02::1]/", "a multicast address"),
    ("https://[2001:db8::1]/", "a documentation address (2001:db8::/32)"),
    ("https://[3fff::1]/", "a documentation address (3fff::/20)"),
    ("https://[2001:2::1]/", "a benchmarking address"),
    ("https://[100::1]/", "a discard-only address"),
    ("https://[2001:10::1]/", "an IETF protocol assignment"),
    ("https://[4000::1]/", "a reserved address"),
    # IPv4 inside IPv6
    ("https://[::ffff:127.0.0.1]/", "an IPv4-mapped form of 127.0.0.1, a loopback address"),
    ("https://[::ffff:169.254.169.254]/", "IPv4-mapped form of 169.254.169.254, a link-local"),
    ("https://[::ffff:7f00:1]/", "an IPv4-mapped form of 127.0.0.1"),
    ("https://[::127.0.0.1]/", "an IPv4-compatible form of 127.0.0.1, a loopback address"),
    ("https://[::8.8.8.8]/", "a deprecated IPv4-compatible form of 8.8.8.8"),
    ("https://[2002:7f00:1::]/", "a 6to4 form of 127.0.0.1, a loopback address"),
    ("https://[2002:c0a8:101::1]/", "a 6to4 form of 192.168.1.1, a private address"),
    (f"https://[{TEREDO_CLIENT_10_0_0_1}]/", "a Teredo address whose client is 10.0.0.1"),
    (f"https://[{TEREDO_SERVER_10_0_0_1}]/", "a Teredo address whose server is 10.0.0.1"),
    ("https://[64:ff9b::7f00:1]/", "a NAT64 form of 127.0.0.1, a loopback address"),
    ("https://[64:ff9b::a9fe:a9fe]/", "a NAT64 form of 169.254.169.254, a link-local address"),
    ("https://[64:ff9b:1::c0a8:101]/", "a NAT64 form of 192.168.1.1, a private address"),
    ("https://[64:ff9b:1:a00:1::808:808]/", "a local-use NAT64 address"),
    # names resolving to refused addresses
    ("https://example.internal/", "example.internal resolves to 10.0.0.5, a private address"),
    ("https://mixed.example.com/", "mixed.example.com resolves to 192.168.1.1, a private"),
    ("https://mixed6.example.com/", "resolves to fd00::1, a unique-local address"),
    ("https://metadata.example.com/", "resolves to 169.254.169.254, a link-local address"),
    ("https://cgnat.example.com/", "resolves to 100.64.1.1, a carrier-grade NAT address"),
    ("https://localhost/", "localhost resolves to 127.0.0.1, a loopback address"),
    ("https://mapped.example.com/", "an IPv4-mapped form of 10.0.0.1, a private address"),
    ("https://nat64.example.com/", "a NAT64 form of 10.0.0.1, a private address"),
    ("https://teredo.example.com/", "a Teredo address whose client is 10.0.0.1"),
    ("https://sixtofour.example.com/", "a 6to4 form of 10.0.0.1, a private address"),
    ("https://ula.example.com/", "resolves to fc00::5, a unique-local address"),
    ("https://docs.example.com/", "resolves to 2001:db8::5, a documentation address"),
    ("https://scoped.example.com/", "resolves to fe80::1, a link-local address"),
    ("https://nowhere.example.com/", "nowhere.example.com does not resolve to any address."),
    # not an https URL to a host
    ("http://hooks.example.com/", "Webhook URLs must use https."),
    ("ftp://hooks.example.com/", "Webhook URLs must use https."),
    ("javascript:alert(1)", "Webhook URLs must use https."),
    ("hooks.example.com/webhooks", "Webhook URLs must use https."),
    ("", "Give the URL the events should be sent to."),
    ("https:///webhooks", "URL has no host."),
    ("https://user:secret@hooks.example.com/", "must not contain a user name or password."),
    ("https://user@hooks.example.com/", "must not contain a user name or password."),
    ("https://hooks.example.com\\@10.0.0.1/", "must not contain a user name or password."),
    ("https://hooks.example.com:99999/", "URL port must be a number between 1 and 65535."),
    ("https://hooks.example.com:https/", "URL port must be a number between 1 and 65535."),
    ("https://hooks.example.com:0/", "URL port must be a number between 1 and 65535."),
    ("https://hooks.example.com/a b", "URL must not contain spaces or control characters."),
    ("https://hooks.example.com/\n", "URL must not contain spaces or control characters."),
    ("https://[fe80::1%25eth0]/", "must not name a network interface"),
    ("https://%6c%6f%63%61%6c%68%6f%73%74/", "is not a valid host name."),
    ("https://hooks..example.com/", "is not a valid host name."),
    ("https://[10.0.0.1]/", "URL is not valid."),
]


def refusal(url: str, allow: tuple[str, ...] = (), resolver: Resolver = RESOLVER) -> str:
    """The reason ``check_url`` refuses ``url`` with, checking it is on field ``url`` only."""
    with pytest.raises(ValidationFailed) as refused:
        check_url(url, resolver, allow)
    assert list(refused.value.field_errors) == ["url"]
    return refused.value.field_errors["url"]


def test_the_table_covers_at_least_forty_refusals() -> None:
    assert len(REFUSED) >= 40
    assert len({url for url, _ in REFUSED}) == len(REFUSED)


@pytest.mark.parametrize(("url", "reason"), REFUSED)
def test_refused_url_says_why(url: str, reason: str) -> None:
    assert reason in refusal(url)


@pytest.mark.parametrize(
    "url", [url for url, reason in REFUSED if "resolves to" in reason or " is a" in reason]
)
def test_a_refused_address_says_urls_must_be_public(url: str) -> None:
    assert refusal(url).endswith(f"; {PUBLIC_ONLY}.")


def test_refusal_names_the_host_and_the_private_address_it_resolves_to() -> None:
    with pytest.raises(ValidationFailed) as refused:
        check_url("https://example.internal/hooks", RESOLVER, ())
    expected = f"example.internal resolves to 10.0.0.5, a private address; {PUBLIC_ONLY}."
    assert refused.value.field_errors == {"url": expected}
    assert refused.value.message == expected


def test_accepted_url_carries_its_parts_and_every_checked_address() -> None:
    checked = check_url("https://Hooks.Example.COM./in/bound?team=7#top", RESOLVER, ())
    assert checked == CheckedUrl(
        url="https://Hooks.Example.COM./in/bound?team=7#top",
        scheme="https",
        host="hooks.example.com",
        port=443,
        path_query="/in/bound?team=7",
        addresses=(PUBLIC_V4, PUBLIC_V6),
        allowed=False,
    )
    assert checked.host_header == "hooks.example.com"
    assert checked.url_for(PUBLIC_V4) == f"https://{PUBLIC_V4}:443/in/bound?team=7"
    assert checked.url_for(PUBLIC_V6) == f"https://[{PUBLIC_V6}]:443/in/bound?team=7"


@pytest.mark.parametrize(
    ("url", "addresses", "host_header"),
    [
        (f"https://{PUBLIC_V4}", (PUBLIC_V4,), PUBLIC_V4),
        (f"https://[{PUBLIC_V6}]:8443/x", (PUBLIC_V6,), f"[{PUBLIC_V6}]:8443"),
        ("https://v6only.example.com:443/", (PUBLIC_V6,), "v6only.example.com"),
        ("https://bücher.example/", (PUBLIC_V4,), "xn--bcher-kva.example"),
        ("https://[::ffff:8.8.8.8]/", ("::ffff:808:808",), "[::ffff:808:808]"),
        ("https://[2002:808:808::1]/", ("2002:808:808::1",), "[2002:808:808::1]"),
        ("https://[64:ff9b::808:808]/", ("64:ff9b::808:808",), "[64:ff9b::808:808]"),
        (f"https://[{TEREDO_CLIENT_8_8_8_8}]/", (TEREDO_CLIENT_8_8_8_8,), None),
        ("https://134744072/", ("8.8.8.8",), "134744072"),
    ],
)
def test_public_addresses_are_accepted(
    url: str, addresses: tuple[str, ...], host_header: str | None
) -> None:
    checked = check_url(url, RESOLVER, ())
    assert checked.addresses == addresses
    assert not checked.allowed
    if host_header is not None:
        assert checked.host_header == host_header


def test_empty_path_is_sent_as_slash_and_port_is_kept() -> None:
    checked = check_url("https://hooks.example.com:8443", RESOLVER, ())
    assert (checked.port, checked.path_query) == (8443, "/")
    assert checked.host_header == "hooks.example.com:8443"


def test_allowed_host_may_use_http_and_a_loopback_address() -> None:
    checked = check_url("http://dev.example.test:8080/hooks", RESOLVER, ["dev.example.test"])
    assert (checked.scheme, checked.addresses, checked.allowed) == (
        "http",
        ("127.0.0.1",),
        True,
    )
    assert checked.host_header == "dev.example.test:8080"
    assert check_url("https://dev.example.test/", RESOLVER, ["dev.example.test"]).allowed


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("http://127.0.0.1:9000/", "127.0.0.1"),
        ("http://[::1]:9000/", "[::1]"),
        ("http://[0:0::1]:9000/", "::1"),
        ("http://localhost/", "LOCALHOST."),
        ("https://10.0.0.5/", "10.0.0.5"),
    ],
)
def test_allow_list_matches_names_and_addresses_as_written(url: str, allow: str) -> None:
    assert check_url(url, RESOLVER, allowed_hosts(allow)).allowed


def test_allow_list_does_not_extend_to_other_names_on_the_same_address() -> None:
    assert "must use https" in refusal("http://other.example.test/", allow=("dev.example.test",))
    assert "a loopback address" in refusal(
        "https://other.example.test/", allow=("dev.example.test", "127.0.0.1")
    )


def test_allowed_host_must_still_resolve_and_use_http_or_https() -> None:
    assert "does not resolve" in refusal(
        "http://ghost.example.test/", allow=("ghost.example.test",)
    )
    assert "must use https" in refusal("ftp://localhost/", allow=("localhost",))
    assert "user name or password" in refusal("http://u:p@localhost/", allow=("localhost",))


def test_allowed_hosts_reads_the_comma_separated_setting() -> None:
    setting = " localhost, ,127.0.0.1,[::1] , Hooks.Example.TEST.,"
    assert allowed_hosts(setting) == {"localhost", "127.0.0.1", "::1", "hooks.example.test"}
    assert allowed_hosts("") == frozenset()


def test_a_resolver_that_raises_counts_as_no_address() -> None:
    class Failing:
        def addresses(self, host: str, port: int) -> list[str]:
            raise OSError("Temporary failure in name resolution")

    with pytest.raises(ValidationFailed) as refused:
        check_url("https://hooks.example.com/", Failing(), ())
    assert refused.value.field_errors == {
        "url": "hooks.example.com does not resolve to any address."
    }


def test_system_resolver_reads_numeric_hosts_as_the_c_library_does() -> None:
    resolver = SystemResolver()
    assert resolver.addresses("2130706433", 443) == ["127.0.0.1"]
    assert resolver.addresses("0x7f.0.0.1", 443) == ["127.0.0.1"]
    assert "a loopback address" in refusal("https://2130706433/", resolver=resolver)


def test_system_resolver_answers_nothing_for_a_name_that_cannot_be_one() -> None:
    assert SystemResolver().addresses("a..b", 443) == []
