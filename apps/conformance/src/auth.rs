//! Authorization for the suite's `auth/*` scenarios: the headless user agent the suite expects,
//! the client ID metadata document URL it checks for, and pre-registered credentials from
//! `MCP_CONFORMANCE_CONTEXT`.
//!
//! The suite's authorization servers answer the authorization request at once with a redirect
//! to the redirect URI (no login page). The headless user agent GETs the authorization URL
//! through the same guard as every other request (the address policy, no redirect followed) and
//! takes the query of its `Location`: the `code`, `state` and `iss` the core then checks.

use std::sync::Arc;

use mcp_sansio::auth::{
    AuthConfig, ClientAuth, ClientCredentials, ClientSettings, DpopKey, Grant, IdentityProvider,
    IssuerPin, PreRegistered, TokenAuthMethod, UrlPolicy,
};
use mcp_sansio_net::auth::KeySigner;
use mcp_sansio_net::auth::{AuthHook, AuthHttp, Authorization};
use mcp_sansio_net::AddressPolicy;
use serde_json::Value;

/// The client ID metadata document URL the suite's `auth/basic-cimd` scenario expects.
pub const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The redirect URI registered and sent; the headless user agent never dials it.
pub const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The most bytes read of the authorization endpoint's answer.
const MAX_AGENT_BODY: usize = 64 * 1024;

/// The user agent of a run without a person: see the [module docs](self).
pub struct HeadlessAgent {
    http: AuthHttp,
    policy: UrlPolicy,
}

impl HeadlessAgent {
    /// A user agent that dials through `http`, fetching only URLs `policy` admits.
    pub fn new(http: AuthHttp, policy: UrlPolicy) -> Self {
        HeadlessAgent { http, policy }
    }
}

/// The query of the redirect `location` (without a fragment), or why there is none.
pub fn callback_query(location: &str) -> Result<String, String> {
    let without_fragment = location.split('#').next().unwrap_or_default();
    match without_fragment.split_once('?') {
        Some((_, q)) if !q.is_empty() => Ok(q.to_owned()),
        _ => Err("the authorization redirect has no query".into()),
    }
}

impl AuthHook for HeadlessAgent {
    fn open_user_agent(&mut self, url: &str) -> Result<String, String> {
        let endpoint = self
            .policy
            .check("authorization URL", url)
            .map_err(|e| e.to_string())?;
        let response = self
            .http
            .get(&endpoint, &[], MAX_AGENT_BODY)
            .map_err(|e| format!("authorization endpoint: {e}"))?;
        if !(300..400).contains(&response.status) {
            return Err(format!(
                "the authorization endpoint answered HTTP {} instead of a redirect",
                response.status
            ));
        }
        let location = response
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("location"))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .ok_or("the authorization redirect has no Location")?;
        callback_query(&location)
    }
}

/// The authorization server the scenario's credentials belong to: the context's `issuer` when
/// it names one, else [`IssuerPin::AnyIssuerUnsafe`]. The suite's scenarios that give
/// credentials without an `issuer` (the grants without a user agent, and pre-registration in
/// some versions) expect the client to discover its authorization server from the MCP server
/// it starts, so this client, run against the suite's own servers only, takes the opt-out
/// there.
pub fn scenario_pin(context: &Value) -> IssuerPin {
    match context.get("issuer").and_then(Value::as_str) {
        Some(issuer) => IssuerPin::Exactly(issuer.to_owned()),
        None => IssuerPin::AnyIssuerUnsafe,
    }
}

/// Pre-registered credentials from the scenario context (`client_id`, `client_secret`,
/// `issuer`: [`scenario_pin`]), if it has a `client_id`.
pub fn pre_registered(context: &Value) -> Option<PreRegistered> {
    let client_id = context.get("client_id")?.as_str()?.to_owned();
    let client_secret = context
        .get("client_secret")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let auth_method = if client_secret.is_some() {
        TokenAuthMethod::ClientSecretBasic
    } else {
        TokenAuthMethod::None
    };
    Some(PreRegistered {
        issuer: scenario_pin(context),
        credentials: ClientCredentials {
            client_id,
            client_secret,
            auth_method,
        },
    })
}

/// The authorization configuration of a scenario at `server_url`.
pub fn config(server_url: &str, context: &Value) -> AuthConfig {
    let mut client = ClientSettings::new("mcp-conformance-client", REDIRECT_URI);
    client.metadata_document_url = Some(CLIENT_METADATA_URL.into());
    client.pre_registered.extend(pre_registered(context));
    let mut config = AuthConfig::new(server_url, client);
    config.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    config
}

fn text(context: &Value, name: &str) -> Result<String, String> {
    context
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("the scenario context has no {name}"))
}

/// The grant a scenario configures: the extension scenarios (`auth/client-credentials-*`,
/// `auth/wif-jwt-bearer`, `auth/enterprise-managed-authorization`) name a grant without a user
/// agent and give its credentials in the context (pinned as [`scenario_pin`] says); every
/// other scenario uses the authorization code grant.
pub fn grant(scenario: &str, context: &Value) -> Result<Grant, String> {
    let issuer = scenario_pin(context);
    Ok(match scenario {
        "auth/client-credentials-basic" => Grant::ClientCredentials {
            client: ClientAuth::SecretBasic {
                client_id: text(context, "client_id")?,
                secret: text(context, "client_secret")?,
            },
            issuer,
        },
        "auth/client-credentials-jwt" => {
            let signer = KeySigner::from_pem(text(context, "private_key_pem")?.as_bytes())
                .map_err(|e| e.to_string())?;
            Grant::ClientCredentials {
                client: ClientAuth::PrivateKeyJwt {
                    client_id: text(context, "client_id")?,
                    signer: Arc::new(signer),
                },
                issuer,
            }
        }
        "auth/wif-jwt-bearer" => {
            let token = text(context, "valid_jwt")?;
            Grant::JwtBearer {
                client: ClientAuth::None {
                    client_id: text(context, "client_id")?,
                },
                assertion: Arc::new(move || Ok::<_, String>(token.clone())),
                issuer,
            }
        }
        "auth/enterprise-managed-authorization" => {
            let id_token = text(context, "idp_id_token")?;
            Grant::EnterpriseManaged {
                idp: IdentityProvider {
                    issuer: text(context, "idp_issuer")?,
                    token_endpoint: text(context, "idp_token_endpoint")?,
                    client: ClientAuth::None {
                        client_id: text(context, "idp_client_id")?,
                    },
                    id_token: Arc::new(move || Ok::<_, String>(id_token.clone())),
                },
                client: ClientAuth::SecretBasic {
                    client_id: text(context, "client_id")?,
                    secret: text(context, "client_secret")?,
                },
                issuer,
            }
        }
        _ => Grant::AuthorizationCode,
    })
}

/// The DPoP key of a scenario: the DPoP scenarios (`auth/dpop`, `auth/dpop-nonce`) bind their
/// tokens to a fresh ES256 key pair of this run (RFC 9449; the scenario context gives none);
/// the others send Bearer tokens.
pub fn dpop_key(scenario: &str) -> Result<Option<DpopKey>, String> {
    if !matches!(scenario, "auth/dpop" | "auth/dpop-nonce") {
        return Ok(None);
    }
    let signer = KeySigner::generate_es256().map_err(|e| e.to_string())?;
    Ok(Some(DpopKey(Arc::new(signer))))
}

/// The authorization of a scenario, dialling under `policy` (the client's own).
pub fn authorization(
    scenario: &str,
    server_url: &str,
    context: &Value,
    policy: AddressPolicy,
) -> Result<Authorization, String> {
    let mut config = config(server_url, context);
    config.grant = grant(scenario, context)?;
    config.dpop = dpop_key(scenario)?;
    let http = AuthHttp::with_policy(policy);
    let agent = HeadlessAgent::new(http.clone(), config.policy);
    Authorization::new(config, http, Box::new(agent)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callback_query_is_taken_from_the_location() {
        assert_eq!(
            callback_query("http://localhost:3000/callback?code=c&state=s#frag").unwrap(),
            "code=c&state=s"
        );
        assert!(callback_query("http://localhost:3000/callback").is_err());
        assert!(callback_query("http://localhost:3000/callback?").is_err());
    }

    #[test]
    fn pre_registration_comes_from_the_context() {
        let ctx =
            serde_json::json!({"client_id":"id","client_secret":"s","issuer":"http://localhost:1"});
        let p = pre_registered(&ctx).unwrap();
        assert_eq!(p.issuer, IssuerPin::Exactly("http://localhost:1".into()));
        assert_eq!(p.credentials.client_id, "id");
        assert_eq!(
            p.credentials.auth_method,
            TokenAuthMethod::ClientSecretBasic
        );
        assert!(pre_registered(&serde_json::json!({"toolCalls":[]})).is_none());
        let public = pre_registered(&serde_json::json!({"client_id":"id"})).unwrap();
        assert_eq!(public.credentials.auth_method, TokenAuthMethod::None);
        // Without an issuer in the context, the scenario expects discovery.
        assert_eq!(public.issuer, IssuerPin::AnyIssuerUnsafe);
    }

    #[test]
    fn the_configuration_allows_loopback_http_and_names_the_metadata_document() {
        let c = config("http://localhost:1/mcp", &Value::Null);
        assert!(c.policy.allow_loopback_http);
        assert_eq!(
            c.client.metadata_document_url.as_deref(),
            Some(CLIENT_METADATA_URL)
        );
        assert!(c.client.pre_registered.is_empty());
        c.client.validate().unwrap();
    }

    #[test]
    fn the_headless_agent_refuses_a_url_off_policy() {
        let mut agent = HeadlessAgent::new(
            AuthHttp::with_policy(AddressPolicy::strict()),
            UrlPolicy::default(),
        );
        let e = agent
            .open_user_agent("http://localhost:1/authorize?x=1")
            .unwrap_err();
        assert!(e.contains("https"), "{e}");
    }
}
