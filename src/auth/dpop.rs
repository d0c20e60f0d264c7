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

/// What a [`Connection`](crate::Connection) needs to present a DPoP-bound access token
/// (RFC 9449 §7) on every request it sends: the token, the key it is bound to, a random seed
/// for the proofs' `jti`s and where the connection's timeline sits on the wall clock. With
/// [`Config::dpop`](crate::Config::dpop) set, each request carries `Authorization: DPoP <token>`
/// and a fresh proof (`htm`, `htu`, `iat`, a `jti` unique to the connection, `ath`, and the
/// server's latest `DPoP-Nonce`), and a `401` asking `use_dpop_nonce` is answered by sending the
/// request once more with the nonce it gave.
///
/// `Debug` shows neither the token nor the seed.
#[derive(Clone)]
pub struct DpopBinding {
    /// The access token bound to `key` (the `Authorization: DPoP` credential).
    pub access_token: String,
    /// The key the token is bound to; it signs the proofs.
    pub key: crate::auth::DpopKey,
    /// A random secret the proofs' `jti`s are derived from (with a counter): an embedder gives
    /// each binding a fresh one.
    pub jti_seed: String,
    /// The wall-clock time (since the Unix epoch) at the instant zero of the connection's
    /// timeline: a proof sent at `now` has `iat` = `unix_at_zero + now`, in whole seconds. The
    /// adapters set it from their clock when they create the connection.
    pub unix_at_zero: core::time::Duration,
}

impl core::fmt::Debug for DpopBinding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DpopBinding")
            .field("access_token", &"<redacted>")
            .field("key", &self.key)
            .field("jti_seed", &"<redacted>")
            .field("unix_at_zero", &self.unix_at_zero)
            .finish()
    }
}

impl DpopBinding {
    /// A binding of `access_token` to `key`, with `jti_seed` for the proofs' identifiers and
    /// the timeline's zero at the Unix epoch (set [`DpopBinding::unix_at_zero`] before use).
    pub fn new(
        access_token: impl Into<String>,
        key: crate::auth::DpopKey,
        jti_seed: impl Into<String>,
    ) -> DpopBinding {
        DpopBinding {
            access_token: access_token.into(),
            key,
            jti_seed: jti_seed.into(),
            unix_at_zero: core::time::Duration::ZERO,
        }
    }

    /// The `Authorization` and `DPoP` fields of the `n`-th request of a connection:
    /// `method` to `url` at `now` on the connection's timeline, with `nonce` when the server
    /// gave one.
    pub fn request_headers(
        &self,
        method: &str,
        url: &str,
        now: crate::Instant,
        n: u64,
        nonce: Option<&str>,
    ) -> Result<[(String, String); 2], JwtError> {
        let iat = self
            .unix_at_zero
            .saturating_add(now.as_duration())
            .as_secs();
        let jti = crate::auth::jwt::jti(&self.jti_seed, n);
        let p = proof(
            self.key.0.as_ref(),
            method,
            url,
            iat,
            jti,
            Some(&self.access_token),
            nonce,
        )?;
        Ok([
            (
                "Authorization".to_owned(),
                format!("DPoP {}", self.access_token),
            ),
            ("DPoP".to_owned(), p),
        ])
    }
}

/// The `DPoP-Nonce` value `v` when usable: visible ASCII, at most [`MAX_NONCE_LEN`] bytes.
pub fn usable_nonce(v: &[u8]) -> Option<String> {
    let ok =
        !v.is_empty() && v.len() <= MAX_NONCE_LEN && v.iter().all(|b| (0x21..=0x7e).contains(b));
    ok.then(|| String::from_utf8_lossy(v).into_owned())
}
