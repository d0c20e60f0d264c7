//! How the client identifies itself to an authorization server: pre-registered credentials, a
//! client ID metadata document (when the server supports them), or dynamic client registration
//! (RFC 7591); and the token endpoint authentication method that follows.
use crate::prelude::*;

use serde::{Deserialize, Serialize};

use crate::auth::error::{AuthError, Purpose};
use crate::auth::metadata::{document, ServerMetadata};
use crate::endpoint::{Endpoint, Scheme};
use crate::error::truncated;

/// The longest client ID or client secret accepted.
pub const MAX_CLIENT_VALUE_LEN: usize = 2048;

/// How the client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TokenAuthMethod {
    /// HTTP Basic with the form-encoded client ID and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A public client: `client_id` in the form body, no secret.
    None,
}

impl TokenAuthMethod {
    /// The registered name, e.g. `client_secret_basic`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TokenAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenAuthMethod::ClientSecretPost => "client_secret_post",
            TokenAuthMethod::None => "none",
        }
    }

    /// The method with registered name `s`, if it is one of the three supported.
    pub fn from_name(s: &str) -> Option<TokenAuthMethod> {
        match s {
            "client_secret_basic" => Some(TokenAuthMethod::ClientSecretBasic),
            "client_secret_post" => Some(TokenAuthMethod::ClientSecretPost),
            "none" => Some(TokenAuthMethod::None),
            _ => None,
        }
    }
}

/// The credentials a client uses with one authorization server. `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientCredentials {
    /// The client ID (for a metadata document, its URL).
    pub client_id: String,
    /// The client secret, for a confidential client.
    pub client_secret: Option<String>,
    /// How to authenticate at the token endpoint.
    pub auth_method: TokenAuthMethod,
}

impl core::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// The OAuth `application_type` of the client (RFC 7591 via OpenID registration).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApplicationType {
    /// A native application (loopback or custom-scheme redirect).
    Native,
    /// A web application (https redirect).
    Web,
}

impl ApplicationType {
    /// `native` or `web`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ApplicationType::Native => "native",
            ApplicationType::Web => "web",
        }
    }
}

/// The authorization server (issuer) a client secret, key or grant may be presented to. Every
/// credential configured out of band carries one: a [`PreRegistered`] client and every
/// [`Grant`](crate::auth::Grant) without a user agent. The MCP server names its authorization
/// server in its protected-resource metadata, so without a pin a hostile MCP server could name
/// its own and receive the secret.
///
/// Serialised as the issuer string, or `null` for [`IssuerPin::AnyIssuerUnsafe`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "Option<String>", into = "Option<String>")]
pub enum IssuerPin {
    /// Only the authorization server whose issuer identifier is exactly this string (RFC 8414
    /// §3.3: the `issuer` of its metadata is identical to it). A protected resource that names
    /// another gets nothing ([`AuthError::IssuerNotAllowed`]), on discovery, on renewal and on
    /// a resend alike.
    Exactly(String),
    /// Whichever authorization server the protected resource names (its URL still passes the
    /// [`UrlPolicy`](crate::auth::UrlPolicy) and the address guard). **Unsafe**: a hostile MCP
    /// server can name an authorization server of its own and receive the credentials. Only for
    /// a caller that cannot know the issuer in advance and trusts every MCP server it talks to.
    AnyIssuerUnsafe,
}

impl IssuerPin {
    /// Whether credentials with this pin may be presented to the authorization server `issuer`.
    pub fn admits(&self, issuer: &str) -> bool {
        match self {
            IssuerPin::Exactly(pinned) => pinned == issuer,
            IssuerPin::AnyIssuerUnsafe => true,
        }
    }

    /// The pinned issuer, `None` for [`IssuerPin::AnyIssuerUnsafe`].
    pub fn issuer(&self) -> Option<&str> {
        match self {
            IssuerPin::Exactly(pinned) => Some(pinned),
            IssuerPin::AnyIssuerUnsafe => None,
        }
    }
}

impl From<Option<String>> for IssuerPin {
    fn from(v: Option<String>) -> Self {
        match v {
            Some(issuer) => IssuerPin::Exactly(issuer),
            None => IssuerPin::AnyIssuerUnsafe,
        }
    }
}

impl From<IssuerPin> for Option<String> {
    fn from(p: IssuerPin) -> Self {
        match p {
            IssuerPin::Exactly(issuer) => Some(issuer),
            IssuerPin::AnyIssuerUnsafe => None,
        }
    }
}

/// Credentials registered out of band with one authorization server (or, explicitly and
/// unsafely, with any: [`IssuerPin::AnyIssuerUnsafe`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreRegistered {
    /// The authorization server they may be presented to: they are used with that one only,
    /// and a stored registration or token that carries them is never sent to another.
    pub issuer: IssuerPin,
    /// The credentials.
    pub credentials: ClientCredentials,
}

/// What the client says about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientSettings {
    /// `client_name`.
    pub client_name: String,
    /// The redirect URI the user agent returns to (a loopback URL for a command line).
    pub redirect_uri: String,
    /// `application_type`.
    pub application_type: ApplicationType,
    /// The https URL of this client's metadata document, used as its client ID where the
    /// authorization server sets `client_id_metadata_document_supported`.
    pub metadata_document_url: Option<String>,
    /// Pre-registered credentials, tried first.
    pub pre_registered: Vec<PreRegistered>,
}

impl ClientSettings {
    /// A native client named `client_name` that receives the callback at `redirect_uri`.
    pub fn new(client_name: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        ClientSettings {
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            application_type: ApplicationType::Native,
            metadata_document_url: None,
            pre_registered: Vec::new(),
        }
    }

    /// Checks the settings: a redirect URI the endpoint parser accepts, a metadata document URL
    /// that is https with a path.
    pub fn validate(&self) -> Result<(), AuthError> {
        if self.client_name.is_empty() || self.client_name.len() > 256 {
            return Err(AuthError::Config {
                what: "client_name must have 1 to 256 bytes",
            });
        }
        Endpoint::parse(&self.redirect_uri).map_err(AuthError::url("redirect URI"))?;
        if let Some(url) = &self.metadata_document_url {
            let e = Endpoint::parse(url).map_err(AuthError::url("client metadata document URL"))?;
            if e.scheme() != Scheme::Https || e.target() == "/" {
                return Err(AuthError::Config {
                    what: "the client metadata document URL must be https with a path",
                });
            }
        }
        Ok(())
    }

    fn metadata_json(&self, client_id: Option<&str>, method: TokenAuthMethod) -> serde_json::Value {
        let mut v = serde_json::json!({
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method.as_str(),
            "application_type": self.application_type.as_str(),
        });
        if let (Some(id), Some(obj)) = (client_id, v.as_object_mut()) {
            obj.insert("client_id".into(), id.into());
        }
        v
    }

    /// The client ID metadata document to publish at [`ClientSettings::metadata_document_url`]
    /// (JSON), or `None` when no URL is set.
    pub fn metadata_document(&self) -> Option<Vec<u8>> {
        let url = self.metadata_document_url.as_deref()?;
        Some(
            self.metadata_json(Some(url), TokenAuthMethod::None)
                .to_string()
                .into_bytes(),
        )
    }

    /// The body of a registration request (RFC 7591 §2) asking for `method`.
    pub fn registration_body(&self, method: TokenAuthMethod) -> Vec<u8> {
        self.metadata_json(None, method).to_string().into_bytes()
    }
}

fn supports(meta: &ServerMetadata, m: TokenAuthMethod) -> bool {
    match &meta.token_endpoint_auth_methods_supported {
        Some(list) => list.iter().any(|s| s == m.as_str()),
        // RFC 8414 §2: absent means client_secret_basic.
        None => m == TokenAuthMethod::ClientSecretBasic,
    }
}

/// The method a registration asks for: `none` (a public client with PKCE) when offered, else
/// `client_secret_basic`, else `client_secret_post`.
pub fn registration_auth_method(meta: &ServerMetadata) -> Result<TokenAuthMethod, AuthError> {
    [
        TokenAuthMethod::None,
        TokenAuthMethod::ClientSecretBasic,
        TokenAuthMethod::ClientSecretPost,
    ]
    .into_iter()
    .find(|m| supports(meta, *m))
    .ok_or(AuthError::UnsupportedAuthMethod)
}

/// The method to use with credentials that have (or lack) a secret, when nothing else decides:
/// `none` without a secret; with one, the first of `client_secret_basic`, `client_secret_post`,
/// `none` the server supports, else `client_secret_basic`.
pub fn auth_method_for_secret(meta: &ServerMetadata, has_secret: bool) -> TokenAuthMethod {
    if !has_secret {
        return TokenAuthMethod::None;
    }
    [
        TokenAuthMethod::ClientSecretBasic,
        TokenAuthMethod::ClientSecretPost,
        TokenAuthMethod::None,
    ]
    .into_iter()
    .find(|m| supports(meta, *m))
    .unwrap_or(TokenAuthMethod::ClientSecretBasic)
}

#[derive(Deserialize)]
struct RawRegistration {
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

fn check_value(what: &str, v: &str) -> Result<(), AuthError> {
    if v.is_empty() || v.len() > MAX_CLIENT_VALUE_LEN || v.chars().any(char::is_control) {
        return Err(AuthError::Document {
            purpose: Purpose::Registration,
            reason: format!("`{what}` is empty, too long or has a control character"),
        });
    }
    Ok(())
}

/// Decodes a registration response (RFC 7591 §3.2.1): a `client_id`, an optional secret, and
/// the token endpoint authentication method: the one the response names, else the one
/// `requested`, when usable with the credentials (a secret method needs a secret), else as
/// `auth_method_for_secret` chooses.
pub fn decode_registration(
    body: &[u8],
    meta: &ServerMetadata,
    requested: TokenAuthMethod,
) -> Result<ClientCredentials, AuthError> {
    let raw: RawRegistration = document(Purpose::Registration, body)?;
    let client_id = raw.client_id.ok_or_else(|| AuthError::Document {
        purpose: Purpose::Registration,
        reason: "`client_id` is missing".into(),
    })?;
    check_value("client_id", &client_id)?;
    let client_secret = raw.client_secret.filter(|s| !s.is_empty());
    if let Some(s) = &client_secret {
        check_value("client_secret", s)?;
    }
    let named = raw
        .token_endpoint_auth_method
        .as_deref()
        .and_then(TokenAuthMethod::from_name);
    if raw.token_endpoint_auth_method.is_some() && named.is_none() {
        return Err(AuthError::Document {
            purpose: Purpose::Registration,
            reason: format!(
                "unsupported token_endpoint_auth_method {:?}",
                truncated(raw.token_endpoint_auth_method.as_deref().unwrap_or(""), 64)
            ),
        });
    }
    let usable = |m: TokenAuthMethod| m == TokenAuthMethod::None || client_secret.is_some();
    let auth_method = match named {
        Some(m) if usable(m) => m,
        Some(_) => auth_method_for_secret(meta, client_secret.is_some()),
        None if usable(requested) => requested,
        None => auth_method_for_secret(meta, client_secret.is_some()),
    };
    Ok(ClientCredentials {
        client_id,
        client_secret,
        auth_method,
    })
}
