//! What an [`Authorizer`] keeps between runs: the [`CredentialStore`] (client credentials per
//! authorization server, tokens per protected resource and grant) and its keys.
use super::*;

/// What the client holds for one authorization server: how it identifies itself there. Tokens
/// are not kept here but per protected resource ([`ResourceCredentials`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuerCredentials {
    /// The client's credentials with this server.
    pub client: Option<ClientCredentials>,
    /// Its token endpoint (for refreshing without rediscovery).
    pub token_endpoint: Option<String>,
    /// The redirect URI the client registered there, when it registered itself (absent:
    /// [`ClientSettings::redirect_uri`]).
    #[serde(default)]
    pub redirect_uri: Option<String>,
}

/// Tokens issued for one protected resource (one MCP server) by one authorization server. They
/// are sent to that server only, and refreshed only at that authorization server, for that
/// resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceCredentials {
    /// The authorization server (issuer) that issued them.
    pub issuer: String,
    /// The resource indicator (RFC 8707) they were asked for, sent again on refresh.
    pub resource: String,
    /// The tokens.
    pub tokens: TokenSet,
}

/// Credentials bound to where they belong: client registrations keyed by authorization server
/// (issuer), tokens keyed by protected resource and grant ([`Authorizer::token_key`]: the MCP server's URL
/// and who obtains them, the grant's kind, issuer and client), each naming its issuer. One store
/// serves many servers and grants without crossing them: an [`Authorizer`] sends only the
/// tokens stored under its own key, and refreshes them only at the issuer that issued them.
/// Serialisable so an embedder can keep it in its vault; it holds secrets.
///
/// A store of an earlier format loads as this one with its client registrations and without
/// its tokens, which were not bound as they are now: version 1 kept tokens per issuer (with a
/// `current` issuer), version 2 per resource only, whatever grant obtained them. The next
/// authorization reuses the registrations and asks for new tokens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialStore {
    /// The format version: [`CredentialStore::FORMAT_VERSION`]; absent (0) in the earlier format.
    #[serde(default)]
    pub version: u32,
    /// Client registrations, per issuer.
    #[serde(default)]
    pub issuers: BTreeMap<String, IssuerCredentials>,
    /// Tokens, per protected resource and grant ([`Authorizer::token_key`]).
    #[serde(default)]
    pub resources: BTreeMap<String, ResourceCredentials>,
}

impl Default for CredentialStore {
    fn default() -> Self {
        CredentialStore {
            version: CredentialStore::FORMAT_VERSION,
            issuers: BTreeMap::new(),
            resources: BTreeMap::new(),
        }
    }
}

impl CredentialStore {
    /// The format this version writes (3: tokens keyed by resource and grant, [`Authorizer::token_key`]).
    pub const FORMAT_VERSION: u32 = 3;
}

/// The key of the tokens of the MCP server `server` obtained by `grant` in a
/// [`CredentialStore`]: [`store_key`](crate::store_key) of the token use, the server and the
/// authorization context of the grant (no credential presented yet: the tokens are what is
/// stored). It holds no secret and no URL.
pub fn token_key(server: &Endpoint, grant: &crate::GrantIdentity) -> String {
    crate::store_key(
        crate::StoreUse::Tokens,
        server,
        &crate::AuthContext::new(crate::Credential::None, Some(grant)),
    )
}

/// The key of a protected resource in a [`CredentialStore`]: the URL normalised as RFC 3986
/// §6.2.2–6.2.3 says for scheme and host case and the default port, an empty path as `/`
/// (`https://MCP.example:443` and `https://mcp.example/` have the same key); path and query
/// are kept exactly.
pub fn resource_key(server: &Endpoint) -> String {
    let mut key = server.origin();
    key.push_str(server.target());
    key
}
