//! Name resolution, vetted: resolve once, judge every address, dial only what passed.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use mcp_sansio::{TransportError, TransportErrorKind};

use crate::guard::policy::{parse_literal_host, AddressPolicy, Refusal};

/// Resolves a host name to addresses. Implementations block; the tokio adapter runs them on its
/// blocking pool.
pub trait Resolve: Send + Sync + 'static {
    /// The addresses of `host` (a name, never an IP literal: literals are parsed before).
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>>;
}

/// The system resolver (`getaddrinfo`). It reads no proxy settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        Ok((host, port).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// A fixed table of names, for tests and pinned deployments. Names are matched ASCII
/// case-insensitively and without one trailing dot; unknown names fail to resolve.
#[derive(Clone, Debug, Default)]
pub struct StaticResolver {
    names: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> StaticResolver {
        StaticResolver::default()
    }

    /// Adds `name` with `addresses`.
    #[must_use]
    pub fn with(mut self, name: &str, addresses: &[IpAddr]) -> StaticResolver {
        self.names.insert(normalise(name), addresses.to_vec());
        self
    }
}

fn normalise(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

impl Resolve for StaticResolver {
    fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
        self.names
            .get(&normalise(host))
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no such host: {host}")))
    }
}

/// Why no address may be dialled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// The name did not resolve.
    #[error("cannot resolve {host}: {message}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// The name resolved to no address at all.
    #[error("{host} resolved to no address")]
    NoAddress {
        /// The host.
        host: String,
    },
    /// Every address was refused; the first refusal is named.
    #[error("{host}: {refusal}")]
    Refused {
        /// The host.
        host: String,
        /// The first refused address and its rule.
        refusal: Refusal,
        /// How many addresses were refused in all.
        refused: usize,
    },
}

/// The transport error of a guard failure. Its message does not repeat what its kind already
/// says (`name resolution failed`, `address refused by policy`): it names the host, the address
/// and the rule.
impl From<GuardError> for TransportError {
    fn from(e: GuardError) -> TransportError {
        let (kind, message) = match e {
            GuardError::Resolve { host, message } => {
                (TransportErrorKind::Resolve, format!("{host}: {message}"))
            }
            e @ GuardError::NoAddress { .. } => (TransportErrorKind::Resolve, e.to_string()),
            GuardError::Refused {
                host,
                refusal,
                refused,
            } => {
                let (address, rule) = (refusal.address, refusal.rule);
                let mut m = if host == address.to_string() {
                    format!("{address} ({rule}")
                } else if parse_literal_host(&host).is_some() {
                    format!("{host} is {address} ({rule}")
                } else {
                    format!("{host} resolves to {address} ({rule}")
                };
                if let Some(v4) = refusal.embedded {
                    m.push_str(&format!(", embedded IPv4 {v4}"));
                }
                m.push(')');
                if refused > 1 {
                    let more = refused - 1;
                    let s = if more == 1 { "" } else { "es" };
                    m.push_str(&format!(", and {more} more refused address{s}"));
                }
                (TransportErrorKind::AddressRefused, m)
            }
        };
        TransportError { kind, message }
    }
}

/// Resolves `host` once (or parses it, when it is an IP literal in any spelling) and returns the
/// addresses the policy admits, in the resolver's order, without duplicates. Refused addresses
/// are dropped; when none is left, the first refusal is the error.
pub fn vetted_addresses(
    resolver: &dyn Resolve,
    policy: &AddressPolicy,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, GuardError> {
    let resolved = match parse_literal_host(host) {
        Some(ip) => vec![ip],
        None => resolver
            .resolve(host, port)
            .map_err(|e| GuardError::Resolve {
                host: host.to_owned(),
                message: e.to_string(),
            })?,
    };
    if resolved.is_empty() {
        return Err(GuardError::NoAddress {
            host: host.to_owned(),
        });
    }
    let mut admitted: Vec<SocketAddr> = Vec::new();
    let mut first_refusal = None;
    let mut refused = 0;
    for ip in resolved {
        match policy.check(ip) {
            Ok(()) => {
                let addr = SocketAddr::new(ip, port);
                if !admitted.contains(&addr) {
                    admitted.push(addr);
                }
            }
            Err(r) => {
                refused += 1;
                first_refusal.get_or_insert(r);
            }
        }
    }
    match (admitted.is_empty(), first_refusal) {
        (true, Some(refusal)) => Err(GuardError::Refused {
            host: host.to_owned(),
            refusal,
            refused,
        }),
        _ => Ok(admitted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::policy::Rule;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn literals_bypass_the_resolver() {
        let none = StaticResolver::new();
        let p = AddressPolicy::strict();
        let e = vetted_addresses(&none, &p, "2130706433", 80).unwrap_err();
        assert!(matches!(e, GuardError::Refused { refusal, .. } if refusal.rule == Rule::Loopback));
        let ok = vetted_addresses(&none, &p, "8.8.8.8", 443).unwrap();
        assert_eq!(ok, vec![SocketAddr::new(ip("8.8.8.8"), 443)]);
    }

    #[test]
    fn refused_addresses_are_dropped_and_the_rest_kept() {
        let r = StaticResolver::new().with(
            "mixed.test",
            &[ip("127.0.0.1"), ip("93.184.215.14"), ip("93.184.215.14")],
        );
        let got = vetted_addresses(&r, &AddressPolicy::strict(), "MIXED.test.", 80).unwrap();
        assert_eq!(got, vec![SocketAddr::new(ip("93.184.215.14"), 80)]);
    }

    #[test]
    fn transport_messages_do_not_repeat_their_kind() {
        let p = AddressPolicy::strict();
        let none = StaticResolver::new();
        let message = |host: &str, r: &StaticResolver| {
            let e = TransportError::from(vetted_addresses(r, &p, host, 80).unwrap_err());
            e.to_string()
        };
        assert_eq!(
            message("127.0.0.1", &none),
            "address refused by policy: 127.0.0.1 (loopback)"
        );
        assert_eq!(
            message("2130706433", &none),
            "address refused by policy: 2130706433 is 127.0.0.1 (loopback)"
        );
        assert_eq!(
            message("::ffff:127.0.0.1", &none),
            "address refused by policy: ::ffff:127.0.0.1 (loopback, embedded IPv4 127.0.0.1)"
        );
        let r = StaticResolver::new().with("evil.test", &[ip("169.254.169.254"), ip("10.0.0.1")]);
        assert_eq!(
            message("evil.test", &r),
            "address refused by policy: evil.test resolves to 169.254.169.254 \
             (cloud metadata address), and 1 more refused address"
        );
        let e = TransportError::from(GuardError::Resolve {
            host: "nowhere.test".into(),
            message: "not known".into(),
        });
        assert_eq!(e.kind, TransportErrorKind::Resolve);
        assert_eq!(
            e.to_string(),
            "name resolution failed: nowhere.test: not known"
        );
    }

    #[test]
    fn all_refused_names_the_first() {
        let r = StaticResolver::new().with("evil.test", &[ip("169.254.169.254"), ip("10.0.0.1")]);
        let e = vetted_addresses(&r, &AddressPolicy::strict(), "evil.test", 80).unwrap_err();
        assert_eq!(
            e.to_string(),
            "evil.test: address 169.254.169.254 refused: cloud metadata address"
        );
        let t: TransportError = e.into();
        assert_eq!(t.kind, TransportErrorKind::AddressRefused);
    }

    #[test]
    fn resolution_failures_are_typed() {
        let r = StaticResolver::new().with("empty.test", &[]);
        let p = AddressPolicy::strict();
        let e = vetted_addresses(&r, &p, "missing.test", 80).unwrap_err();
        assert!(matches!(e, GuardError::Resolve { .. }));
        let e = vetted_addresses(&r, &p, "empty.test", 80).unwrap_err();
        assert!(matches!(e, GuardError::NoAddress { .. }));
        assert_eq!(TransportError::from(e).kind, TransportErrorKind::Resolve);
    }
}
