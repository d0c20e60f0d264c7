//! JSON Web Tokens the client makes and reads (RFC 7519, compact JWS of RFC 7515): the client
//! assertion of `private_key_jwt` (RFC 7523 §2.2, §3) is built here and signed by the
//! embedder's [`JwtSigner`]; assertions the embedder supplies (a workload identity token, an
//! identity assertion grant) are read without verification, only to check where they may be
//! sent ([`unverified_claims`]).
//!
//! The core holds no key and reads no clock or random source: the time comes in as
//! [`Instant`](crate::Instant) (seconds since the Unix epoch on the adapters' timeline) and the
//! `jti` from the random secrets of the authorization.
use crate::prelude::*;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The most bytes of a JWT read or made.
pub const MAX_JWT_LEN: usize = 16 * 1024;

/// How long a client assertion is valid after its `iat`, in seconds (RFC 7523 §3 asks for an
/// expiry; a short one limits replay).
pub const ASSERTION_LIFETIME_SECS: u64 = 60;

const B64URL: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A JWS algorithm a [`JwtSigner`] signs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum JwsAlgorithm {
    /// ECDSA P-256 with SHA-256; the signature is `r || s`, 64 bytes (RFC 7518 §3.4).
    ES256,
    /// ECDSA P-384 with SHA-384; the signature is `r || s`, 96 bytes.
    ES384,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PSS with SHA-256.
    PS256,
}

impl JwsAlgorithm {
    /// The `alg` header value, e.g. `ES256`.
    pub const fn as_str(self) -> &'static str {
        match self {
            JwsAlgorithm::ES256 => "ES256",
            JwsAlgorithm::ES384 => "ES384",
            JwsAlgorithm::RS256 => "RS256",
            JwsAlgorithm::PS256 => "PS256",
        }
    }

    /// The algorithm named `s`, if supported.
    pub fn from_name(s: &str) -> Option<JwsAlgorithm> {
        match s {
            "ES256" => Some(JwsAlgorithm::ES256),
            "ES384" => Some(JwsAlgorithm::ES384),
            "RS256" => Some(JwsAlgorithm::RS256),
            "PS256" => Some(JwsAlgorithm::PS256),
            _ => None,
        }
    }

    /// The exact signature length of the ECDSA algorithms; `None` for RSA (the key's size).
    const fn fixed_len(self) -> Option<usize> {
        match self {
            JwsAlgorithm::ES256 => Some(64),
            JwsAlgorithm::ES384 => Some(96),
            JwsAlgorithm::RS256 | JwsAlgorithm::PS256 => None,
        }
    }
}

/// Why a signer did not sign. It carries no key material.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the signer failed: {reason}")]
pub struct SignError {
    /// Why (never key material).
    pub reason: String,
}

/// Signs JWTs for the client with a key the embedder holds: the core builds the header and the
/// claims and gives the JWS signing input (`BASE64URL(header) || '.' || BASE64URL(claims)`) to
/// [`JwtSigner::sign`]. `mcp-sansio-net` provides one on `ring` from a PEM or JWK key file.
pub trait JwtSigner: Send + Sync {
    /// The algorithm of the key (the header's `alg`).
    fn algorithm(&self) -> JwsAlgorithm;

    /// The key ID to put in the header (`kid`), if the authorization server knows the key by
    /// one.
    fn key_id(&self) -> Option<&str> {
        None
    }

    /// The signature of `signing_input` (raw bytes: for ECDSA `r || s` of fixed length, as
    /// JWS requires, not DER).
    fn sign(&self, signing_input: &[u8]) -> Result<Vec<u8>, SignError>;

    /// The public key as a JWK (RFC 7517) with its required members only (`kty`, `crv`, `x`,
    /// `y` for EC; `kty`, `n`, `e` for RSA), never a private member: what a DPoP proof carries
    /// in its header. `None` when the signer cannot give it (it then cannot make DPoP proofs).
    fn public_jwk(&self) -> Option<serde_json::Value> {
        None
    }
}

/// The claims of a client assertion (RFC 7523 §3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionClaims {
    /// `iss`: the client ID.
    pub iss: String,
    /// `sub`: the client ID.
    pub sub: String,
    /// `aud`: the authorization server's issuer identifier.
    pub aud: String,
    /// `exp`, seconds since the Unix epoch.
    pub exp: u64,
    /// `iat`, seconds since the Unix epoch.
    pub iat: u64,
    /// `jti`: unique per assertion.
    pub jti: String,
}

impl AssertionClaims {
    /// The claims of a client assertion made at `now_secs` by `client_id` for the authorization
    /// server `issuer`, valid [`ASSERTION_LIFETIME_SECS`].
    pub fn client(client_id: &str, issuer: &str, now_secs: u64, jti: String) -> Self {
        AssertionClaims {
            iss: client_id.to_owned(),
            sub: client_id.to_owned(),
            aud: issuer.to_owned(),
            exp: now_secs.saturating_add(ASSERTION_LIFETIME_SECS),
            iat: now_secs,
            jti,
        }
    }
}

#[derive(Serialize)]
struct Header<'a> {
    alg: &'a str,
    typ: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kid: Option<&'a str>,
}

/// Why a JWT could not be made or read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// The signer failed.
    #[error(transparent)]
    Sign(#[from] SignError),
    /// The signer's signature has the wrong length for its algorithm.
    #[error("the signer gave a {got}-byte signature for {alg}, expected {expected}")]
    SignatureLength {
        /// The algorithm.
        alg: &'static str,
        /// The length expected.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// The token is not a compact JWS of three base64url parts with a JSON object as claims, or
    /// is longer than [`MAX_JWT_LEN`].
    #[error("not a usable JWT: {reason}")]
    Malformed {
        /// What is wrong (never the token).
        reason: &'static str,
    },
}

/// A compact JWS (`header.claims.signature`, each base64url without padding) of `claims`
/// signed by `signer`, with header `{"alg": …, "typ": typ, "kid": …}`.
pub fn sign_jwt<C: Serialize>(
    signer: &dyn JwtSigner,
    typ: &str,
    claims: &C,
) -> Result<String, JwtError> {
    let header = Header {
        alg: signer.algorithm().as_str(),
        typ,
        kid: signer.key_id(),
    };
    let header = serde_json::to_vec(&header).map_err(|_| JwtError::Malformed {
        reason: "the header does not serialise",
    })?;
    sign_with_header(signer, header, claims)
}

/// As [`sign_jwt`] with the header given as JSON bytes (its `alg` must be the signer's).
pub(crate) fn sign_with_header<C: Serialize>(
    signer: &dyn JwtSigner,
    header: Vec<u8>,
    claims: &C,
) -> Result<String, JwtError> {
    let alg = signer.algorithm();
    let claims = serde_json::to_vec(claims).map_err(|_| JwtError::Malformed {
        reason: "the claims do not serialise",
    })?;
    let mut out = B64URL.encode(header);
    out.push('.');
    B64URL.encode_string(claims, &mut out);
    let signature = signer.sign(out.as_bytes())?;
    if let Some(expected) = alg.fixed_len() {
        if signature.len() != expected {
            return Err(JwtError::SignatureLength {
                alg: alg.as_str(),
                expected,
                got: signature.len(),
            });
        }
    }
    out.push('.');
    B64URL.encode_string(signature, &mut out);
    if out.len() > MAX_JWT_LEN {
        return Err(JwtError::Malformed {
            reason: "longer than the JWT limit",
        });
    }
    Ok(out)
}

/// The claims of a compact JWS, decoded without checking its signature (the client cannot:
/// the token is meant for the authorization server). Used only to decide where a token the
/// embedder supplied may be sent.
pub fn unverified_claims(
    token: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, JwtError> {
    if token.len() > MAX_JWT_LEN {
        return Err(JwtError::Malformed {
            reason: "longer than the JWT limit",
        });
    }
    let mut parts = token.split('.');
    let (Some(_), Some(claims), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed {
            reason: "not three dot-separated parts",
        });
    };
    let bytes = B64URL.decode(claims).map_err(|_| JwtError::Malformed {
        reason: "the claims are not base64url",
    })?;
    serde_json::from_slice(&bytes).map_err(|_| JwtError::Malformed {
        reason: "the claims are not a JSON object",
    })
}

/// The audiences of a JWT's `aud` claim (a string or an array of strings, RFC 7519 §4.1.3).
pub fn audiences(claims: &serde_json::Map<String, serde_json::Value>) -> Vec<&str> {
    match claims.get("aud") {
        Some(serde_json::Value::String(s)) => vec![s.as_str()],
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    }
}

/// Whether an assertion whose `aud` claim holds `audiences` is meant for the authorization
/// server `issuer` with token endpoint `token_endpoint` (RFC 7523 §3: the issuer identifier or
/// the token endpoint; a trailing `/` on the issuer is tolerated, as servers compare both).
pub fn audience_names(audiences: &[&str], issuer: &str, token_endpoint: &str) -> bool {
    let bare = issuer.trim_end_matches('/');
    audiences.iter().any(|a| {
        *a == issuer || *a == token_endpoint || a.trim_end_matches('/') == bare && !bare.is_empty()
    })
}

/// A `jti` for the `n`-th assertion of an authorization whose random `state` is `seed`:
/// SHA-256 of both, 22 base64url characters (the seed itself is not revealed).
pub fn jti(seed: &str, n: u64) -> String {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    h.update(b"mcp-sansio jti\0");
    h.update(seed.as_bytes());
    h.update(n.to_be_bytes());
    B64URL.encode(&h.finalize()[..16])
}
