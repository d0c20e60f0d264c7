//! Discovery: protected-resource metadata (RFC 9728) and authorization-server metadata
//! (RFC 8414, OpenID Connect Discovery), with the URL policy every fetched URL passes.
use crate::prelude::*;

use core::net::{Ipv4Addr, Ipv6Addr};
use core::str::FromStr;

use serde::Deserialize;

use crate::auth::error::{AuthError, Purpose};
use crate::auth::scope::clean_scopes;
use crate::endpoint::{Endpoint, Scheme};
use crate::error::truncated;

/// The largest metadata, registration or token body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The most authorization servers read from protected-resource metadata.
pub const MAX_AUTHORIZATION_SERVERS: usize = 8;

/// Which URLs the core lets an adapter fetch: every URL passes [`Endpoint::parse`] (no
/// userinfo, strict host and path), must be `https`, or plain `http` to a loopback host when
/// [`UrlPolicy::allow_loopback_http`] is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UrlPolicy {
    /// Allow plain `http` to `localhost`, `127.0.0.0/8` and `::1` (development, conformance).
    pub allow_loopback_http: bool,
}

impl UrlPolicy {
    /// Parses `url` and applies the policy; `what` names the URL in errors.
    pub fn check(&self, what: &'static str, url: &str) -> Result<Endpoint, AuthError> {
        let e = Endpoint::parse(url).map_err(AuthError::url(what))?;
        if url.contains('#') {
            return Err(AuthError::UrlNotAllowed {
                what,
                reason: "it has a fragment",
            });
        }
        match e.scheme() {
            Scheme::Https => Ok(e),
            Scheme::Http if self.allow_loopback_http && is_loopback(&e) => Ok(e),
            Scheme::Http => Err(AuthError::InsecureUrl {
                what,
                url: truncated(url, 256),
            }),
        }
    }
}

/// Whether the host is `localhost` (any case, a trailing dot allowed), in `127.0.0.0/8`, or
/// `::1`.
pub fn is_loopback(e: &Endpoint) -> bool {
    let host = e.host();
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Ok(v4) = Ipv4Addr::from_str(host) {
        return v4.is_loopback();
    }
    Ipv6Addr::from_str(host).is_ok_and(|v6| v6.is_loopback())
}

/// The path of a request target without its query, and without a trailing `/` (empty for the
/// root).
fn path_of(target: &str) -> &str {
    let path = target.split('?').next().unwrap_or("");
    path.strip_suffix('/').unwrap_or(path)
}

/// The candidate URLs of the protected-resource metadata, in the order they are tried:
/// the challenge's `resource_metadata` (when given), then the well-known URL with the server's
/// path inserted (when it has one), then the root well-known URL (RFC 9728 §3.1, MCP
/// "Protected Resource Metadata Discovery").
pub fn resource_metadata_candidates(
    server: &Endpoint,
    resource_metadata: Option<&str>,
) -> Vec<String> {
    let mut out: Vec<String> = resource_metadata.map(str::to_owned).into_iter().collect();
    let origin = server.origin();
    let path = path_of(server.target());
    let mut well_known = Vec::with_capacity(2);
    if !path.is_empty() {
        well_known.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    well_known.push(format!("{origin}/.well-known/oauth-protected-resource"));
    for url in well_known {
        if !out.contains(&url) {
            out.push(url);
        }
    }
    out
}

/// The candidate URLs of an authorization server's metadata, in the MCP order: for an issuer
/// with a path, OAuth with path insertion, OpenID with path insertion, OpenID with the path
/// appended; for an issuer without, OAuth then OpenID.
pub fn server_metadata_candidates(issuer: &Endpoint) -> Vec<String> {
    let origin = issuer.origin();
    let path = path_of(issuer.target());
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether the resource identifier `resource` is the server at `server`: the same URL after
/// RFC 3986 normalisation of scheme and host case, the default port and an empty path (`/`),
/// path and query otherwise compared exactly (RFC 9728 §3.3). A prefix of the server's path
/// (`https://h/` for `https://h/mcp`) is not the server; nor is a URL with a fragment.
pub fn resource_matches(resource: &str, server: &Endpoint) -> bool {
    let Ok(r) = Endpoint::parse(resource) else {
        return false;
    };
    !resource.contains('#')
        && crate::auth::flow::resource_key(&r) == crate::auth::flow::resource_key(server)
}

/// Whether protected-resource metadata naming `resource` designates `server`:
/// `resource_matches`, or, for a document fetched at the root well-known URL
/// (`at_root_well_known`), the server's origin alone (`https://h` or `https://h/`), which is the
/// identifier that URL is built from (RFC 9728 §3.1, §3.3).
pub fn resource_designates(resource: &str, server: &Endpoint, at_root_well_known: bool) -> bool {
    if resource_matches(resource, server) {
        return true;
    }
    let Ok(r) = Endpoint::parse(resource) else {
        return false;
    };
    at_root_well_known
        && !resource.contains('#')
        && r.target() == "/"
        && r.origin() == server.origin()
}

#[derive(Deserialize)]
struct RawResourceMetadata {
    resource: Option<String>,
    #[serde(default)]
    authorization_servers: Option<Vec<String>>,
    #[serde(default)]
    scopes_supported: Option<Vec<String>>,
}

/// Protected-resource metadata, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// `resource`, exactly as the document gives it (sent verbatim as the RFC 8707 indicator).
    pub resource: String,
    /// `authorization_servers`, each checked by the [`UrlPolicy`].
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`, scope tokens only.
    pub scopes_supported: Option<Vec<String>>,
}

pub(crate) fn document<T: for<'de> Deserialize<'de>>(
    purpose: Purpose,
    body: &[u8],
) -> Result<T, AuthError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(AuthError::Budget {
            budget: crate::auth::error::AuthBudget::BodyBytes,
            limit: MAX_BODY_BYTES as u64,
        });
    }
    serde_json::from_slice(body).map_err(|e| AuthError::Document {
        purpose,
        reason: truncated(&e.to_string(), 200),
    })
}

fn missing(purpose: Purpose, field: &str) -> AuthError {
    AuthError::Document {
        purpose,
        reason: format!("`{field}` is missing"),
    }
}

/// Decodes protected-resource metadata and checks it: `resource` present and designating
/// `server` (`resource_designates`; `at_root_well_known` when the document was fetched at the
/// root well-known URL), at least one authorization server, every one a URL the policy allows,
/// at most `MAX_AUTHORIZATION_SERVERS`.
pub fn decode_resource_metadata(
    body: &[u8],
    server: &Endpoint,
    server_url: &str,
    policy: UrlPolicy,
    at_root_well_known: bool,
) -> Result<ResourceMetadata, AuthError> {
    let purpose = Purpose::ResourceMetadata;
    let raw: RawResourceMetadata = document(purpose, body)?;
    let resource = raw.resource.ok_or_else(|| missing(purpose, "resource"))?;
    if !resource_designates(&resource, server, at_root_well_known) {
        return Err(AuthError::ResourceMismatch {
            resource: truncated(&resource, 256),
            server: server_url.to_owned(),
        });
    }
    let servers = raw.authorization_servers.unwrap_or_default();
    if servers.is_empty() {
        return Err(AuthError::NoAuthorizationServer);
    }
    if servers.len() > MAX_AUTHORIZATION_SERVERS {
        return Err(AuthError::Document {
            purpose,
            reason: format!("more than {MAX_AUTHORIZATION_SERVERS} authorization servers"),
        });
    }
    for s in &servers {
        check_issuer(policy, s)?;
    }
    Ok(ResourceMetadata {
        resource,
        authorization_servers: servers,
        scopes_supported: raw.scopes_supported.as_deref().map(clean_scopes),
    })
}

/// Checks an issuer identifier: a URL the policy allows, without query or fragment
/// (RFC 8414 §2).
pub fn check_issuer(policy: UrlPolicy, issuer: &str) -> Result<Endpoint, AuthError> {
    let what = "authorization server";
    let e = policy.check(what, issuer)?;
    if issuer.contains('?') {
        return Err(AuthError::UrlNotAllowed {
            what,
            reason: "an issuer has no query",
        });
    }
    Ok(e)
}

#[derive(Deserialize)]
struct RawServerMetadata {
    issuer: Option<String>,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
    #[serde(default)]
    registration_endpoint: Option<String>,
    #[serde(default)]
    scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    authorization_response_iss_parameter_supported: Option<bool>,
    #[serde(default)]
    token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
}

/// Authorization-server metadata, checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerMetadata {
    /// `issuer`, identical to the issuer the metadata URL was built from.
    pub issuer: String,
    /// `authorization_endpoint` (opened by the user agent).
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `registration_endpoint`, if dynamic registration is offered.
    pub registration_endpoint: Option<String>,
    /// `scopes_supported`, scope tokens only.
    pub scopes_supported: Option<Vec<String>>,
    /// `token_endpoint_auth_methods_supported` (absent means `client_secret_basic`, RFC 8414).
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// `client_id_metadata_document_supported`.
    pub client_id_metadata_document_supported: bool,
    /// `authorization_response_iss_parameter_supported` (RFC 9207).
    pub iss_parameter_supported: bool,
    /// `token_endpoint_auth_signing_alg_values_supported`: the algorithms of client assertions
    /// the token endpoint accepts, if listed.
    #[serde(default)]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
}

#[cfg(any(test, feature = "unstable-internals"))]
/// Decodes authorization-server metadata and checks it: `issuer` identical (byte for byte) to
/// `expected_issuer` (RFC 8414 §3.3), `S256` in `code_challenge_methods_supported`, every
/// endpoint a URL the policy allows.
pub fn decode_server_metadata(
    body: &[u8],
    expected_issuer: &str,
    policy: UrlPolicy,
) -> Result<ServerMetadata, AuthError> {
    decode_server_metadata_for(body, expected_issuer, policy, true)
}

/// As `decode_server_metadata`; with `user_agent` false (a grant without a user agent:
/// client credentials, JWT bearer) the authorization endpoint and PKCE support are not
/// required (an absent `authorization_endpoint` is left empty and never used).
pub fn decode_server_metadata_for(
    body: &[u8],
    expected_issuer: &str,
    policy: UrlPolicy,
    user_agent: bool,
) -> Result<ServerMetadata, AuthError> {
    let purpose = Purpose::ServerMetadata;
    let raw: RawServerMetadata = document(purpose, body)?;
    let issuer = raw.issuer.ok_or_else(|| missing(purpose, "issuer"))?;
    if issuer != expected_issuer {
        return Err(AuthError::IssuerMismatch {
            expected: expected_issuer.to_owned(),
            got: truncated(&issuer, 256),
        });
    }
    if user_agent
        && !raw
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
    {
        return Err(AuthError::PkceUnsupported);
    }
    let authorization_endpoint = match raw.authorization_endpoint {
        Some(a) => {
            policy.check("authorization endpoint", &a)?;
            a
        }
        None if !user_agent => String::new(),
        None => return Err(missing(purpose, "authorization_endpoint")),
    };
    let token_endpoint = raw
        .token_endpoint
        .ok_or_else(|| missing(purpose, "token_endpoint"))?;
    policy.check("token endpoint", &token_endpoint)?;
    if let Some(r) = &raw.registration_endpoint {
        policy.check("registration endpoint", r)?;
    }
    Ok(ServerMetadata {
        issuer,
        authorization_endpoint,
        token_endpoint,
        registration_endpoint: raw.registration_endpoint,
        scopes_supported: raw.scopes_supported.as_deref().map(clean_scopes),
        token_endpoint_auth_methods_supported: raw.token_endpoint_auth_methods_supported,
        client_id_metadata_document_supported: raw
            .client_id_metadata_document_supported
            .unwrap_or(false),
        iss_parameter_supported: raw
            .authorization_response_iss_parameter_supported
            .unwrap_or(false),
        token_endpoint_auth_signing_alg_values_supported: raw
            .token_endpoint_auth_signing_alg_values_supported,
    })
}
