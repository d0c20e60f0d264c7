//! The authorization errors, each mapped to one of the core's three [`ErrorKind`]s.
use crate::prelude::*;

use crate::auth::challenge::ChallengeError;
use crate::auth::form::QueryError;
use crate::endpoint::EndpointError;
use crate::error::{ErrorKind, TransportError};

/// Which bound of an authorization was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthBudget {
    /// HTTP exchanges of one authorization (discovery, registration, token).
    Exchanges,
    /// Bytes of one metadata, registration or token response body.
    BodyBytes,
    /// The deadline of the network part of one authorization, in milliseconds.
    Time,
    /// The wait for the user agent's callback, in milliseconds.
    CallbackTime,
    /// Authorization attempts (user-agent round trips) before a request is accepted.
    Attempts,
}

impl AuthBudget {
    /// A stable, snake_case name for logs and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            AuthBudget::Exchanges => "auth_exchanges",
            AuthBudget::BodyBytes => "auth_body_bytes",
            AuthBudget::Time => "auth_time_ms",
            AuthBudget::CallbackTime => "auth_callback_time_ms",
            AuthBudget::Attempts => "auth_attempts",
        }
    }
}

impl core::fmt::Display for AuthBudget {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an authorization step was doing when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Purpose {
    /// Fetching protected-resource metadata (RFC 9728).
    ResourceMetadata,
    /// Fetching authorization-server metadata (RFC 8414 / OpenID discovery).
    ServerMetadata,
    /// Dynamic client registration (RFC 7591).
    Registration,
    /// Exchanging an authorization code for tokens.
    Token,
    /// Refreshing tokens.
    Refresh,
    /// Exchanging a token at the enterprise identity provider (RFC 8693) for an identity
    /// assertion grant.
    TokenExchange,
}

impl core::fmt::Display for Purpose {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Purpose::ResourceMetadata => "protected-resource metadata",
            Purpose::ServerMetadata => "authorization-server metadata",
            Purpose::Registration => "client registration",
            Purpose::Token => "token request",
            Purpose::Refresh => "token refresh",
            Purpose::TokenExchange => "token exchange at the identity provider",
        })
    }
}

/// Why authorization failed. Secrets (tokens, codes, client secrets, verifiers) never appear in
/// these errors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The `WWW-Authenticate` values are malformed.
    #[error("WWW-Authenticate: {0}")]
    Challenge(#[from] ChallengeError),
    /// A URL was refused by the endpoint parser.
    #[error("{what}: {source}")]
    Url {
        /// Which URL.
        what: &'static str,
        /// Why.
        source: EndpointError,
    },
    /// A URL is plain `http` where `https` is required (plain `http` is allowed only to a
    /// loopback host, and only when the configuration allows it).
    #[error("{what} must be https: {url:?}")]
    InsecureUrl {
        /// Which URL.
        what: &'static str,
        /// The URL (truncated).
        url: String,
    },
    /// A URL has a part it must not have (a query or fragment in an issuer, …).
    #[error("{what} is not usable: {reason}")]
    UrlNotAllowed {
        /// Which URL.
        what: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// A discovery, registration or token request was answered with a redirect.
    #[error("{purpose}: HTTP {status} redirect; redirects are never followed")]
    Redirect {
        /// The request.
        purpose: Purpose,
        /// The 3xx status.
        status: u16,
    },
    /// A request was answered with a status that is not a usable answer.
    #[error("{purpose}: unexpected HTTP status {status}")]
    HttpStatus {
        /// The request.
        purpose: Purpose,
        /// The status.
        status: u16,
    },
    /// A bound was reached.
    #[error("authorization budget exceeded: {budget} (limit {limit})")]
    Budget {
        /// Which bound.
        budget: AuthBudget,
        /// Its limit.
        limit: u64,
    },
    /// None of the candidate metadata URLs gave a document.
    #[error("{purpose}: no candidate URL answered with a document (last status {last_status:?})")]
    NotFound {
        /// What was looked for.
        purpose: Purpose,
        /// The status of the last candidate, if any answered.
        last_status: Option<u16>,
    },
    /// A metadata, registration or token document is malformed or lacks a required field.
    #[error("{purpose}: unusable document: {reason}")]
    Document {
        /// Which document.
        purpose: Purpose,
        /// What is wrong (no secret is quoted).
        reason: String,
    },
    /// The protected resource's `resource` does not designate the server being accessed.
    #[error("protected-resource metadata names resource {resource:?}, not the server {server:?}")]
    ResourceMismatch {
        /// The metadata's `resource` (truncated).
        resource: String,
        /// The server URL.
        server: String,
    },
    /// The authorization server's metadata names another issuer (RFC 8414 §3.3).
    #[error("authorization-server metadata names issuer {got:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata URL was built from.
        expected: String,
        /// The metadata's `issuer` (truncated).
        got: String,
    },
    /// The authorization server does not list `S256` in `code_challenge_methods_supported`.
    #[error("the authorization server does not support PKCE S256")]
    PkceUnsupported,
    /// The protected resource names no authorization server.
    #[error("the protected resource names no authorization server")]
    NoAuthorizationServer,
    /// The client cannot identify itself to this authorization server: not pre-registered, no
    /// client ID metadata document support, no registration endpoint.
    #[error("no way to register with the authorization server {issuer:?}")]
    NoRegistration {
        /// The issuer.
        issuer: String,
    },
    /// None of `client_secret_basic`, `client_secret_post`, `none` is usable with this server.
    #[error("no supported token endpoint authentication method")]
    UnsupportedAuthMethod,
    /// The authorization response's `state` is not the one sent.
    #[error("authorization response: state does not match")]
    StateMismatch,
    /// The authorization response came back to a redirect URI that is not the one of the
    /// authorization server the request was sent to (mix-up defence, RFC 9700 §4.4.2).
    #[error(
        "authorization response: it came back to the redirect URI of another authorization server"
    )]
    RedirectMismatch,
    /// The authorization response's `iss` is absent where required or names another issuer
    /// (RFC 9207).
    #[error("authorization response: {reason}")]
    IssuerParameter {
        /// What is wrong.
        reason: &'static str,
    },
    /// The authorization response carries an OAuth error (the user or server denied it).
    #[error("authorization denied: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The `error` code (truncated).
        error: String,
        /// The `error_description` (truncated).
        description: Option<String>,
    },
    /// The authorization response is malformed (no code, a bad query).
    #[error("authorization response: {reason}")]
    Callback {
        /// What is wrong.
        reason: String,
    },
    /// The token endpoint answered with an OAuth error.
    #[error("{purpose}: HTTP {status}: {error}")]
    TokenError {
        /// Token or refresh.
        purpose: Purpose,
        /// The status.
        status: u16,
        /// The `error` code (truncated).
        error: String,
    },
    /// The token type is not `Bearer`.
    #[error("token type {token_type:?} is not Bearer")]
    NotBearer {
        /// The token type received (truncated).
        token_type: String,
    },
    /// A token contains a byte not allowed in an HTTP header (CR, LF, control, space, non-ASCII).
    #[error("the {what} contains a character not allowed in an HTTP header")]
    UnsafeToken {
        /// Which token.
        what: &'static str,
    },
    /// The server's answer (a plain 403, a non-Bearer challenge) does not call for authorization.
    #[error("HTTP {status} does not call for authorization: {reason}")]
    NotAuthorizable {
        /// The MCP server's status.
        status: u16,
        /// Why.
        reason: &'static str,
    },
    /// The adapter reported a transport failure.
    #[error("{purpose}: transport: {source}")]
    Transport {
        /// The request.
        purpose: Purpose,
        /// What failed.
        source: TransportError,
    },
    /// The MCP server answered `use_dpop_nonce` again to a request sent once more with the
    /// nonce it had given (RFC 9449 §9): one retry per request, so the request fails.
    #[error("the server asked for a new DPoP nonce again after one retry with its nonce")]
    DpopNonceRepeated,
    /// A JWT the grant needs could not be made or obtained: the signer failed, or the
    /// embedder's token source did (the text never holds a key or a token).
    #[error("authorization assertion: {reason}")]
    Assertion {
        /// Why.
        reason: String,
    },
    /// The token the embedder supplied for the JWT bearer grant is not meant for the
    /// authorization server the protected resource names (its `aud` names neither that issuer
    /// nor its token endpoint): it is not sent there.
    #[error("the assertion's audience does not name the authorization server {issuer:?}; it was not sent")]
    AudienceMismatch {
        /// The authorization server the resource named.
        issuer: String,
    },
    /// The protected resource names an authorization server other than the one the grant's
    /// credentials are pinned to ([`IssuerPin`](crate::auth::IssuerPin)): nothing is sent to it.
    #[error("the protected resource names the authorization server {issuer:?}, not the one the credentials are for; nothing was sent to it")]
    IssuerNotAllowed {
        /// The issuer the resource named (truncated).
        issuer: String,
    },
    /// The configured client assertion algorithm is not among those the authorization server
    /// lists in `token_endpoint_auth_signing_alg_values_supported`.
    #[error("the authorization server does not accept {alg} client assertions")]
    AlgorithmUnsupported {
        /// The algorithm.
        alg: &'static str,
    },
    /// A configuration value is refused.
    #[error("invalid authorization configuration: {what}")]
    Config {
        /// What is invalid.
        what: &'static str,
    },
    /// The caller used the authorizer out of order.
    #[error("authorization misuse: {reason}")]
    Misuse {
        /// Why.
        reason: &'static str,
    },
}

impl AuthError {
    /// The kind: a transport, bound, redirect or URL refusal is a connection failure; an answer
    /// that cannot be decoded is a server answer; every other refusal is an authentication
    /// failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AuthError::Challenge(_)
            | AuthError::Url { .. }
            | AuthError::InsecureUrl { .. }
            | AuthError::UrlNotAllowed { .. }
            | AuthError::Redirect { .. }
            | AuthError::HttpStatus { .. }
            | AuthError::Budget { .. }
            | AuthError::NotFound { .. }
            | AuthError::Transport { .. }
            | AuthError::Config { .. }
            | AuthError::Misuse { .. } => ErrorKind::ConnectionFailed,
            AuthError::Document { .. }
            | AuthError::NotBearer { .. }
            | AuthError::UnsafeToken { .. } => ErrorKind::ServerAnswered,
            _ => ErrorKind::AuthenticationFailed,
        }
    }

    pub(crate) fn url(what: &'static str) -> impl FnOnce(EndpointError) -> AuthError {
        move |source| AuthError::Url { what, source }
    }

    pub(crate) fn callback(e: QueryError) -> AuthError {
        AuthError::Callback {
            reason: e.to_string(),
        }
    }
}
