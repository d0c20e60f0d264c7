//! DPoP proofs (RFC 9449): a JWT signed with the client's key per HTTP request, binding the
//! request (`htm`, `htu`) and, for a resource request, the access token (`ath`) to that key.
//!
//! The core builds the proof ([`proof`]) and the embedder's [`JwtSigner`] signs it; the signer's
//! [`JwtSigner::public_jwk`] goes in the header. With [`AuthConfig::dpop`](crate::auth::AuthConfig)
//! set, every token request carries a proof; a `use_dpop_nonce` answer with a `DPoP-Nonce` is
//! retried once with that nonce; a `token_type` of `DPoP` is accepted and the token is then never
//! given out as a Bearer token ([`Authorizer::bearer`](crate::auth::Authorizer::bearer) is
//! `None`): [`Authorizer::authorization_headers`](crate::auth::Authorizer::authorization_headers)
//! gives the `Authorization: DPoP …` and `DPoP` fields of each MCP request.
use crate::prelude::*;

use base64::Engine as _;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::auth::jwt::{sign_with_header, JwtError, JwtSigner};

const B64URL: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The `typ` of a DPoP proof.
pub const DPOP_TYP: &str = "dpop+jwt";

/// The longest nonce accepted from a server.
pub const MAX_NONCE_LEN: usize = 512;

/// The `htu` of a request to `url`: the URL without its query and fragment (RFC 9449 §4.2).
pub fn htu(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// The `ath` of an access token: `BASE64URL(SHA-256(ASCII(token)))` (RFC 9449 §4.2).
pub fn ath(access_token: &str) -> String {
    B64URL.encode(Sha256::digest(access_token.as_bytes()))
}

/// The JWK SHA-256 thumbprint (RFC 7638) of a public JWK: the required members in
/// lexicographic order, no whitespace. `None` for a key type other than EC or RSA.
pub fn jwk_thumbprint(jwk: &serde_json::Value) -> Option<String> {
    let m = |n: &str| jwk.get(n).and_then(|v| v.as_str());
    let canonical = match m("kty")? {
        "EC" => format!(
            r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
            m("crv")?,
            m("x")?,
            m("y")?
        ),
        "RSA" => format!(r#"{{"e":"{}","kty":"RSA","n":"{}"}}"#, m("e")?, m("n")?),
        _ => return None,
    };
    Some(B64URL.encode(Sha256::digest(canonical.as_bytes())))
}

/// The claims of a DPoP proof.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProofClaims {
    /// A unique identifier.
    pub jti: String,
    /// The HTTP method.
    pub htm: String,
    /// The URL without query and fragment.
    pub htu: String,
    /// Seconds since the Unix epoch.
    pub iat: u64,
    /// The hash of the access token, on a resource request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ath: Option<String>,
    /// The server's nonce, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
}

/// A DPoP proof for `method` `url` at `now_secs`: header `{"typ": "dpop+jwt", "alg": …,
/// "jwk": <public key>}`, claims [`ProofClaims`] (`ath` of `access_token` when given).
pub fn proof(
    signer: &dyn JwtSigner,
    method: &str,
    url: &str,
    now_secs: u64,
    jti: String,
    access_token: Option<&str>,
    nonce: Option<&str>,
) -> Result<String, JwtError> {
    let jwk = signer.public_jwk().ok_or(JwtError::Malformed {
        reason: "the signer gives no public JWK for DPoP",
    })?;
    if jwk.get("d").is_some() {
        return Err(JwtError::Malformed {
            reason: "the signer's public JWK holds a private member",
        });
    }
    let header = serde_json::json!({
        "typ": DPOP_TYP,
        "alg": signer.algorithm().as_str(),
        "jwk": jwk,
    });
    let header = serde_json::to_vec(&header).map_err(|_| JwtError::Malformed {
        reason: "the header does not serialise",
    })?;
    let claims = ProofClaims {
        jti,
        htm: method.to_owned(),
        htu: htu(url).to_owned(),
        iat: now_secs,
        ath: access_token.map(ath),
        nonce: nonce.map(str::to_owned),
    };
    sign_with_header(signer, header, &claims)
}
