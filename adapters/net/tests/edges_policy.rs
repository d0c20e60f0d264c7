//! The address policy at the edges of its ranges, through the public API ([`AddressPolicy`],
//! [`Refusal`], [`vetted_addresses`]): the first and the last address of every refused range is
//! refused by its rule, the address just outside is not refused by that rule, and an IPv6 address
//! that embeds an IPv4 address is judged by the IPv4 address, at the edges of the embedding
//! forms. The oracle is the IANA special-purpose address registries (RFC 6890) and the RFCs that
//! define each range, quoted at each test; the ranges the policy refuses are the table of the
//! `guard::policy` module's documentation.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use mcp_sansio_net::{vetted_addresses, AddressPolicy, GuardError, Rule, StaticResolver};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The rule that refuses `addr` under `policy`, `None` if it is admitted.
fn rule(policy: AddressPolicy, addr: &str) -> Option<Rule> {
    policy.check(ip(addr)).err().map(|r| r.rule)
}

/// Checks a range: its first and last address are refused by `want`; the addresses just outside
/// it (just before the first, just after the last; where the range starts or ends the address
/// space, another address outside) are not refused by `want` (another rule may refuse them, or
/// none).
fn range(first: &str, last: &str, below: &str, above: &str, want: Rule) {
    let p = AddressPolicy::strict();
    assert_eq!(rule(p, first), Some(want), "{first}");
    assert_eq!(rule(p, last), Some(want), "{last}");
    assert_ne!(rule(p, below), Some(want), "{below}, outside {first}");
    assert_ne!(rule(p, above), Some(want), "{above}, outside {last}");
}

/// RFC 6890 §2.2.2 (IPv4 special-purpose registry): 0.0.0.0/8 "This host on this network",
/// 10.0.0.0/8 and 172.16.0.0/12 and 192.168.0.0/16 "Private-Use" (RFC 1918), 100.64.0.0/10
/// "Shared Address Space" (RFC 6598), 127.0.0.0/8 "Loopback", 169.254.0.0/16 "Link Local",
/// 192.0.0.0/24 "IETF Protocol Assignments", 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24
/// "Documentation (TEST-NET-1/2/3)" (RFC 5737), 198.18.0.0/15 "Benchmarking" (RFC 2544),
/// 240.0.0.0/4 "Reserved", 255.255.255.255/32 "Limited Broadcast"; RFC 5771: "224.0.0.0 to
/// 239.255.255.255" multicast.
#[test]
fn every_ipv4_range_refused_from_its_first_to_its_last_address_and_not_beyond() {
    range(
        "0.0.0.0",
        "0.255.255.255",
        "1.0.0.0",
        "1.0.0.0",
        Rule::Unspecified,
    );
    range(
        "10.0.0.0",
        "10.255.255.255",
        "9.255.255.255",
        "11.0.0.0",
        Rule::Private,
    );
    range(
        "100.64.0.0",
        "100.127.255.255",
        "100.63.255.255",
        "100.128.0.0",
        Rule::Private,
    );
    range(
        "127.0.0.0",
        "127.255.255.255",
        "126.255.255.255",
        "128.0.0.0",
        Rule::Loopback,
    );
    range(
        "169.254.0.0",
        "169.254.255.255",
        "169.253.255.255",
        "169.255.0.0",
        Rule::LinkLocal,
    );
    range(
        "172.16.0.0",
        "172.31.255.255",
        "172.15.255.255",
        "172.32.0.0",
        Rule::Private,
    );
    range(
        "192.168.0.0",
        "192.168.255.255",
        "192.167.255.255",
        "192.169.0.0",
        Rule::Private,
    );
    range(
        "192.0.0.0",
        "192.0.0.255",
        "191.255.255.255",
        "192.0.1.0",
        Rule::Reserved,
    );
    range(
        "192.0.2.0",
        "192.0.2.255",
        "192.0.1.255",
        "192.0.3.0",
        Rule::Reserved,
    );
    range(
        "198.18.0.0",
        "198.19.255.255",
        "198.17.255.255",
        "198.20.0.0",
        Rule::Reserved,
    );
    range(
        "198.51.100.0",
        "198.51.100.255",
        "198.51.99.255",
        "198.51.101.0",
        Rule::Reserved,
    );
    range(
        "203.0.113.0",
        "203.0.113.255",
        "203.0.112.255",
        "203.0.114.0",
        Rule::Reserved,
    );
    range(
        "224.0.0.0",
        "239.255.255.255",
        "223.255.255.255",
        "240.0.0.0",
        Rule::Multicast,
    );
    range(
        "240.0.0.0",
        "255.255.255.254",
        "239.255.255.255",
        "255.255.255.255",
        Rule::Reserved,
    );
    let p = AddressPolicy::strict();
    assert_eq!(rule(p, "255.255.255.255"), Some(Rule::Broadcast));
    // The public neighbours are admitted.
    for addr in [
        "1.0.0.0",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "169.253.255.255",
        "169.255.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "191.255.255.255",
        "192.0.1.0",
        "192.0.3.0",
        "192.167.255.255",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "198.51.99.255",
        "198.51.101.0",
        "203.0.112.255",
        "203.0.114.0",
        "223.255.255.255",
    ] {
        assert_eq!(rule(p, addr), None, "{addr}");
    }
}

/// RFC 4291 §2.5.2-2.5.3, §2.5.6, §2.7: `::` unspecified, `::1` loopback, fe80::/10 link-local,
/// ff00::/8 multicast; RFC 4193: fc00::/7 unique local; RFC 3879: fec0::/10 (deprecated
/// site-local); RFC 6890 §2.2.3 (IPv6 special-purpose registry): 100::/64 "Discard-Only Address
/// Block" (RFC 6666), 2001::/32 "TEREDO" (RFC 4380), 2001:db8::/32 "Documentation" (RFC 3849).
#[test]
fn every_ipv6_range_refused_from_its_first_to_its_last_address_and_not_beyond() {
    let p = AddressPolicy::strict();
    assert_eq!(rule(p, "::1"), Some(Rule::Loopback));
    assert_eq!(rule(p, "::"), Some(Rule::Unspecified));
    range(
        "fe80::",
        "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "fec0::",
        Rule::LinkLocal,
    );
    range(
        "ff00::",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "fe00::",
        Rule::Multicast,
    );
    range(
        "fc00::",
        "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "fe00::",
        Rule::Private,
    );
    range(
        "fec0::",
        "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "ff00::",
        Rule::Private,
    );
    range(
        "100::",
        "100::ffff:ffff:ffff:ffff",
        "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "100:0:0:1::",
        Rule::Reserved,
    );
    range(
        "2001::",
        "2001:0:ffff:ffff:ffff:ffff:ffff:ffff",
        "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:1::",
        Rule::Reserved,
    );
    range(
        "2001:db8::",
        "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db9::",
        Rule::Reserved,
    );
    // Global unicast addresses (2000::/3) next to the refused prefixes, or sharing a segment with
    // them, are admitted: Google's public DNS (2001:4860::/32, the 2001::/16 of Teredo and of the
    // documentation prefix but another /32), a RIPE NCC block whose second to fourth segments
    // are zero (as those of 100::/64), Cloudflare's.
    for addr in [
        "2001:4860:4860::8888",
        "2a00::1",
        "2a00:0:0:1::1",
        "2606:4700::6810:84e5",
    ] {
        assert_eq!(rule(p, addr), None, "{addr}");
    }
}

/// Cloud metadata addresses are refused whatever the widening, and only they are: their
/// neighbours fall under the rule of their range (link-local, private, reserved).
#[test]
fn metadata_addresses_refused_by_every_policy_and_their_neighbours_by_their_range() {
    let all = AddressPolicy::strict()
        .allow_loopback(true)
        .allow_private(true);
    for addr in [
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "100.100.100.200",
        "192.0.0.192",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::",
    ] {
        for p in [AddressPolicy::strict(), all] {
            assert_eq!(rule(p, addr), Some(Rule::Metadata), "{addr} under {p:?}");
        }
    }
    let p = AddressPolicy::strict();
    assert_eq!(rule(p, "169.254.169.253"), Some(Rule::LinkLocal));
    assert_eq!(rule(p, "169.254.169.255"), Some(Rule::LinkLocal));
    assert_eq!(rule(p, "100.100.100.199"), Some(Rule::Private));
    assert_eq!(rule(p, "192.0.0.193"), Some(Rule::Reserved));
    assert_eq!(rule(p, "fd00:ec2::255"), Some(Rule::Private));
    // The private neighbours are admitted by the private widening; metadata never.
    assert_eq!(rule(all, "100.100.100.199"), None);
    assert_eq!(rule(all, "fd00:ec2::255"), None);
}

/// RFC 4291 §2.5.5.2: "IPv4-mapped IPv6 address" `::ffff:0:0/96`; §2.5.5.1: the deprecated
/// "IPv4-compatible IPv6 address" `::/96`, whose `::` and `::1` are IPv6's own (§2.5.2-2.5.3);
/// RFC 2765 §2.1: "IPv4-translated address" `::ffff:0:0:0/96`; RFC 6052 §2.1: the well-known
/// prefix 64:ff9b::/96; RFC 8215: 64:ff9b:1::/48 "IPv4-IPv6 translation" (local use); RFC 3056
/// §2: 6to4 `2002:V4ADDR::/48`. Each is judged by the IPv4 address it embeds, which the refusal
/// names; the edges of each IPv4 range hold through each form.
#[test]
fn embedded_ipv4_judged_at_the_edges_of_every_form() {
    let p = AddressPolicy::strict();
    let cases: &[(&str, &str, Rule)] = &[
        ("::ffff:0.0.0.0", "0.0.0.0", Rule::Unspecified),
        ("::ffff:255.255.255.255", "255.255.255.255", Rule::Broadcast),
        ("::ffff:127.255.255.255", "127.255.255.255", Rule::Loopback),
        ("::ffff:0:0.0.0.0", "0.0.0.0", Rule::Unspecified),
        ("::ffff:0:10.255.255.255", "10.255.255.255", Rule::Private),
        // IPv4-compatible: the low 32 bits, from 0.0.0.2 (::2) up; 0.1.0.0 has a zero low half.
        ("::2", "0.0.0.2", Rule::Unspecified),
        ("::0.1.0.0", "0.1.0.0", Rule::Unspecified),
        ("::169.254.0.1", "169.254.0.1", Rule::LinkLocal),
        ("::255.255.255.255", "255.255.255.255", Rule::Broadcast),
        ("64:ff9b::a9fe:ffff", "169.254.255.255", Rule::LinkLocal),
        ("64:ff9b::e000:0", "224.0.0.0", Rule::Multicast),
        (
            "64:ff9b:1:ffff:ffff:ffff:c0a8:ffff",
            "192.168.255.255",
            Rule::Private,
        ),
        ("64:ff9b:1::c612:0", "198.18.0.0", Rule::Reserved),
        ("2002:ac1f:ffff::", "172.31.255.255", Rule::Private),
        (
            "2002:c000:2ff:ffff:ffff:ffff:ffff:ffff",
            "192.0.2.255",
            Rule::Reserved,
        ),
        ("2002:7f00:1::", "127.0.0.1", Rule::Loopback),
    ];
    for &(addr, v4, want) in cases {
        let refusal = p.check(ip(addr)).unwrap_err();
        assert_eq!(refusal.rule, want, "{addr}");
        assert_eq!(refusal.address, ip(addr), "{addr}");
        assert_eq!(refusal.embedded, Some(v4.parse().unwrap()), "{addr}");
    }
    // `::` and `::1` embed nothing: they are IPv6's unspecified and loopback addresses.
    for (addr, want) in [("::", Rule::Unspecified), ("::1", Rule::Loopback)] {
        let refusal = p.check(ip(addr)).unwrap_err();
        assert_eq!((refusal.rule, refusal.embedded), (want, None), "{addr}");
    }
    // Public IPv4 addresses in each form, at the edge of a refused range, are admitted.
    for addr in [
        "::ffff:11.0.0.0",
        "::ffff:0:9.255.255.255",
        "::1.0.0.0",
        "64:ff9b::dfff:ffff",
        "64:ff9b:1::ac20:0",
        "2002:c0a9::",
        "2002:a9ff::",
    ] {
        assert_eq!(rule(p, addr), None, "{addr}");
    }
}

/// Each widening admits its rule, in every form (an embedding included), and nothing else; the
/// accessors say which widening a policy has.
#[test]
fn each_widening_admits_its_rule_alone_and_says_so() {
    let strict = AddressPolicy::strict();
    assert_eq!(strict, AddressPolicy::default());
    assert!(!strict.allows_loopback() && !strict.allows_private());
    let loopback = strict.allow_loopback(true);
    assert!(loopback.allows_loopback() && !loopback.allows_private());
    let private = strict.allow_private(true);
    assert!(private.allows_private() && !private.allows_loopback());
    let neither = loopback.allow_loopback(false);
    assert!(!neither.allows_loopback());
    assert_eq!(neither, strict);
    assert!(!private.allow_private(false).allows_private());

    assert_eq!(rule(loopback, "127.255.255.255"), None);
    assert_eq!(rule(loopback, "::ffff:127.0.0.1"), None);
    assert_eq!(rule(loopback, "2002:7f00:1::"), None);
    assert_eq!(rule(loopback, "172.31.255.255"), Some(Rule::Private));
    assert_eq!(rule(loopback, "fc00::"), Some(Rule::Private));
    assert_eq!(rule(loopback, "169.254.0.0"), Some(Rule::LinkLocal));

    assert_eq!(rule(private, "172.31.255.255"), None);
    assert_eq!(rule(private, "100.127.255.255"), None);
    assert_eq!(
        rule(private, "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        None
    );
    assert_eq!(rule(private, "fec0::"), None);
    assert_eq!(rule(private, "2002:c0a8:101::"), None);
    assert_eq!(rule(private, "127.0.0.1"), Some(Rule::Loopback));
    assert_eq!(rule(private, "::1"), Some(Rule::Loopback));

    let both = loopback.allow_private(true);
    for (addr, want) in [
        ("0.0.0.0", Rule::Unspecified),
        ("::", Rule::Unspecified),
        ("fe80::", Rule::LinkLocal),
        ("239.255.255.255", Rule::Multicast),
        ("ff02::1", Rule::Multicast),
        ("255.255.255.255", Rule::Broadcast),
        ("192.0.2.0", Rule::Reserved),
        ("100::", Rule::Reserved),
    ] {
        assert_eq!(rule(both, addr), Some(want), "{addr}");
    }
}

/// A refusal says which rule refused the address, by a name of its own (the module documents
/// "a short name of the rule, e.g. `loopback`"), and where the address came from.
#[test]
fn a_refusal_names_the_address_the_rule_and_the_embedded_ipv4() {
    assert_eq!(Rule::Loopback.name(), "loopback");
    assert_eq!(Rule::Loopback.to_string(), "loopback");
    let rules = [
        Rule::Metadata,
        Rule::Loopback,
        Rule::Unspecified,
        Rule::LinkLocal,
        Rule::Multicast,
        Rule::Broadcast,
        Rule::Private,
        Rule::Reserved,
    ];
    let mut names: Vec<&str> = rules.iter().map(|r| r.name()).collect();
    for (r, name) in rules.iter().zip(&names) {
        assert!(!name.is_empty(), "{r:?}");
        assert_eq!(r.to_string(), *name);
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), rules.len(), "every rule has a name of its own");

    let r = AddressPolicy::strict()
        .check(ip("64:ff9b::a9fe:a9fe"))
        .unwrap_err();
    let text = r.to_string();
    assert!(text.contains("64:ff9b::a9fe:a9fe"), "{text}");
    assert!(text.contains(Rule::Metadata.name()), "{text}");
    assert!(text.contains("169.254.169.254"), "{text}");
    let r = AddressPolicy::strict().check(ip("10.0.0.1")).unwrap_err();
    assert_eq!(r.embedded, None);
    assert_eq!(
        r.to_string(),
        format!("address 10.0.0.1 refused: {}", Rule::Private)
    );
}

/// A host written as an IP literal, in any spelling `inet_aton` reads (one to four parts,
/// decimal, octal or hex: POSIX `inet_addr`), or as an IPv6 literal with brackets or a zone, is
/// judged as the address it spells without asking the resolver (which here knows no name).
#[test]
fn literal_spellings_are_judged_as_the_address_they_spell() {
    let none = StaticResolver::new();
    let p = AddressPolicy::strict();
    for (host, address, want) in [
        ("0x7f.1", "127.0.0.1", Rule::Loopback),
        ("2130706433", "127.0.0.1", Rule::Loopback),
        ("0251.0376.0251.0376", "169.254.169.254", Rule::Metadata),
        ("169.254.43518", "169.254.169.254", Rule::Metadata),
        (
            "[::ffff:a9fe:a9fe]",
            "::ffff:169.254.169.254",
            Rule::Metadata,
        ),
        ("fe80::1%eth0", "fe80::1", Rule::LinkLocal),
        ("10.0.0.1.", "10.0.0.1", Rule::Private),
    ] {
        match vetted_addresses(&none, &p, host, 443) {
            Err(GuardError::Refused { refusal, .. }) => {
                assert_eq!(refusal.rule, want, "{host}");
                assert_eq!(refusal.address, ip(address), "{host}");
            }
            other => panic!("{host}: {other:?}"),
        }
    }
    let public = vetted_addresses(&none, &p, "0x08080808", 443).unwrap();
    assert_eq!(
        public,
        [SocketAddr::new(IpAddr::V4(Ipv4Addr::new(8, 8, 8, 8)), 443)]
    );
    assert!(matches!(
        vetted_addresses(&none, &p, "mcp.example.com", 443),
        Err(GuardError::Resolve { .. })
    ));
}
