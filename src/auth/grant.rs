//! Grants without a user agent: the client credentials grant (the MCP OAuth client-credentials
//! extension), the JWT bearer grant with a workload identity token (RFC 7523 §2.1), and
//! enterprise-managed authorization (an identity assertion grant obtained by token exchange,
//! RFC 8693, at the enterprise identity provider, then redeemed with the JWT bearer grant).
//!
//! The grant is chosen by the embedder's configuration ([`Grant`] in
//! [`AuthConfig::grant`](crate::auth::AuthConfig::grant)), never by what a server advertises:
//! an authorizer configured for client credentials never opens a user agent, and one that
//! gets an error from its grant reports it without trying another grant.
use crate::prelude::*;

use alloc::sync::Arc;

use crate::auth::client::{ClientCredentials, IssuerPin};
use crate::auth::error::AuthError;
use crate::auth::jwt::{sign_jwt, AssertionClaims, JwtSigner, CLIENT_ASSERTION_TYPE};
use crate::auth::token::token_request;

/// The `grant_type` of the client credentials grant.
pub const CLIENT_CREDENTIALS: &str = "client_credentials";
/// The `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The `grant_type` of token exchange (RFC 8693 §2.1).
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an identity assertion JWT authorization grant (ID-JAG).
pub const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";

/// Supplies a token the embedder obtains elsewhere: the platform's workload identity JWT, or
/// the user's ID token from the enterprise identity provider. Called each time a grant needs
/// it, so it can hand out a fresh one. An error abandons the authorization; its text is
/// reported, so it must not contain the token.
pub trait AssertionSource: Send + Sync {
    /// The current token.
    fn token(&self) -> Result<String, String>;
}

impl<F> AssertionSource for F
where
    F: Fn() -> Result<String, String> + Send + Sync,
{
    fn token(&self) -> Result<String, String> {
        self()
    }
}

/// The header fields and form body of a token request.
pub type TokenRequest = (Vec<(String, String)>, Vec<u8>);

/// How the client authenticates at a token endpoint in a grant without a user agent.
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientAuth {
    /// No client authentication: `client_id` in the form body (a public client).
    None {
        /// The client ID.
        client_id: String,
    },
    /// HTTP Basic with the client ID and secret (RFC 6749 §2.3.1).
    SecretBasic {
        /// The client ID.
        client_id: String,
        /// The secret.
        secret: String,
    },
    /// `client_id` and `client_secret` in the form body.
    SecretPost {
        /// The client ID.
        client_id: String,
        /// The secret.
        secret: String,
    },
    /// A JWT client assertion (RFC 7523 §2.2) signed by the embedder's key: `iss` and `sub`
    /// the client ID, `aud` the authorization server's issuer, `iat`, `exp`, `jti`.
    PrivateKeyJwt {
        /// The client ID.
        client_id: String,
        /// Signs the assertion.
        signer: Arc<dyn JwtSigner>,
    },
}

impl core::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (method, id) = match self {
            ClientAuth::None { client_id } => ("none", client_id),
            ClientAuth::SecretBasic { client_id, .. } => ("client_secret_basic", client_id),
            ClientAuth::SecretPost { client_id, .. } => ("client_secret_post", client_id),
            ClientAuth::PrivateKeyJwt { client_id, .. } => ("private_key_jwt", client_id),
        };
        f.debug_struct("ClientAuth")
            .field("method", &method)
            .field("client_id", id)
            .finish_non_exhaustive()
    }
}

impl ClientAuth {
    /// The client ID.
    pub fn client_id(&self) -> &str {
        match self {
            ClientAuth::None { client_id }
            | ClientAuth::SecretBasic { client_id, .. }
            | ClientAuth::SecretPost { client_id, .. }
            | ClientAuth::PrivateKeyJwt { client_id, .. } => client_id,
        }
    }

    /// The registered name of the method, e.g. `private_key_jwt`.
    pub fn method_name(&self) -> &'static str {
        match self {
            ClientAuth::None { .. } => "none",
            ClientAuth::SecretBasic { .. } => "client_secret_basic",
            ClientAuth::SecretPost { .. } => "client_secret_post",
            ClientAuth::PrivateKeyJwt { .. } => "private_key_jwt",
        }
    }

    fn check(&self) -> Result<(), AuthError> {
        let id = self.client_id();
        if id.is_empty() || id.len() > crate::auth::client::MAX_CLIENT_VALUE_LEN {
            return Err(AuthError::Config {
                what: "the client ID must have 1 to 2048 bytes",
            });
        }
        if let ClientAuth::SecretBasic { secret, .. } | ClientAuth::SecretPost { secret, .. } = self
        {
            if secret.is_empty() || secret.len() > crate::auth::client::MAX_CLIENT_VALUE_LEN {
                return Err(AuthError::Config {
                    what: "the client secret must have 1 to 2048 bytes",
                });
            }
        }
        Ok(())
    }

    /// Headers and body of a token request with `grant`'s parameters, the client
    /// authenticated as this method says. For `private_key_jwt` the assertion is made for the
    /// authorization server `issuer` at `now_secs` with `jti`.
    pub fn token_request(
        &self,
        grant: &[(&str, &str)],
        issuer: &str,
        now_secs: u64,
        jti: String,
    ) -> Result<TokenRequest, AuthError> {
        use crate::auth::client::TokenAuthMethod;
        let (client_id, client_secret, auth_method) = match self {
            ClientAuth::None { client_id } => (client_id, None, TokenAuthMethod::None),
            ClientAuth::SecretBasic { client_id, secret } => (
                client_id,
                Some(secret.clone()),
                TokenAuthMethod::ClientSecretBasic,
            ),
            ClientAuth::SecretPost { client_id, secret } => (
                client_id,
                Some(secret.clone()),
                TokenAuthMethod::ClientSecretPost,
            ),
            ClientAuth::PrivateKeyJwt { client_id, signer } => {
                let claims = AssertionClaims::client(client_id, issuer, now_secs, jti);
                let assertion = sign_jwt(signer.as_ref(), "JWT", &claims).map_err(|e| {
                    AuthError::Assertion {
                        reason: e.to_string(),
                    }
                })?;
                let mut pairs = grant.to_vec();
                pairs.push(("client_id", client_id));
                pairs.push(("client_assertion_type", CLIENT_ASSERTION_TYPE));
                pairs.push(("client_assertion", &assertion));
                let headers = vec![
                    (
                        "Content-Type".to_owned(),
                        "application/x-www-form-urlencoded".to_owned(),
                    ),
                    ("Accept".to_owned(), "application/json".to_owned()),
                ];
                let body = crate::auth::form::encode_pairs(pairs).into_bytes();
                return Ok((headers, body));
            }
        };
        let client = ClientCredentials {
            client_id: client_id.clone(),
            client_secret,
            auth_method,
        };
        Ok(token_request(&client, grant))
    }
}

/// The enterprise identity provider of enterprise-managed authorization.
#[derive(Clone)]
pub struct IdentityProvider {
    /// Its issuer identifier (for the record; the token endpoint is what is used).
    pub issuer: String,
    /// Its token endpoint, where the ID token is exchanged for an identity assertion grant.
    /// Checked against the [`UrlPolicy`](crate::auth::UrlPolicy) like every URL.
    pub token_endpoint: String,
    /// How the client authenticates there.
    pub client: ClientAuth,
    /// Supplies the user's ID token from this provider (the `subject_token`).
    pub id_token: Arc<dyn AssertionSource>,
}

impl core::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

/// Which grant an [`Authorizer`](crate::auth::Authorizer) uses, chosen by configuration.
/// `Debug` shows the client IDs, never a secret, key or token.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization code grant with PKCE, through a user agent (the default).
    #[default]
    AuthorizationCode,
    /// The client credentials grant: the client acts on its own behalf.
    ClientCredentials {
        /// How it authenticates.
        client: ClientAuth,
        /// The authorization server its credentials may be presented to.
        issuer: IssuerPin,
    },
    /// The JWT bearer grant (RFC 7523 §2.1) with a token the embedder supplies (a workload
    /// identity token). Its `aud` must name the authorization server the protected resource
    /// names, else it is not sent there.
    JwtBearer {
        /// How the client authenticates (often [`ClientAuth::None`]).
        client: ClientAuth,
        /// Supplies the assertion.
        assertion: Arc<dyn AssertionSource>,
        /// The authorization server its credentials may be presented to.
        issuer: IssuerPin,
    },
    /// Enterprise-managed authorization: token exchange at the identity provider for an
    /// identity assertion grant for the MCP server's authorization server and resource, then
    /// the JWT bearer grant with it there.
    EnterpriseManaged {
        /// The identity provider.
        idp: IdentityProvider,
        /// How the client authenticates at the MCP server's authorization server.
        client: ClientAuth,
        /// The MCP server's authorization server: the only one the identity assertion grant is
        /// asked for (its `audience`) and the client's credentials are presented to.
        issuer: IssuerPin,
    },
}

impl core::fmt::Debug for Grant {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Grant::AuthorizationCode => f.write_str("AuthorizationCode"),
            Grant::ClientCredentials { client, issuer } => f
                .debug_struct("ClientCredentials")
                .field("client", client)
                .field("issuer", issuer)
                .finish(),
            Grant::JwtBearer { client, issuer, .. } => f
                .debug_struct("JwtBearer")
                .field("client", client)
                .field("issuer", issuer)
                .finish_non_exhaustive(),
            Grant::EnterpriseManaged {
                idp,
                client,
                issuer,
            } => f
                .debug_struct("EnterpriseManaged")
                .field("idp", idp)
                .field("client", client)
                .field("issuer", issuer)
                .finish(),
        }
    }
}

impl Grant {
    /// Whether this grant goes through a user agent (only the authorization code grant).
    pub fn needs_user_agent(&self) -> bool {
        matches!(self, Grant::AuthorizationCode)
    }

    /// A stable name for logs: `authorization_code`, `client_credentials`, `jwt_bearer`,
    /// `enterprise_managed`.
    pub fn name(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials { .. } => "client_credentials",
            Grant::JwtBearer { .. } => "jwt_bearer",
            Grant::EnterpriseManaged { .. } => "enterprise_managed",
        }
    }

    /// The client authentication at the MCP server's authorization server, for the grants
    /// without a user agent.
    pub fn client(&self) -> Option<&ClientAuth> {
        match self {
            Grant::AuthorizationCode => None,
            Grant::ClientCredentials { client, .. }
            | Grant::JwtBearer { client, .. }
            | Grant::EnterpriseManaged { client, .. } => Some(client),
        }
    }

    /// The authorization server the credentials of a grant without a user agent may be
    /// presented to; `None` for the authorization code grant (its client is identified per
    /// authorization server: [`PreRegistered`](crate::auth::PreRegistered) carries its own pin).
    pub fn issuer_pin(&self) -> Option<&IssuerPin> {
        match self {
            Grant::AuthorizationCode => None,
            Grant::ClientCredentials { issuer, .. }
            | Grant::JwtBearer { issuer, .. }
            | Grant::EnterpriseManaged { issuer, .. } => Some(issuer),
        }
    }

    pub(crate) fn check(&self) -> Result<(), AuthError> {
        if let Some(c) = self.client() {
            c.check()?;
        }
        if let Grant::EnterpriseManaged { idp, .. } = self {
            idp.client.check()?;
        }
        Ok(())
    }
}
