//! The configuration of an [`Authorizer`]: its bounds ([`AuthLimits`]), the server, client,
//! grant and DPoP key it runs with ([`AuthConfig`], [`DpopKey`]).
use super::*;

/// The bounds of authorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuthLimits {
    /// HTTP exchanges in the network part of one authorization (discovery and registration, or
    /// the token exchange). Default 12.
    pub max_exchanges: u32,
    /// Deadline of the network part of one authorization. Default 60 s.
    pub time: Duration,
    /// How long to wait for the user agent's callback. Default 10 min.
    pub callback_time: Duration,
    /// User-agent round trips before the MCP server accepts a token ([`Authorizer::accepted`]
    /// resets the count). Default 3.
    pub max_attempts: u32,
}

impl Default for AuthLimits {
    fn default() -> Self {
        AuthLimits {
            max_exchanges: 12,
            time: Duration::from_secs(60),
            callback_time: Duration::from_secs(600),
            max_attempts: 3,
        }
    }
}

/// What an [`Authorizer`] is configured with.
#[derive(Clone, Debug)]
pub struct AuthConfig {
    /// The MCP server's URL (the protected resource).
    pub server_url: String,
    /// How the client identifies itself.
    pub client: ClientSettings,
    /// Which URLs may be fetched.
    pub policy: UrlPolicy,
    /// The bounds.
    pub limits: AuthLimits,
    /// The grant: the authorization code grant through a user agent (the default), or one
    /// without a user agent ([`Grant`]). Chosen here, never by the server.
    pub grant: Grant,
    /// The client's DPoP key (RFC 9449), if its tokens are to be bound to it: every token
    /// request then carries a DPoP proof (RFC 9449).
    pub dpop: Option<DpopKey>,
}

/// The key a client binds its tokens to with DPoP: a signer whose
/// [`JwtSigner::public_jwk`](crate::auth::JwtSigner::public_jwk) gives its public key. `Debug`
/// shows the algorithm only.
#[derive(Clone)]
pub struct DpopKey(pub alloc::sync::Arc<dyn crate::auth::jwt::JwtSigner>);

impl core::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("DpopKey").field(&self.0.algorithm()).finish()
    }
}

impl AuthConfig {
    /// A configuration with the default policy (https only) and limits, for the authorization
    /// code grant.
    pub fn new(server_url: impl Into<String>, client: ClientSettings) -> Self {
        AuthConfig {
            server_url: server_url.into(),
            client,
            policy: UrlPolicy::default(),
            limits: AuthLimits::default(),
            grant: Grant::AuthorizationCode,
            dpop: None,
        }
    }

    /// A configuration for a grant without a user agent (client credentials, JWT bearer,
    /// enterprise-managed), with the default policy and limits. The client settings are named
    /// `client_name` and have a redirect URI that is never used. The grant carries the
    /// authorization server its credentials may be presented to ([`Grant::issuer_pin`]).
    pub fn machine(server_url: impl Into<String>, client_name: &str, grant: Grant) -> Self {
        let mut c = AuthConfig::new(
            server_url,
            ClientSettings::new(client_name, "http://127.0.0.1/unused"),
        );
        c.grant = grant;
        c
    }

    /// Who obtains the tokens, as configured ([`GrantIdentity`](crate::GrantIdentity)): the
    /// grant's kind, the issuer its [`IssuerPin`](crate::auth::IssuerPin) names (empty when
    /// the grant has none, or [`IssuerPin::AnyIssuerUnsafe`](crate::auth::IssuerPin)) and the client's
    /// identity: the client ID of a grant without a user agent; for the authorization code
    /// grant, [`ClientSettings::metadata_document_url`], else [`ClientSettings::client_name`]
    /// (its client ID is only learnt at the authorization server).
    pub fn grant_identity(&self) -> crate::GrantIdentity {
        let client_id = match &self.grant {
            Grant::AuthorizationCode => self
                .client
                .metadata_document_url
                .clone()
                .unwrap_or_else(|| self.client.client_name.clone()),
            Grant::ClientCredentials { client, .. }
            | Grant::JwtBearer { client, .. }
            | Grant::EnterpriseManaged { client, .. } => client.client_id().to_owned(),
        };
        crate::GrantIdentity {
            kind: crate::GrantKind::from(&self.grant),
            issuer: self
                .grant
                .issuer_pin()
                .and_then(|pin| pin.issuer())
                .unwrap_or_default()
                .to_owned(),
            client_id,
        }
    }
}
