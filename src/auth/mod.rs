//! OAuth 2.1 authorization for MCP servers, sans-IO: discovery, registration, the browser step,
//! tokens and refresh, each URL checked before it is fetched.
//!
//! # The flow
//!
//! An [`Authorizer`] runs the authorization the MCP specification describes when a server
//! answers 401 (or 403 `insufficient_scope`):
//!
//! 1. [`Authorizer::handle_challenge`] parses the `WWW-Authenticate` values
//!    ([`parse_challenges`], [`BearerChallenge`]) and fetches the protected-resource metadata (RFC 9728) from its
//!    candidate URLs in order: the challenge's `resource_metadata`, the well-known URL with the
//!    server's path inserted, the root well-known URL. The metadata's `resource` must be the
//!    server's URL exactly (RFC 9728 §3.3; RFC 3986 normalisation of scheme and host case,
//!    default port and empty path only), or, for a document fetched at the root well-known
//!    URL, the server's origin (the identifier that URL is built from); otherwise the
//!    authorization stops before anything is sent to an authorization server.
//! 2. The first of its `authorization_servers` is the issuer; its metadata is fetched from the
//!    RFC 8414 / OpenID candidate URLs in the specification's order (path insertion for issuers
//!    with a path). Its `issuer` must equal the issuer byte for byte (RFC 8414 §3.3), and it must
//!    list `S256` in `code_challenge_methods_supported`.
//! 3. When this server holds tokens from that same issuer with a refresh token (and no refresh
//!    since the server last accepted a token), they are refreshed, with the resource they were
//!    issued for (rotated when a new refresh token comes). Tokens are bound to the server they
//!    were issued for and the grant that obtained them ([`CredentialStore`], keyed by
//!    [`Authorizer::token_key`]): a token of another server is never sent nor refreshed, whatever this
//!    server or its metadata names.
//! 4. Otherwise the client identifies itself: credentials stored for that issuer, else
//!    pre-registered ones pinned to it (or, only with the explicit
//!    [`IssuerPin::AnyIssuerUnsafe`], to any), else its client ID metadata document (where the server sets
//!    `client_id_metadata_document_supported`), else dynamic registration (RFC 7591). Credentials
//!    are keyed by issuer: a new authorization server is registered with anew and never sees
//!    another server's client ID.
//! 5. [`AuthEvent::OpenUserAgent`] gives the authorization URL (PKCE S256, `state`, `scope`
//!    chosen as `select_scopes` and `step_up_scopes` say, `resource` verbatim from the metadata, and the redirect URI of
//!    that authorization server: [`Authorizer::redirect_uri_for`]) and the
//!    [`PendingAuthorization`], which is serialisable. The embedder opens the URL and gives the
//!    redirect's target to [`Authorizer::handle_redirect`] (or, having checked its path against
//!    the pending redirect URI itself, its query to [`Authorizer::handle_callback`]): the path
//!    must be that authorization server's redirect URI (mix-up defence, RFC 9700 §4.4.2: each
//!    server that does not advertise `iss` gets its own), `state` must match, `iss` must be the
//!    issuer when present (and present when advertised, RFC 9207).
//! 6. The code is redeemed at the token endpoint with `client_secret_basic`,
//!    `client_secret_post` or `none`; the answer must be a header-safe `Bearer` token.
//!    [`AuthEvent::Authorized`] follows; [`Authorizer::bearer`] gives the token to send.
//!
//! # Grants without a user agent
//!
//! [`AuthConfig::grant`] chooses the grant; the server never does. Besides the authorization
//! code grant above, [`Grant`] names three grants for clients with no person at a browser. Each
//! runs steps 1 and 2 (discovery, with the same checks; PKCE and the authorization endpoint
//! are not required), then asks for tokens for the resource the metadata names, and never opens
//! a user agent:
//!
//! - [`Grant::ClientCredentials`]: `grant_type=client_credentials`, the client authenticated as
//!   [`ClientAuth`] says: `client_secret_basic`, `client_secret_post`, or `private_key_jwt` (an
//!   RFC 7523 assertion the core builds and the embedder's [`JwtSigner`] signs).
//! - [`Grant::JwtBearer`]: the JWT bearer grant (RFC 7523 §2.1) with a token from the
//!   embedder's [`AssertionSource`] (a workload identity token), sent only to an authorization
//!   server its `aud` names.
//! - [`Grant::EnterpriseManaged`]: token exchange (RFC 8693) of the user's ID token at the
//!   enterprise identity provider for an identity assertion grant for the authorization server
//!   and resource, then the JWT bearer grant with it there.
//!
//! Each of them carries the authorization server its credentials belong to, an [`IssuerPin`]
//! (as does every [`PreRegistered`] client): with [`IssuerPin::Exactly`], a protected resource
//! that names another authorization server gets [`AuthError::IssuerNotAllowed`] before any
//! request to it, the identity assertion grant's `audience` is that server, and a renewal, a
//! refresh or a DPoP nonce resend is checked again, so stored tokens from another issuer are
//! never renewed there. [`IssuerPin::AnyIssuerUnsafe`] is the explicit opt-out.
//!
//! An error answer ends the authorization ([`AuthEvent::Failed`]): it is not retried and no
//! other grant is tried. When the token expires, [`Authorizer::start_refresh`] runs the grant
//! again (with a refresh token, if the server gave one, it refreshes instead). The `jti` of the
//! assertions derives from the random secrets given with the challenge (or
//! [`Authorizer::reseed`]); `iat` is the [`Instant`](crate::Instant) passed in, read as seconds
//! since the Unix epoch.
//!
//! # DPoP
//!
//! With [`AuthConfig::dpop`] set ([`DpopKey`]: a [`JwtSigner`] that gives its public JWK), every
//! token request of any grant carries a DPoP proof (RFC 9449); a `use_dpop_nonce`
//! answer is sent again once with the server's nonce; a token of type `DPoP` stays bound to
//! the key: [`Authorizer::bearer`] does not give it, [`Authorizer::dpop_binding`] gives it as a
//! [`DpopBinding`] for [`Config::dpop`](crate::Config::dpop), with which a connection sends it
//! as `Authorization: DPoP …` with a fresh proof on every request (and
//! [`Authorizer::authorization_headers`] gives those fields for one request).
//!
//! The core stays deterministic: requests come out of [`Authorizer::poll_request`] as
//! [`AuthExchange`]s (the crate's one request type, a [`wire::Request`](crate::wire::Request),
//! with its id, purpose and URL) and answers go in as
//! [`AuthResponse`]s (status, headers, body); the random `state` and PKCE verifier come in as
//! [`AuthSecrets`]; time comes in as [`Instant`](crate::Instant).
//!
//! ```
//! use mcp_sansio::auth::{AuthConfig, AuthEvent, AuthResponse, AuthSecrets, Authorizer, ClientSettings};
//! use mcp_sansio::Instant;
//!
//! let client = ClientSettings::new("my client", "http://127.0.0.1:33418/callback");
//! let mut az = Authorizer::new(AuthConfig::new("https://mcp.example/mcp", client))?;
//! // The MCP server answered 401; the adapter draws 64 random bytes for state and verifier.
//! let challenge = br#"Bearer resource_metadata="https://mcp.example/prm.json", scope="read""#;
//! az.handle_challenge(Instant::ZERO, 401, &[challenge], AuthSecrets::from_random_bytes(&[42; 64]))?;
//! let req = az.poll_request().expect("the resource metadata request");
//! assert_eq!(req.url, "https://mcp.example/prm.json");
//! assert_eq!(req.request.path, "/prm.json");
//! assert_eq!(req.request.method, mcp_sansio::wire::Method::Get);
//! // The adapter dials it through its guard, without following redirects, and answers:
//! az.handle_response(Instant::ZERO, req.id, AuthResponse::new(302, ""));
//! match az.poll_event() {
//!     Some(AuthEvent::Failed(e)) => assert!(e.to_string().contains("redirect")),
//!     other => panic!("{other:?}"),
//! }
//! # Ok::<(), mcp_sansio::auth::AuthError>(())
//! ```
//!
//! # Sessions that authorize
//!
//! What a session does when its MCP server refuses is decided here too, so that every
//! runtime's adapter only carries it out: [`AuthRetry::after_failure`] says, for a failed try
//! of an operation ([`Attempt`]), whether to authorize, connect again and retry once
//! ([`AfterRefusal::AuthorizeThenRetry`], for a 401 or a 403 `insufficient_scope` on the first
//! try: [`calls_for_authorization`]) or to return the error as it is ([`AfterRefusal::Return`],
//! for anything else and for every error after authorizing); [`AuthRetry::open_user_agent`]
//! says whether an authorization may open the user agent ([`UserAgent`]): at most
//! [`MAX_STEP_UPS`] times after the session connected.
//!
//! # Bounds and refusals
//!
//! - Every URL fetched (metadata, registration, token endpoints) and the authorization endpoint
//!   pass the strict [`Endpoint`](crate::endpoint::Endpoint) parser (no userinfo) and the
//!   [`UrlPolicy`]: `https`, or `http` to a loopback host only when allowed.
//! - A redirect answer to any discovery, registration or token request is an error; it is never
//!   followed.
//! - Metadata, registration and token bodies: at most [`MAX_BODY_BYTES`] (64 KiB).
//! - Per authorization: at most [`AuthLimits::max_exchanges`] requests and a deadline of
//!   [`AuthLimits::time`] for the network part; [`AuthLimits::callback_time`] for the user
//!   agent; at most [`AuthLimits::max_attempts`] user-agent round trips until the MCP server
//!   accepts a token ([`Authorizer::accepted`]); at most [`MAX_STEP_UPS`] user-agent openings
//!   after a session connected ([`AuthRetry`]). At most 3 candidate URLs for each metadata
//!   document; the `WWW-Authenticate` values, queries, scopes and client values are bounded too
//!   ([`MAX_CHALLENGE_BYTES`], [`form::MAX_QUERY_BYTES`], [`MAX_SCOPES`]).
//! - No request carries the MCP bearer token; token endpoints see only client authentication.
//! - Tokens are header-safe (visible ASCII); secrets never appear in errors or `Debug` output.

//!
//! # Layout
//!
//! Every public item is exported once, here, except two layers that stand on their own and are
//! used by adapters and transcripts as such: [`form`] (`application/x-www-form-urlencoded`,
//! bounded) and [`redact`] (which values are secrets, and how they are hidden in what is
//! recorded or shown). The parsers, decoders, request builders, scope rules, JWT and DPoP
//! proof builders that the [`Authorizer`] runs are not public API.

// The submodules are crate-visible so that `internals` (the `unstable-internals` feature) can
// reach the helpers that are not public API: the parsers, decoders and request builders the
// flow runs, which this repository's tests and fuzz targets exercise one by one.
pub(crate) mod challenge;
pub(crate) mod client;
pub(crate) mod dpop;
mod error;
pub(crate) mod flow;
pub mod form;
pub(crate) mod grant;
pub(crate) mod jwt;
pub(crate) mod metadata;
pub mod redact;
pub(crate) mod scope;
pub(crate) mod token;
mod wire;

pub use challenge::{
    parse_challenges, BearerChallenge, BearerErrorCode, Challenge, ChallengeError,
    MAX_CHALLENGE_BYTES,
};
pub use client::{
    ApplicationType, ClientCredentials, ClientSettings, IssuerPin, PreRegistered, TokenAuthMethod,
};
pub use dpop::DpopBinding;
pub use error::{AuthBudget, AuthError, Purpose};
pub use flow::{
    calls_for_authorization, AfterRefusal, Attempt, AuthConfig, AuthEvent, AuthLimits, AuthRetry,
    Authorizer, CredentialStore, DpopKey, IssuerCredentials, ResourceCredentials, UserAgent,
    MAX_STEP_UPS,
};
pub use grant::{AssertionSource, ClientAuth, Grant, IdentityProvider};
pub use jwt::{JwsAlgorithm, JwtSigner, SignError};
pub use metadata::{check_issuer, ResourceMetadata, ServerMetadata, UrlPolicy, MAX_BODY_BYTES};
pub use scope::MAX_SCOPES;
pub use token::{AuthSecrets, PendingAuthorization, TokenSet};
pub use wire::{AuthExchange, AuthRequestId, AuthResponse};
