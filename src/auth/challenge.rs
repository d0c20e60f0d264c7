//! The `WWW-Authenticate` challenge parser (RFC 9110 §11.6.1, with the Bearer parameters of
//! RFC 6750 §3 and RFC 9728 §5.1).
//!
//! ```text
//! WWW-Authenticate = #challenge
//! challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//! auth-param       = token BWS "=" BWS ( token / quoted-string )
//! token68          = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
//! ```
//!
//! Several challenges may share one header line and may be spread over several lines; the
//! parser reads them all, in order. Parameter names are case-insensitive (kept in lowercase); a
//! name given twice in one challenge is refused, as RFC 9110 requires. Quoted strings may contain
//! `\`-escapes. The input is bounded ([`MAX_CHALLENGE_BYTES`], `MAX_CHALLENGES`,
//! `MAX_PARAMS`) and any byte sequence gives a value or a typed error, never a panic.
use crate::prelude::*;

use crate::http1::request::is_tchar;

/// The most bytes of `WWW-Authenticate` values read (all lines together).
pub const MAX_CHALLENGE_BYTES: usize = 8 * 1024;
/// The most challenges read from the values of one response.
pub const MAX_CHALLENGES: usize = 16;
/// The most parameters in one challenge.
pub const MAX_PARAMS: usize = 32;

/// Why `WWW-Authenticate` values were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChallengeError {
    /// The values together are longer than [`MAX_CHALLENGE_BYTES`].
    #[error("WWW-Authenticate is longer than {limit} bytes")]
    TooLong {
        /// The limit.
        limit: usize,
    },
    /// More than `MAX_CHALLENGES` challenges.
    #[error("WWW-Authenticate has more than {limit} challenges")]
    TooManyChallenges {
        /// The limit.
        limit: usize,
    },
    /// More than `MAX_PARAMS` parameters in one challenge.
    #[error("a WWW-Authenticate challenge has more than {limit} parameters")]
    TooManyParams {
        /// The limit.
        limit: usize,
    },
    /// The same parameter twice in one challenge.
    #[error("WWW-Authenticate parameter {name:?} appears twice in one challenge")]
    DuplicateParam {
        /// The parameter name (lowercase).
        name: String,
    },
    /// The text does not follow the grammar.
    #[error("malformed WWW-Authenticate at byte {at} of line {line}: {reason}")]
    Syntax {
        /// The header line (0-based) in which the error is.
        line: usize,
        /// The byte offset in that line.
        at: usize,
        /// What was expected.
        reason: &'static str,
    },
}

/// One challenge: its scheme, and either a token68 or parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme as written (compare it case-insensitively, see [`Challenge::is_scheme`]).
    pub scheme: String,
    /// The token68, when the challenge carries one instead of parameters.
    pub token68: Option<String>,
    /// The parameters, names in lowercase, values unquoted and unescaped, in order.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// Whether the scheme is `scheme`, compared case-insensitively.
    pub fn is_scheme(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The value of parameter `name` (give it in lowercase).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The `error` parameter of a Bearer challenge (RFC 6750 §3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BearerErrorCode {
    /// `invalid_request`.
    InvalidRequest,
    /// `invalid_token`: expired, revoked or otherwise invalid.
    InvalidToken,
    /// `insufficient_scope`: the token lacks a scope the request needs (step-up).
    InsufficientScope,
    /// Another code.
    Other(String),
}

/// What a `Bearer` challenge tells a client about authorizing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `resource_metadata`: where the protected-resource metadata is (RFC 9728 §5.1), unchecked.
    pub resource_metadata: Option<String>,
    /// `scope`, split on spaces (empty when absent).
    pub scope: Vec<String>,
    /// `error`.
    pub error: Option<BearerErrorCode>,
    /// `error_description`, for people.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// Reads the Bearer parameters of `challenge` (whatever its scheme).
    pub fn from_challenge(challenge: &Challenge) -> BearerChallenge {
        let error = challenge.param("error").map(|e| match e {
            "invalid_request" => BearerErrorCode::InvalidRequest,
            "invalid_token" => BearerErrorCode::InvalidToken,
            "insufficient_scope" => BearerErrorCode::InsufficientScope,
            other => BearerErrorCode::Other(other.to_owned()),
        });
        BearerChallenge {
            resource_metadata: challenge.param("resource_metadata").map(str::to_owned),
            scope: challenge
                .param("scope")
                .map(crate::auth::scope::split_scopes)
                .unwrap_or_default(),
            error,
            error_description: challenge.param("error_description").map(str::to_owned),
        }
    }
}

/// Parses the values of every `WWW-Authenticate` header of one response, in order.
pub fn parse_challenges<'a, I>(values: I) -> Result<Vec<Challenge>, ChallengeError>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let mut total = 0usize;
    let mut out = Vec::new();
    for (line, value) in values.into_iter().enumerate() {
        total = total.saturating_add(value.len());
        if total > MAX_CHALLENGE_BYTES {
            return Err(ChallengeError::TooLong {
                limit: MAX_CHALLENGE_BYTES,
            });
        }
        parse_line(value, line, &mut out)?;
    }
    Ok(out)
}

#[cfg(any(test, feature = "unstable-internals"))]
/// The first `Bearer` challenge among the values, read as a [`BearerChallenge`].
pub fn bearer_challenge<'a, I>(values: I) -> Result<Option<BearerChallenge>, ChallengeError>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    Ok(parse_challenges(values)?
        .iter()
        .find(|c| c.is_scheme("bearer"))
        .map(BearerChallenge::from_challenge))
}

fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn skip_ws(&mut self) -> bool {
        let start = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
        self.i > start
    }
    fn token(&mut self) -> &[u8] {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        self.b.get(start..self.i).unwrap_or_default()
    }
    fn at_element_end(&self) -> bool {
        matches!(self.peek(), None | Some(b','))
    }
    fn err(&self, reason: &'static str) -> ChallengeError {
        ChallengeError::Syntax {
            line: self.line,
            at: self.i,
            reason,
        }
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn parse_line(value: &[u8], line: usize, out: &mut Vec<Challenge>) -> Result<(), ChallengeError> {
    let mut c = Cursor {
        b: value,
        i: 0,
        line,
    };
    loop {
        c.skip_ws();
        match c.peek() {
            None => return Ok(()),
            Some(b',') => {
                c.i += 1;
                continue;
            }
            Some(_) => {}
        }
        let element_start = c.i;
        let name = c.token();
        if name.is_empty() {
            return Err(c.err("expected an auth scheme or parameter name"));
        }
        let name = name.to_vec();
        c.skip_ws();
        if c.peek() == Some(b'=') {
            // A further parameter of the last challenge (field lines join into one list).
            c.i = element_start;
            let Some(challenge) = out.last_mut() else {
                return Err(c.err("parameter before any auth scheme"));
            };
            if challenge.token68.is_some() {
                return Err(c.err("parameter after a token68"));
            }
            parse_param(&mut c, challenge)?;
            expect_element_end(&mut c)?;
            continue;
        }
        // A new challenge.
        if out.len() >= MAX_CHALLENGES {
            return Err(ChallengeError::TooManyChallenges {
                limit: MAX_CHALLENGES,
            });
        }
        let mut challenge = Challenge {
            scheme: lossy(&name),
            token68: None,
            params: Vec::new(),
        };
        if c.at_element_end() {
            out.push(challenge);
            continue;
        }
        if c.i == element_start + name.len() {
            return Err(c.err("expected a space after the auth scheme"));
        }
        // token68, or the first parameter.
        let rest = c.i;
        while c.peek().is_some_and(is_token68_char) {
            c.i += 1;
        }
        let run_end = c.i;
        while c.peek() == Some(b'=') {
            c.i += 1;
        }
        let token68_end = c.i;
        let had_run = run_end > rest;
        c.skip_ws();
        if had_run && c.at_element_end() {
            challenge.token68 = Some(lossy(value.get(rest..token68_end).unwrap_or_default()));
            out.push(challenge);
            continue;
        }
        c.i = rest;
        parse_param(&mut c, &mut challenge)?;
        out.push(challenge);
        expect_element_end(&mut c)?;
    }
}

fn expect_element_end(c: &mut Cursor<'_>) -> Result<(), ChallengeError> {
    c.skip_ws();
    if c.at_element_end() {
        Ok(())
    } else {
        Err(c.err("expected `,` or the end after a parameter"))
    }
}

fn parse_param(c: &mut Cursor<'_>, challenge: &mut Challenge) -> Result<(), ChallengeError> {
    let name = c.token();
    if name.is_empty() {
        return Err(c.err("expected a parameter name"));
    }
    let name = lossy(name).to_ascii_lowercase();
    c.skip_ws();
    if c.peek() != Some(b'=') {
        return Err(c.err("expected `=` after a parameter name"));
    }
    c.i += 1;
    c.skip_ws();
    let value = if c.peek() == Some(b'"') {
        c.i += 1;
        let mut v = Vec::new();
        loop {
            match c.peek() {
                None => return Err(c.err("unterminated quoted string")),
                Some(b'"') => {
                    c.i += 1;
                    break;
                }
                Some(b'\\') => {
                    c.i += 1;
                    match c.peek() {
                        Some(b) if b == b'\t' || b >= 0x20 && b != 0x7f => {
                            v.push(b);
                            c.i += 1;
                        }
                        _ => return Err(c.err("invalid escape in a quoted string")),
                    }
                }
                Some(b) if b == b'\t' || b >= 0x20 && b != 0x7f => {
                    v.push(b);
                    c.i += 1;
                }
                Some(_) => return Err(c.err("control character in a quoted string")),
            }
        }
        lossy(&v)
    } else {
        let t = c.token();
        if t.is_empty() {
            return Err(c.err("expected a token or quoted string after `=`"));
        }
        lossy(t)
    };
    if challenge.params.iter().any(|(n, _)| *n == name) {
        return Err(ChallengeError::DuplicateParam { name });
    }
    if challenge.params.len() >= MAX_PARAMS {
        return Err(ChallengeError::TooManyParams { limit: MAX_PARAMS });
    }
    challenge.params.push((name, value));
    Ok(())
}
