//! PKCE (RFC 7636, S256 only), the authorization request URL, the authorization response
//! (callback) checks with RFC 9207 `iss`, and the token endpoint's requests and answers.
use crate::prelude::*;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::auth::client::{ClientCredentials, TokenAuthMethod};
use crate::auth::error::{AuthError, Purpose};
use crate::auth::form::{encode, encode_pairs, parse_query};
use crate::auth::metadata::document;
use crate::auth::scope::{join_scopes, split_scopes};
use crate::error::truncated;

/// The longest access or refresh token accepted.
pub const MAX_TOKEN_LEN: usize = 16 * 1024;
/// The longest authorization code accepted.
pub const MAX_CODE_LEN: usize = 4096;

const B64URL: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The S256 code challenge of `verifier`: `BASE64URL(SHA256(ASCII(verifier)))` (RFC 7636 §4.2).
pub fn pkce_challenge(verifier: &str) -> String {
    B64URL.encode(Sha256::digest(verifier.as_bytes()))
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// The random values of one authorization: the `state` and the PKCE code verifier. The core
/// draws no random number; the adapter supplies these. `Debug` hides them.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthSecrets {
    state: String,
    verifier: String,
}

impl core::fmt::Debug for AuthSecrets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("AuthSecrets(<redacted>)")
    }
}

impl AuthSecrets {
    /// Checks and wraps a state (1 to 256 unreserved characters) and a verifier (43 to 128
    /// unreserved characters, RFC 7636 §4.1).
    pub fn new(state: impl Into<String>, verifier: impl Into<String>) -> Result<Self, AuthError> {
        let (state, verifier) = (state.into(), verifier.into());
        if state.is_empty() || state.len() > 256 || !state.bytes().all(is_unreserved) {
            return Err(AuthError::Config {
                what: "state must be 1 to 256 unreserved characters",
            });
        }
        if !(43..=128).contains(&verifier.len()) || !verifier.bytes().all(is_unreserved) {
            return Err(AuthError::Config {
                what: "the PKCE verifier must be 43 to 128 unreserved characters",
            });
        }
        Ok(AuthSecrets { state, verifier })
    }

    /// Secrets made from 64 random bytes supplied by the caller (from a CSPRNG): the first 32
    /// give the state, the last 32 the verifier, each base64url-encoded (43 characters).
    pub fn from_random_bytes(bytes: &[u8; 64]) -> Self {
        let (a, b) = bytes.split_at(32);
        AuthSecrets {
            state: B64URL.encode(a),
            verifier: B64URL.encode(b),
        }
    }

    /// The `state` value.
    pub fn state(&self) -> &str {
        &self.state
    }

    /// The PKCE code verifier.
    pub fn verifier(&self) -> &str {
        &self.verifier
    }
}

/// An authorization waiting for the user agent to come back: everything needed to check the
/// callback and redeem the code. Serialisable so an embedder can persist it across the round
/// trip; it holds secrets (verifier, client secret), so store it as such. `Debug` hides them.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAuthorization {
    /// The authorization server's issuer (checked against the callback's `iss`).
    pub issuer: String,
    /// Whether the server advertised `authorization_response_iss_parameter_supported`.
    pub iss_parameter_supported: bool,
    /// The token endpoint.
    pub token_endpoint: String,
    /// The client's credentials with that server.
    pub client: ClientCredentials,
    /// The redirect URI sent.
    pub redirect_uri: String,
    /// The resource indicator sent (RFC 8707), verbatim from the protected-resource metadata.
    pub resource: Option<String>,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// The state and PKCE verifier.
    pub secrets: AuthSecrets,
    /// The URL the user agent was sent to.
    pub authorization_url: String,
}

impl core::fmt::Debug for PendingAuthorization {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PendingAuthorization")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client", &self.client)
            .field("resource", &self.resource)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// The authorization request URL (OAuth 2.1 §4.1.1): the endpoint with `response_type=code`,
/// `client_id`, `redirect_uri`, the S256 `code_challenge`, `state`, `scope` (when any) and
/// `resource` (when known, verbatim) added to its query.
pub fn authorization_url(
    authorization_endpoint: &str,
    client_id: &str,
    redirect_uri: &str,
    secrets: &AuthSecrets,
    scopes: &[String],
    resource: Option<&str>,
) -> String {
    let challenge = pkce_challenge(secrets.verifier());
    let scope = join_scopes(scopes);
    let mut pairs = vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect_uri),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", secrets.state()),
    ];
    if !scope.is_empty() {
        pairs.push(("scope", scope.as_str()));
    }
    if let Some(r) = resource {
        pairs.push(("resource", r));
    }
    let sep = if authorization_endpoint.contains('?') {
        '&'
    } else {
        '?'
    };
    format!("{authorization_endpoint}{sep}{}", encode_pairs(pairs))
}

/// Checks an authorization response (the redirect's query) against the pending authorization
/// and gives the code. In order: `state` must be the one sent; `iss`, when present, must be the
/// issuer byte for byte, and must be present when the server advertised it (RFC 9207 §2.4); an
/// `error` is reported; a `code` must be there.
pub fn parse_callback(pending: &PendingAuthorization, query: &str) -> Result<String, AuthError> {
    let params = parse_query(query).map_err(AuthError::callback)?;
    let get = |n: &str| params.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    if get("state") != Some(pending.secrets.state()) {
        return Err(AuthError::StateMismatch);
    }
    match get("iss") {
        Some(iss) if iss != pending.issuer => {
            return Err(AuthError::IssuerParameter {
                reason: "iss names another issuer",
            })
        }
        None if pending.iss_parameter_supported => {
            return Err(AuthError::IssuerParameter {
                reason: "iss is missing but the server advertises it",
            })
        }
        _ => {}
    }
    if let Some(error) = get("error") {
        return Err(AuthError::Denied {
            error: truncated(error, 128),
            description: get("error_description").map(|d| truncated(d, 256)),
        });
    }
    match get("code") {
        Some(code) if !code.is_empty() && code.len() <= MAX_CODE_LEN => Ok(code.to_owned()),
        _ => Err(AuthError::Callback {
            reason: "no usable code".into(),
        }),
    }
}

/// Headers and body of a token endpoint request with the client authenticated as its method
/// says: `grant` holds the grant's own parameters.
pub fn token_request(
    client: &ClientCredentials,
    grant: &[(&str, &str)],
) -> (Vec<(String, String)>, Vec<u8>) {
    let mut headers = vec![
        (
            "Content-Type".to_owned(),
            "application/x-www-form-urlencoded".to_owned(),
        ),
        ("Accept".to_owned(), "application/json".to_owned()),
    ];
    let mut pairs: Vec<(&str, &str)> = grant.to_vec();
    let secret = client.client_secret.as_deref().unwrap_or("");
    match client.auth_method {
        TokenAuthMethod::ClientSecretBasic => {
            let user_pass = format!("{}:{}", encode(&client.client_id), encode(secret));
            headers.push((
                "Authorization".to_owned(),
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(user_pass)
                ),
            ));
        }
        TokenAuthMethod::ClientSecretPost => {
            pairs.push(("client_id", &client.client_id));
            pairs.push(("client_secret", secret));
        }
        TokenAuthMethod::None => pairs.push(("client_id", &client.client_id)),
    }
    (headers, encode_pairs(pairs).into_bytes())
}

/// Tokens from a token endpoint. `Debug` hides the tokens.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSet {
    /// The access token (header-safe: visible ASCII only).
    pub access_token: String,
    /// The refresh token, if any (rotated on refresh when the server sends a new one).
    pub refresh_token: Option<String>,
    /// When the access token expires, in milliseconds on the caller's timeline.
    pub expires_at_ms: Option<u64>,
    /// The granted scopes (the response's `scope`, else the scopes asked for).
    pub scopes: Vec<String>,
    /// The access token is bound to the client's DPoP key (`token_type` `DPoP`, RFC 9449): it
    /// is sent only with the `DPoP` scheme and a proof, never as a Bearer token.
    #[serde(default)]
    pub dpop: bool,
}

impl core::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at_ms", &self.expires_at_ms)
            .field("scopes", &self.scopes)
            .field("dpop", &self.dpop)
            .finish()
    }
}

#[derive(Deserialize)]
struct RawToken {
    access_token: Option<String>,
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<serde_json::Number>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct RawTokenError {
    error: Option<String>,
}

/// Whether `t` can go in an `Authorization` header: 1 to `MAX_TOKEN_LEN` visible ASCII
/// characters (no space, CR, LF, control or non-ASCII byte).
pub fn is_header_safe(t: &str) -> bool {
    !t.is_empty() && t.len() <= MAX_TOKEN_LEN && t.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

#[cfg(any(test, feature = "unstable-internals"))]
/// Decodes a token endpoint answer. A 2xx must carry a header-safe `access_token` of type
/// `Bearer`; without a new `refresh_token`, `previous_refresh` is kept (rotation when there is
/// one). A 400 or 401 with an OAuth `error` is [`AuthError::TokenError`]; anything else is
/// [`AuthError::HttpStatus`]. Redirects are refused by the caller before this.
pub fn decode_token_response(
    purpose: Purpose,
    status: u16,
    body: &[u8],
    requested_scopes: &[String],
    previous_refresh: Option<&str>,
    now_ms: u64,
) -> Result<TokenSet, AuthError> {
    decode_token_response_for(
        purpose,
        status,
        body,
        requested_scopes,
        previous_refresh,
        now_ms,
        false,
    )
}

/// As `decode_token_response`; with `dpop` (the client sent a DPoP proof) a `token_type` of
/// `DPoP` is accepted too, and the tokens are marked [`TokenSet::dpop`].
pub fn decode_token_response_for(
    purpose: Purpose,
    status: u16,
    body: &[u8],
    requested_scopes: &[String],
    previous_refresh: Option<&str>,
    now_ms: u64,
    dpop: bool,
) -> Result<TokenSet, AuthError> {
    if !(200..300).contains(&status) {
        if matches!(status, 400 | 401) {
            if let Ok(RawTokenError { error: Some(error) }) = document(purpose, body) {
                return Err(AuthError::TokenError {
                    purpose,
                    status,
                    error: truncated(&error, 128),
                });
            }
        }
        return Err(AuthError::HttpStatus { purpose, status });
    }
    let raw: RawToken = document(purpose, body)?;
    let access_token = raw.access_token.ok_or_else(|| AuthError::Document {
        purpose,
        reason: "`access_token` is missing".into(),
    })?;
    let token_type = raw.token_type.unwrap_or_default();
    let bound = dpop && token_type.eq_ignore_ascii_case("dpop");
    if !bound && !token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::NotBearer {
            token_type: truncated(&token_type, 64),
        });
    }
    if !is_header_safe(&access_token) {
        return Err(AuthError::UnsafeToken {
            what: "access token",
        });
    }
    let refresh_token = match raw.refresh_token {
        Some(r) if is_header_safe(&r) => Some(r),
        Some(_) => {
            return Err(AuthError::UnsafeToken {
                what: "refresh token",
            })
        }
        None => previous_refresh.map(str::to_owned),
    };
    let expires_at_ms = raw
        .expires_in
        .and_then(|n| n.as_u64())
        .map(|s| now_ms.saturating_add(s.saturating_mul(1000)));
    let scopes = match raw.scope {
        Some(s) => split_scopes(&s),
        None => requested_scopes.to_vec(),
    };
    Ok(TokenSet {
        access_token,
        refresh_token,
        expires_at_ms,
        scopes,
        dpop: bound,
    })
}
