//! The server endpoint: a strictly parsed absolute `http`/`https` URL.
//!
//! The rules of the accepted language are on [`Endpoint`].
use crate::prelude::*;

use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};
use core::str::FromStr;

/// The URL scheme of an [`Endpoint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain-text HTTP.
    Http,
    /// HTTP over TLS.
    Https,
}

impl Scheme {
    /// The scheme in lowercase, as written in a URL: `"http"` or `"https"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// The port used when a URL has none: 80 for `http`, 443 for `https`.
    pub const fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a URL was refused by [`Endpoint::parse`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EndpointError {
    /// The URL is the empty string.
    #[error("invalid endpoint URL: it is empty")]
    Empty,
    /// The URL contains a space, tab, line break or other ASCII whitespace.
    #[error("invalid endpoint URL: it contains whitespace")]
    Whitespace,
    /// The URL contains an ASCII control character.
    #[error("invalid endpoint URL: it contains a control character")]
    ControlCharacter,
    /// The URL contains a non-ASCII character (write international names in punycode).
    #[error("invalid endpoint URL: it contains a non-ASCII character")]
    NonAscii,
    /// The URL does not start with a scheme (`http:` or `https:`).
    #[error("invalid endpoint URL: it has no scheme (expected http:// or https://)")]
    MissingScheme,
    /// The scheme is neither `http` nor `https`.
    #[error("invalid endpoint URL: the scheme is not http or https")]
    UnsupportedScheme,
    /// The scheme is not followed by `//` and an authority.
    #[error("invalid endpoint URL: it has no authority (expected scheme://host)")]
    MissingAuthority,
    /// The authority contains userinfo (`user@` or `user:password@`).
    #[error("invalid endpoint URL: it contains userinfo (credentials do not belong in a URL)")]
    UserInfo,
    /// The host is empty.
    #[error("invalid endpoint URL: the host is empty")]
    EmptyHost,
    /// The host is not a valid registered name, dotted-quad IPv4 literal or bracketed IPv6
    /// literal.
    #[error("invalid endpoint URL: the host is not a valid name, IPv4 or bracketed IPv6 literal")]
    InvalidHost,
    /// The port is empty, not decimal digits, 0, or above 65535.
    #[error("invalid endpoint URL: the port is not a number in 1..=65535")]
    InvalidPort,
    /// The path or query contains a character that must be percent-encoded.
    #[error(
        "invalid endpoint URL: the path or query contains a character that must be percent-encoded"
    )]
    InvalidPathCharacter,
    /// A `%` in the path or query is not followed by two hexadecimal digits.
    #[error("invalid endpoint URL: the path or query has a malformed percent-escape")]
    InvalidPercentEncoding,
}

/// A parsed server endpoint: scheme, host, port and the origin-form request target.
///
/// The URL comes from configuration supplied by someone else, so the parser accepts a deliberately
/// narrow language and refuses everything it cannot represent unambiguously on the wire:
///
/// - the scheme is `http` or `https` (any case) followed by `//` and an authority;
/// - the authority has no userinfo (credentials in URLs are a configuration error);
/// - the host is a registered name made of ASCII letters, digits, `-`, `.` and `_` (no empty
///   labels, a single trailing dot allowed), an IPv4 literal, or a bracketed IPv6 literal (no
///   zone identifier). A host whose last label is numeric is an IPv4 address in one of the
///   spellings the URL standard accepts (`127.0.0.1`, `127.1`, `0x7f.1`, `0177.0.0.1`,
///   `2130706433`, each with an optional trailing dot); it is normalised to its dotted quad, so
///   that the `Host` header, the origin and an adapter's address policy all see the address a
///   resolver would dial. Anything else with a numeric last label (`256.1.1.1`, `a.0x7f`) is
///   refused;
/// - the port, when present, is decimal digits in `1..=65535`;
/// - path and query are kept exactly as written (no normalisation, no percent-decoding), but must
///   consist of characters that RFC 3986 allows there, with well-formed `%HH` escapes;
/// - the fragment is dropped;
/// - whitespace, control characters and non-ASCII characters are refused anywhere.
///
/// Its `Debug` output redacts the secret parameters of the target's query (`api_key`,
/// `token`…, [`redact::url`](crate::auth::redact::url)).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    scheme: Scheme,
    /// The authority exactly as written (no userinfo by construction).
    authority: String,
    /// The host as written, without brackets for IPv6.
    host: String,
    /// The IPv6 literal, when the host is one (for the normalised origin).
    ipv6: Option<Ipv6Addr>,
    port: u16,
    target: String,
}

impl core::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("scheme", &self.scheme)
            .field("authority", &self.authority)
            .field("host", &self.host)
            .field("ipv6", &self.ipv6)
            .field("port", &self.port)
            .field("target", &crate::auth::redact::url(&self.target))
            .finish()
    }
}

impl Endpoint {
    /// Parses an absolute `http` or `https` URL by the rules on [`Endpoint`].
    pub fn parse(url: &str) -> Result<Endpoint, EndpointError> {
        if url.is_empty() {
            return Err(EndpointError::Empty);
        }
        check_characters(url)?;

        let (scheme_str, after_scheme) = url.split_once(':').ok_or(EndpointError::MissingScheme)?;
        if !is_scheme_syntax(scheme_str) {
            return Err(EndpointError::MissingScheme);
        }
        let scheme = if scheme_str.eq_ignore_ascii_case("http") {
            Scheme::Http
        } else if scheme_str.eq_ignore_ascii_case("https") {
            Scheme::Https
        } else {
            return Err(EndpointError::UnsupportedScheme);
        };
        let after_slashes = after_scheme
            .strip_prefix("//")
            .ok_or(EndpointError::MissingAuthority)?;

        let authority_end = after_slashes
            .find(['/', '?', '#'])
            .unwrap_or(after_slashes.len());
        let (authority, rest) = after_slashes.split_at(authority_end);
        if authority.contains('@') {
            return Err(EndpointError::UserInfo);
        }
        if authority.is_empty() {
            return Err(EndpointError::EmptyHost);
        }

        let (host, ipv6, port_str) = split_host_port(authority)?;
        let port = match port_str {
            None => scheme.default_port(),
            Some(p) => parse_port(p)?,
        };
        let (host, authority) = match ipv6.is_none().then(|| parse_ipv4_host(host)).flatten() {
            Some(v4) => {
                let host = v4.to_string();
                let authority = match port_str {
                    Some(p) => format!("{host}:{p}"),
                    None => host.clone(),
                };
                (host, authority)
            }
            None => (host.to_owned(), authority.to_owned()),
        };

        let path_and_query = match rest.find('#') {
            Some(i) => rest.get(..i).unwrap_or(""),
            None => rest,
        };
        check_path_and_query(path_and_query)?;
        let target = if path_and_query.starts_with('/') {
            path_and_query.to_owned()
        } else {
            // Empty, or a query without a path.
            let mut t = String::with_capacity(path_and_query.len() + 1);
            t.push('/');
            t.push_str(path_and_query);
            t
        };

        Ok(Endpoint {
            scheme,
            authority,
            host,
            ipv6,
            port,
            target,
        })
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host as written in the URL (case kept), without brackets for an IPv6 literal; an IPv4
    /// literal in a shorthand spelling is given as its dotted quad.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port: the explicit one, or the scheme's default.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The `Host` header value: the authority as written (brackets kept for IPv6, `:port` only if
    /// the URL had an explicit port), with an IPv4 shorthand normalised to its dotted quad.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The origin-form request target: path and query as written, `/` when the path is empty.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The normalised origin, `scheme://host[:port]`, usable as a cache key: scheme and host in
    /// lowercase, an IPv6 literal in its canonical form, the port omitted when it is the default.
    pub fn origin(&self) -> String {
        let host = match self.ipv6 {
            Some(addr) => format!("[{addr}]"),
            None => self.host.to_ascii_lowercase(),
        };
        if self.port == self.scheme.default_port() {
            format!("{}://{}", self.scheme.as_str(), host)
        } else {
            format!("{}://{}:{}", self.scheme.as_str(), host, self.port)
        }
    }
}

/// Refuses whitespace, control characters and non-ASCII anywhere in the URL.
fn check_characters(url: &str) -> Result<(), EndpointError> {
    for b in url.bytes() {
        if !b.is_ascii() {
            return Err(EndpointError::NonAscii);
        }
        if b.is_ascii_whitespace() || b == 0x0b {
            return Err(EndpointError::Whitespace);
        }
        if b.is_ascii_control() {
            return Err(EndpointError::ControlCharacter);
        }
    }
    Ok(())
}

/// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1).
fn is_scheme_syntax(s: &str) -> bool {
    let mut bytes = s.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_alphabetic() => {}
        _ => return false,
    }
    bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// Splits a non-empty authority without userinfo into host (brackets removed), the IPv6 literal
/// if it is one, and the port text if there is a `:`.
fn split_host_port(
    authority: &str,
) -> Result<(&str, Option<Ipv6Addr>, Option<&str>), EndpointError> {
    if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed
            .split_once(']')
            .ok_or(EndpointError::InvalidHost)?;
        let addr = Ipv6Addr::from_str(inside).map_err(|_| EndpointError::InvalidHost)?;
        let port = if after.is_empty() {
            None
        } else {
            Some(after.strip_prefix(':').ok_or(EndpointError::InvalidHost)?)
        };
        return Ok((inside, Some(addr), port));
    }
    let (host, port) = match authority.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    if host.is_empty() {
        return Err(EndpointError::EmptyHost);
    }
    check_reg_name_or_ipv4(host)?;
    Ok((host, None, port))
}

/// A registered name of letters, digits, `-`, `.`, `_`, or a dotted-quad IPv4 literal.
fn check_reg_name_or_ipv4(host: &str) -> Result<(), EndpointError> {
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
    {
        return Err(EndpointError::InvalidHost);
    }
    let without_trailing_dot = host.strip_suffix('.').unwrap_or(host);
    if without_trailing_dot.split('.').any(str::is_empty) {
        return Err(EndpointError::InvalidHost);
    }
    let last_label = without_trailing_dot.rsplit('.').next().unwrap_or("");
    if is_numeric_label(last_label) && parse_ipv4_host(host).is_none() {
        // Ends in a number, so it is an address or nothing: never a name to resolve.
        return Err(EndpointError::InvalidHost);
    }
    Ok(())
}

/// Reads `host` as an IPv4 address the way the URL standard's IPv4 parser (and `inet_aton`) do:
/// one to four dot-separated numbers, each decimal, octal (leading `0`) or hexadecimal (`0x`), the
/// last filling the remaining bytes, with one trailing dot allowed. `None` if it is not one.
///
/// `127.0.0.1`, `127.1`, `0x7f.1`, `0177.0.0.1` and `2130706433` are all `127.0.0.1`.
pub fn parse_ipv4_host(host: &str) -> Option<Ipv4Addr> {
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty() || host.len() > 64 {
        return None;
    }
    let mut parts = [0u32; 4];
    let mut count = 0;
    for part in host.split('.') {
        *parts.get_mut(count)? = parse_ipv4_number(part)?;
        count += 1;
    }
    let (last, head) = parts.get(..count)?.split_last()?;
    if head.iter().any(|p| *p > 0xff) {
        return None;
    }
    // The last number fills the 4 - (count - 1) bytes that remain.
    let last_bytes = 5 - count as u32;
    if last_bytes < 4 && *last >> (8 * last_bytes) != 0 {
        return None;
    }
    let value = head
        .iter()
        .enumerate()
        .fold(*last, |v, (i, p)| v | p << (24 - 8 * i as u32));
    Some(Ipv4Addr::from(value))
}

/// One number of an IPv4 host: `0x` hex (possibly empty, meaning 0), `0` octal, or decimal.
fn parse_ipv4_number(part: &str) -> Option<u32> {
    let (digits, radix) = match part.get(..2) {
        Some(p) if p.eq_ignore_ascii_case("0x") => (part.get(2..)?, 16),
        _ if part.len() > 1 && part.starts_with('0') => (part.get(1..)?, 8),
        _ => (part, 10),
    };
    if digits.is_empty() {
        return (radix == 16).then_some(0);
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// A label that an IPv4 number parser would take as a number: decimal digits, or `0x` + hex.
fn is_numeric_label(label: &str) -> bool {
    if !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    match label.get(..2) {
        Some(p) if p.eq_ignore_ascii_case("0x") => {
            label.bytes().skip(2).all(|b| b.is_ascii_hexdigit())
        }
        _ => false,
    }
}

/// Decimal digits in `1..=65535`.
fn parse_port(p: &str) -> Result<u16, EndpointError> {
    if p.is_empty() {
        return Err(EndpointError::InvalidPort);
    }
    let mut value: u32 = 0;
    for b in p.bytes() {
        if !b.is_ascii_digit() {
            return Err(EndpointError::InvalidPort);
        }
        value = value * 10 + u32::from(b - b'0');
        if value > u32::from(u16::MAX) {
            return Err(EndpointError::InvalidPort);
        }
    }
    match u16::try_from(value) {
        Ok(0) | Err(_) => Err(EndpointError::InvalidPort),
        Ok(port) => Ok(port),
    }
}

/// Path and query characters allowed by RFC 3986: unreserved, sub-delims, `:`, `@`, `/`, `?`, and
/// `%HH` escapes.
fn check_path_and_query(s: &str) -> Result<(), EndpointError> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return Err(EndpointError::InvalidPercentEncoding);
            }
            i += 3;
            continue;
        }
        let allowed = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
                    | b'?'
            );
        if !allowed {
            return Err(EndpointError::InvalidPathCharacter);
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(url: &str) -> Endpoint {
        match Endpoint::parse(url) {
            Ok(e) => e,
            Err(err) => panic!("{url:?} refused: {err}"),
        }
    }

    #[test]
    fn good_urls() {
        // url, scheme, host, port, authority, target, origin
        let table: &[(&str, Scheme, &str, u16, &str, &str, &str)] = &[
            (
                "http://example.com/mcp",
                Scheme::Http,
                "example.com",
                80,
                "example.com",
                "/mcp",
                "http://example.com",
            ),
            (
                "HTTPS://Example.COM:8443/a/b?x=1&y=%2F",
                Scheme::Https,
                "Example.COM",
                8443,
                "Example.COM:8443",
                "/a/b?x=1&y=%2F",
                "https://example.com:8443",
            ),
            (
                "http://127.0.0.1:18953",
                Scheme::Http,
                "127.0.0.1",
                18953,
                "127.0.0.1:18953",
                "/",
                "http://127.0.0.1:18953",
            ),
            ("http://h?x", Scheme::Http, "h", 80, "h", "/?x", "http://h"),
            (
                "http://h/p#frag",
                Scheme::Http,
                "h",
                80,
                "h",
                "/p",
                "http://h",
            ),
            ("http://h#frag", Scheme::Http, "h", 80, "h", "/", "http://h"),
            (
                "https://[::1]:8443/mcp",
                Scheme::Https,
                "::1",
                8443,
                "[::1]:8443",
                "/mcp",
                "https://[::1]:8443",
            ),
            (
                "http://[2001:DB8:0:0::1]/",
                Scheme::Http,
                "2001:DB8:0:0::1",
                80,
                "[2001:DB8:0:0::1]",
                "/",
                "http://[2001:db8::1]",
            ),
            (
                "http://h:80/",
                Scheme::Http,
                "h",
                80,
                "h:80",
                "/",
                "http://h",
            ),
            (
                "https://h:443",
                Scheme::Https,
                "h",
                443,
                "h:443",
                "/",
                "https://h",
            ),
            (
                "http://my_host.internal.:65535/./a/../b//c",
                Scheme::Http,
                "my_host.internal.",
                65535,
                "my_host.internal.:65535",
                "/./a/../b//c",
                "http://my_host.internal.:65535",
            ),
            (
                "http://h/a:b@c;d=e,f(g)*+!$'~",
                Scheme::Http,
                "h",
                80,
                "h",
                "/a:b@c;d=e,f(g)*+!$'~",
                "http://h",
            ),
        ];
        for &(url, scheme, host, port, authority, target, origin) in table {
            let e = ok(url);
            assert_eq!(e.scheme(), scheme, "{url}");
            assert_eq!(e.host(), host, "{url}");
            assert_eq!(e.port(), port, "{url}");
            assert_eq!(e.authority(), authority, "{url}");
            assert_eq!(e.target(), target, "{url}");
            assert_eq!(e.origin(), origin, "{url}");
        }
    }

    #[test]
    fn bad_urls() {
        use EndpointError::*;
        let table: &[(&str, EndpointError)] = &[
            ("", Empty),
            ("http://h/a b", Whitespace),
            (" http://h/", Whitespace),
            ("http://h/\t", Whitespace),
            ("http://h/\r\nX: y", Whitespace),
            ("http://h/\0", ControlCharacter),
            ("http://h/\x7f", ControlCharacter),
            ("http://h/é", NonAscii),
            ("http://bücher.example/", NonAscii),
            ("example.com/mcp", MissingScheme),
            ("//example.com/mcp", MissingScheme),
            ("://example.com", MissingScheme),
            ("1http://h/", MissingScheme),
            ("ftp://example.com/", UnsupportedScheme),
            ("ws://example.com/", UnsupportedScheme),
            ("localhost:8080", UnsupportedScheme),
            ("http:example.com", MissingAuthority),
            ("http:/example.com", MissingAuthority),
            ("http://user@h/", UserInfo),
            ("http://user:secret@h/", UserInfo),
            ("http://@h/", UserInfo),
            ("http://h@evil/", UserInfo),
            ("http:///mcp", EmptyHost),
            ("http://", EmptyHost),
            ("http://:80/", EmptyHost),
            ("http://?x", EmptyHost),
            ("http://h%2e/", InvalidHost),
            ("http://h!/", InvalidHost),
            ("http://a..b/", InvalidHost),
            ("http://.a/", InvalidHost),
            ("http://[::1/", InvalidHost),
            ("http://[::1]x/", InvalidHost),
            ("http://[]/", InvalidHost),
            ("http://[fe80::1%25eth0]/", InvalidHost),
            ("http://[v1.x]/", InvalidHost),
            ("http://::1/", EmptyHost),
            ("http://256.1.1.1/", InvalidHost),
            ("http://1.2.3.4.5/", InvalidHost),
            ("http://1.2.3.256/", InvalidHost),
            ("http://1.2.65536/", InvalidHost),
            ("http://4294967296/", InvalidHost),
            ("http://08.0.0.1/", InvalidHost),
            ("http://0x7g.1/", InvalidHost),
            ("http://1..2/", InvalidHost),
            ("http://a.0x7f/", InvalidHost),
            ("http://h:0/", InvalidPort),
            ("http://h:70000/", InvalidPort),
            ("http://h:65536/", InvalidPort),
            ("http://h:/", InvalidPort),
            ("http://h:8o/", InvalidPort),
            ("http://h:+80/", InvalidPort),
            ("http://h:1:2/", InvalidPort),
            ("http://h:99999999999999999999999/", InvalidPort),
            ("http://[::1]:0/", InvalidPort),
            ("http://h/a\\b", InvalidPathCharacter),
            ("http://h/<script>", InvalidPathCharacter),
            ("http://h/a\"b", InvalidPathCharacter),
            ("http://h/?q={x}", InvalidPathCharacter),
            ("http://h/a%2", InvalidPercentEncoding),
            ("http://h/a%zz", InvalidPercentEncoding),
            ("http://h/%", InvalidPercentEncoding),
        ];
        for (url, want) in table {
            assert_eq!(Endpoint::parse(url).as_ref(), Err(want), "{url:?}");
        }
    }

    #[test]
    fn ipv4_shorthands_are_normalised_to_the_address() {
        // url, host, authority, origin
        for (url, host, authority, origin) in [
            (
                "http://2130706433/",
                "127.0.0.1",
                "127.0.0.1",
                "http://127.0.0.1",
            ),
            (
                "http://0x7f.1:8080/",
                "127.0.0.1",
                "127.0.0.1:8080",
                "http://127.0.0.1:8080",
            ),
            (
                "http://127.1/",
                "127.0.0.1",
                "127.0.0.1",
                "http://127.0.0.1",
            ),
            (
                "http://0177.0.0.01/",
                "127.0.0.1",
                "127.0.0.1",
                "http://127.0.0.1",
            ),
            (
                "http://127.0.0.1./",
                "127.0.0.1",
                "127.0.0.1",
                "http://127.0.0.1",
            ),
            (
                "http://0X7F.0.0.0x1/",
                "127.0.0.1",
                "127.0.0.1",
                "http://127.0.0.1",
            ),
            ("http://1.2.3/", "1.2.0.3", "1.2.0.3", "http://1.2.0.3"),
            ("http://01.1.1.1/", "1.1.1.1", "1.1.1.1", "http://1.1.1.1"),
            (
                "http://169.254.43518/",
                "169.254.169.254",
                "169.254.169.254",
                "http://169.254.169.254",
            ),
            ("http://0x/", "0.0.0.0", "0.0.0.0", "http://0.0.0.0"),
        ] {
            let e = ok(url);
            assert_eq!(
                (e.host(), e.authority(), e.origin().as_str()),
                (host, authority, origin),
                "{url}"
            );
        }
        // A strict dotted quad is kept as written, and names with numbers stay names.
        assert_eq!(ok("http://10.0.0.1:9/").authority(), "10.0.0.1:9");
        assert_eq!(ok("http://a1.example/").host(), "a1.example");
        assert_eq!(ok("http://1.2.3.example/").host(), "1.2.3.example");
        assert_eq!(parse_ipv4_host("example.com"), None);
        assert_eq!(parse_ipv4_host(""), None);
        assert_eq!(parse_ipv4_host("."), None);
    }

    #[test]
    fn fragment_content_is_not_validated_beyond_characters() {
        assert_eq!(ok("http://h/p?q#a{b}").target(), "/p?q");
        assert_eq!(
            Endpoint::parse("http://h/p#a b"),
            Err(EndpointError::Whitespace)
        );
    }

    #[test]
    fn error_messages_name_the_cause() {
        assert!(EndpointError::UserInfo.to_string().contains("userinfo"));
        assert!(EndpointError::InvalidPort.to_string().contains("port"));
        assert!(EndpointError::UnsupportedScheme
            .to_string()
            .contains("scheme"));
    }
}
