//! Which IP addresses may be dialled.
//!
//! The policy judges an address, never a name: names are resolved first and every resolved
//! address is judged (see [`crate::guard::resolve`]). An IPv6 address that embeds an IPv4 address
//! (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, IPv4-translated
//! `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`) is judged by
//! the IPv4 address it embeds, so `::ffff:127.0.0.1` is loopback.
//!
//! Refused by default, and by which [`Rule`]:
//!
//! | rule | IPv4 | IPv6 | widened by |
//! |---|---|---|---|
//! | [`Rule::Metadata`] | 169.254.169.254, 169.254.170.2, 169.254.170.23, 100.100.100.200, 192.0.0.192 | fd00:ec2::254, fd00:ec2::23 | never |
//! | [`Rule::Loopback`] | 127.0.0.0/8 | ::1 | [`AddressPolicy::allow_loopback`] |
//! | [`Rule::Unspecified`] | 0.0.0.0/8 | :: | never |
//! | [`Rule::LinkLocal`] | 169.254.0.0/16 | fe80::/10 | never |
//! | [`Rule::Multicast`] | 224.0.0.0/4 | ff00::/8 | never |
//! | [`Rule::Broadcast`] | 255.255.255.255 | – | never |
//! | [`Rule::Private`] | 10/8, 172.16/12, 192.168/16, 100.64/10 | fc00::/7, fec0::/10 | [`AddressPolicy::allow_private`] |
//! | [`Rule::Reserved`] | 192.0.0/24, 192.0.2/24, 198.18/15, 198.51.100/24, 203.0.113/24, 240/4 | 100::/64, 2001::/32 (Teredo), 2001:db8::/32, other `::/96` forms | never |
//!
//! Metadata addresses are judged before every other rule, so no widening ever admits them.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// A cloud instance-metadata address.
    Metadata,
    /// Loopback (127.0.0.0/8, ::1).
    Loopback,
    /// Unspecified or "this network" (0.0.0.0/8, ::).
    Unspecified,
    /// Link-local (169.254.0.0/16, fe80::/10).
    LinkLocal,
    /// Multicast (224.0.0.0/4, ff00::/8).
    Multicast,
    /// The limited broadcast address 255.255.255.255.
    Broadcast,
    /// Private, shared (carrier-grade NAT) or unique-local networks.
    Private,
    /// Reserved, documentation, benchmarking or tunnelling ranges that no public server uses.
    Reserved,
}

impl Rule {
    /// A short name of the rule, e.g. `loopback`.
    pub const fn name(self) -> &'static str {
        match self {
            Rule::Metadata => "cloud metadata address",
            Rule::Loopback => "loopback",
            Rule::Unspecified => "unspecified address",
            Rule::LinkLocal => "link-local",
            Rule::Multicast => "multicast",
            Rule::Broadcast => "broadcast",
            Rule::Private => "private network",
            Rule::Reserved => "reserved range",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An address the policy refused, and by which rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Refusal {
    /// The address as resolved or written.
    pub address: IpAddr,
    /// The IPv4 address embedded in `address` that the rule judged, if any.
    pub embedded: Option<Ipv4Addr>,
    /// The rule.
    pub rule: Rule,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "address {} refused: {}", self.address, self.rule)?;
        if let Some(v4) = self.embedded {
            write!(f, " (embedded IPv4 {v4})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refusal {}

/// Which addresses may be dialled. The default refuses everything in the module's table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AddressPolicy {
    allow_loopback: bool,
    allow_private: bool,
}

impl AddressPolicy {
    /// The default policy: only public unicast addresses.
    pub const fn strict() -> AddressPolicy {
        AddressPolicy {
            allow_loopback: false,
            allow_private: false,
        }
    }

    /// Also admits loopback addresses (tests, servers on the same host).
    #[must_use]
    pub const fn allow_loopback(mut self, allow: bool) -> AddressPolicy {
        self.allow_loopback = allow;
        self
    }

    /// Also admits private, shared and unique-local addresses (servers on the local network).
    #[must_use]
    pub const fn allow_private(mut self, allow: bool) -> AddressPolicy {
        self.allow_private = allow;
        self
    }

    /// Whether loopback is admitted.
    pub const fn allows_loopback(&self) -> bool {
        self.allow_loopback
    }

    /// Whether private networks are admitted.
    pub const fn allows_private(&self) -> bool {
        self.allow_private
    }

    /// Judges one address.
    pub fn check(&self, address: IpAddr) -> Result<(), Refusal> {
        let (judged, embedded) = match address {
            IpAddr::V4(v4) => (Judged::V4(v4), None),
            IpAddr::V6(v6) => match embedded_ipv4(v6) {
                Some(v4) => (Judged::V4(v4), Some(v4)),
                None => (Judged::V6(v6), None),
            },
        };
        let rule = match judged {
            Judged::V4(v4) => classify_v4(v4),
            Judged::V6(v6) => classify_v6(v6),
        };
        let allowed = match rule {
            None => true,
            Some(Rule::Loopback) => self.allow_loopback,
            Some(Rule::Private) => self.allow_private,
            Some(_) => false,
        };
        match rule {
            Some(rule) if !allowed => Err(Refusal {
                address,
                embedded,
                rule,
            }),
            _ => Ok(()),
        }
    }
}

enum Judged {
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

/// Metadata services reached over IPv4.
const METADATA_V4: [Ipv4Addr; 5] = [
    Ipv4Addr::new(169, 254, 169, 254), // AWS, GCP, Azure, OpenStack, Oracle…
    Ipv4Addr::new(169, 254, 170, 2),   // AWS ECS task metadata
    Ipv4Addr::new(169, 254, 170, 23),  // AWS EKS pod identity
    Ipv4Addr::new(100, 100, 100, 200), // Alibaba Cloud
    Ipv4Addr::new(192, 0, 0, 192),     // Oracle Cloud (legacy)
];

/// Metadata services reached over IPv6.
const METADATA_V6: [Ipv6Addr; 2] = [
    Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254), // AWS IMDS
    Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0023), // AWS EKS pod identity
];

fn classify_v4(a: Ipv4Addr) -> Option<Rule> {
    let o = a.octets();
    let within = |net: [u8; 4], bits: u32| {
        let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
        u32::from(a) & mask == u32::from(Ipv4Addr::from(net)) & mask
    };
    if METADATA_V4.contains(&a) {
        Some(Rule::Metadata)
    } else if o[0] == 127 {
        Some(Rule::Loopback)
    } else if o[0] == 0 {
        Some(Rule::Unspecified)
    } else if within([169, 254, 0, 0], 16) {
        Some(Rule::LinkLocal)
    } else if a.is_broadcast() {
        Some(Rule::Broadcast)
    } else if within([224, 0, 0, 0], 4) {
        Some(Rule::Multicast)
    } else if within([10, 0, 0, 0], 8)
        || within([172, 16, 0, 0], 12)
        || within([192, 168, 0, 0], 16)
        || within([100, 64, 0, 0], 10)
    {
        Some(Rule::Private)
    } else if within([192, 0, 0, 0], 24)
        || within([192, 0, 2, 0], 24)
        || within([198, 18, 0, 0], 15)
        || within([198, 51, 100, 0], 24)
        || within([203, 0, 113, 0], 24)
        || within([240, 0, 0, 0], 4)
    {
        Some(Rule::Reserved)
    } else {
        None
    }
}

fn classify_v6(a: Ipv6Addr) -> Option<Rule> {
    let s = a.segments();
    if METADATA_V6.contains(&a) {
        Some(Rule::Metadata)
    } else if a == Ipv6Addr::LOCALHOST {
        Some(Rule::Loopback)
    } else if a == Ipv6Addr::UNSPECIFIED {
        Some(Rule::Unspecified)
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some(Rule::LinkLocal)
    } else if s[0] & 0xff00 == 0xff00 {
        Some(Rule::Multicast)
    } else if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
        Some(Rule::Private)
    } else if (s[0] == 0x0100 && s[1..4] == [0, 0, 0])
        || (s[0] == 0x2001 && s[1] == 0)
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || s[0..6] == [0; 6]
    {
        Some(Rule::Reserved)
    } else {
        None
    }
}

/// The IPv4 address an IPv6 address embeds, for the forms that route to it.
pub fn embedded_ipv4(a: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = a.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        // ::ffff:a.b.c.d (mapped)
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        // ::ffff:0:a.b.c.d (translated)
        [0, 0, 0, 0, 0xffff, 0, _, _] => Some(low),
        // ::a.b.c.d (compatible, deprecated); :: and ::1 are IPv6's own.
        [0, 0, 0, 0, 0, 0, hi, lo] if hi != 0 || lo > 1 => Some(low),
        // 64:ff9b::/96 (well-known NAT64 prefix)
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        // 64:ff9b:1::/48 (local-use NAT64): the IPv4 address sits in the last 32 bits.
        [0x0064, 0xff9b, 0x0001, _, _, _, _, _] => Some(low),
        // 2002:AABB:CCDD::/48 (6to4)
        [0x2002, hi, lo, _, _, _, _, _] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

/// Parses a host as an IP literal in every spelling a resolver would accept for one: IPv4 with one
/// to four parts in decimal, octal (`0177`) or hex (`0x7f`) as `inet_aton` and the URL standard
/// read them (`2130706433`, `0x7f.1`, `127.1`; see [`mcp_sansio::parse_ipv4_host`]), IPv6 with or without brackets and with a zone
/// (`fe80::1%eth0`), each with or without one trailing dot. `None` means the host is a name.
pub fn parse_literal_host(host: &str) -> Option<IpAddr> {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.contains(':') {
        let host = host.strip_suffix('.').unwrap_or(host);
        let bare = host.split_once('%').map_or(host, |(addr, _zone)| addr);
        return bare.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    mcp_sansio::parse_ipv4_host(host).map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn rule(policy: AddressPolicy, s: &str) -> Option<Rule> {
        policy.check(ip(s)).err().map(|r| r.rule)
    }

    #[test]
    fn strict_policy_table() {
        let p = AddressPolicy::strict();
        let cases: &[(&str, Option<Rule>)] = &[
            ("93.184.215.14", None),
            ("8.8.8.8", None),
            ("2606:4700::6810:84e5", None),
            ("127.0.0.1", Some(Rule::Loopback)),
            ("127.255.255.254", Some(Rule::Loopback)),
            ("::1", Some(Rule::Loopback)),
            ("0.0.0.0", Some(Rule::Unspecified)),
            ("0.1.2.3", Some(Rule::Unspecified)),
            ("::", Some(Rule::Unspecified)),
            ("169.254.1.1", Some(Rule::LinkLocal)),
            ("fe80::1", Some(Rule::LinkLocal)),
            ("febf::1", Some(Rule::LinkLocal)),
            ("224.0.0.1", Some(Rule::Multicast)),
            ("239.255.255.250", Some(Rule::Multicast)),
            ("ff02::1", Some(Rule::Multicast)),
            ("255.255.255.255", Some(Rule::Broadcast)),
            ("10.1.2.3", Some(Rule::Private)),
            ("172.16.0.1", Some(Rule::Private)),
            ("172.31.255.255", Some(Rule::Private)),
            ("192.168.1.1", Some(Rule::Private)),
            ("100.64.0.1", Some(Rule::Private)),
            ("fd12:3456::1", Some(Rule::Private)),
            ("fc00::1", Some(Rule::Private)),
            ("169.254.169.254", Some(Rule::Metadata)),
            ("169.254.170.2", Some(Rule::Metadata)),
            ("100.100.100.200", Some(Rule::Metadata)),
            ("fd00:ec2::254", Some(Rule::Metadata)),
            ("192.0.2.1", Some(Rule::Reserved)),
            ("198.18.0.1", Some(Rule::Reserved)),
            ("240.0.0.1", Some(Rule::Reserved)),
            ("2001:db8::1", Some(Rule::Reserved)),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some(Rule::Reserved)),
        ];
        for (addr, want) in cases {
            assert_eq!(rule(p, addr), *want, "{addr}");
        }
        // Just outside the ranges.
        assert_eq!(rule(p, "172.32.0.1"), None);
        assert_eq!(rule(p, "100.128.0.1"), None);
        assert_eq!(rule(p, "11.0.0.1"), None);
        assert_eq!(rule(p, "fec0::1"), Some(Rule::Private));
    }

    #[test]
    fn embedded_ipv4_is_judged_by_what_it_embeds() {
        let p = AddressPolicy::strict();
        for (addr, v4, want) in [
            ("::ffff:127.0.0.1", "127.0.0.1", Rule::Loopback),
            ("::ffff:7f00:1", "127.0.0.1", Rule::Loopback),
            ("::127.0.0.1", "127.0.0.1", Rule::Loopback),
            ("::ffff:0:127.0.0.1", "127.0.0.1", Rule::Loopback),
            ("64:ff9b::7f00:1", "127.0.0.1", Rule::Loopback),
            ("64:ff9b:1::a9fe:a9fe", "169.254.169.254", Rule::Metadata),
            ("2002:7f00:1::", "127.0.0.1", Rule::Loopback),
            ("2002:a9fe:a9fe::1", "169.254.169.254", Rule::Metadata),
            ("::ffff:10.0.0.1", "10.0.0.1", Rule::Private),
            ("::ffff:0.0.0.0", "0.0.0.0", Rule::Unspecified),
        ] {
            let refusal = p.check(ip(addr)).unwrap_err();
            assert_eq!(refusal.rule, want, "{addr}");
            assert_eq!(refusal.embedded, Some(v4.parse().unwrap()), "{addr}");
        }
        // A public IPv4 address in a mapped form is public.
        assert!(p.check(ip("::ffff:8.8.8.8")).is_ok());
        assert!(p.check(ip("2002:808:808::1")).is_ok());
    }

    #[test]
    fn widenings_admit_only_their_rule() {
        let loopback = AddressPolicy::strict().allow_loopback(true);
        assert_eq!(rule(loopback, "127.0.0.1"), None);
        assert_eq!(rule(loopback, "::1"), None);
        assert_eq!(rule(loopback, "::ffff:127.0.0.1"), None);
        assert_eq!(rule(loopback, "10.0.0.1"), Some(Rule::Private));
        assert_eq!(rule(loopback, "0.0.0.0"), Some(Rule::Unspecified));
        let private = AddressPolicy::strict().allow_private(true);
        assert_eq!(rule(private, "10.0.0.1"), None);
        assert_eq!(rule(private, "fd12::1"), None);
        assert_eq!(rule(private, "127.0.0.1"), Some(Rule::Loopback));
        let both = private.allow_loopback(true);
        // No widening admits metadata or link-local addresses.
        for addr in [
            "169.254.169.254",
            "100.100.100.200",
            "fd00:ec2::254",
            "169.254.1.1",
        ] {
            assert!(both.check(ip(addr)).is_err(), "{addr}");
        }
    }

    #[test]
    fn refusal_names_address_and_rule() {
        let r = AddressPolicy::strict()
            .check(ip("::ffff:127.0.0.1"))
            .unwrap_err();
        assert_eq!(
            r.to_string(),
            "address ::ffff:127.0.0.1 refused: loopback (embedded IPv4 127.0.0.1)"
        );
    }

    #[test]
    fn literal_spellings() {
        let lo = Some(ip("127.0.0.1"));
        for host in [
            "127.0.0.1",
            "127.0.0.1.",
            "2130706433",
            "0x7f000001",
            "0x7f.1",
            "127.1",
            "127.0.1",
            "0177.0.0.1",
            "0177.0.0.01",
            "0x7F.0.0.0x1",
        ] {
            assert_eq!(parse_literal_host(host), lo, "{host}");
        }
        assert_eq!(parse_literal_host("[::1]"), Some(ip("::1")));
        assert_eq!(parse_literal_host("::1"), Some(ip("::1")));
        assert_eq!(parse_literal_host("fe80::1%eth0"), Some(ip("fe80::1")));
        assert_eq!(parse_literal_host("0"), Some(ip("0.0.0.0")));
        // inet_aton reads a bare "0x" as zero.
        assert_eq!(parse_literal_host("0x"), Some(ip("0.0.0.0")));
        assert_eq!(
            parse_literal_host("169.254.43518"),
            Some(ip("169.254.169.254"))
        );
        for name in [
            "example.com",
            "localhost",
            "127.0.0.1.example",
            "1.2.3.4.5",
            "256.0.0.1",
            "1.2.3.256",
            "08.0.0.1",
            "",
            ".",
            "1..1",
            "4294967296",
        ] {
            assert_eq!(parse_literal_host(name), None, "{name}");
        }
    }
}
