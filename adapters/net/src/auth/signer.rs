//! A `private_key_jwt` signer on `ring` ([`KeySigner`]).

use std::path::Path;

use base64::Engine as _;
use mcp_sansio::auth::{JwsAlgorithm, JwtSigner, SignError};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::PrivatePkcs8KeyDer;

/// Why a key could not be loaded. Never quotes key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The file could not be read.
    #[error("the key file could not be read: {0}")]
    Read(#[source] std::io::Error),
    /// Neither a PKCS#8 PEM private key nor a private JWK.
    #[error("not a usable private key: {0}")]
    Unusable(&'static str),
}

enum Key {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

/// A [`JwtSigner`] on `ring` for `private_key_jwt` client assertions: an ECDSA (P-256 →
/// `ES256`, P-384 → `ES384`) or RSA (`RS256`, or `PS256` on request) private key read from a
/// PEM file (`-----BEGIN PRIVATE KEY-----`, PKCS#8) or a JWK (RFC 7517, with its private
/// members). The key never leaves this type: `Debug` shows the algorithm and key ID only, and no
/// error quotes the file's content.
pub struct KeySigner {
    key: Key,
    alg: JwsAlgorithm,
    kid: Option<String>,
    rng: SystemRandom,
}

impl std::fmt::Debug for KeySigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySigner")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

const B64URL: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

fn ecdsa_alg(alg: JwsAlgorithm) -> &'static signature::EcdsaSigningAlgorithm {
    match alg {
        JwsAlgorithm::ES384 => &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
        _ => &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
    }
}

impl KeySigner {
    /// A signer from a key file: a JWK (the file starts with `{`) or a PKCS#8 PEM.
    pub fn from_file(path: &Path) -> Result<KeySigner, KeyError> {
        let bytes = std::fs::read(path).map_err(KeyError::Read)?;
        KeySigner::from_bytes(&bytes)
    }

    /// A signer from the bytes of a key file: a JWK (starts with `{`) or a PKCS#8 PEM.
    pub fn from_bytes(bytes: &[u8]) -> Result<KeySigner, KeyError> {
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
            KeySigner::from_jwk(bytes)
        } else {
            KeySigner::from_pem(bytes)
        }
    }

    /// A signer from a PKCS#8 PEM private key: P-256 signs `ES256`, P-384 `ES384`, RSA
    /// `RS256` ([`KeySigner::with_algorithm`] chooses `PS256`).
    pub fn from_pem(pem: &[u8]) -> Result<KeySigner, KeyError> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(pem)
            .map_err(|_| KeyError::Unusable("no PKCS#8 PEM private key (BEGIN PRIVATE KEY)"))?;
        KeySigner::from_pkcs8(der.secret_pkcs8_der())
    }

    /// A signer from a PKCS#8 DER private key.
    pub fn from_pkcs8(der: &[u8]) -> Result<KeySigner, KeyError> {
        let rng = SystemRandom::new();
        for alg in [JwsAlgorithm::ES256, JwsAlgorithm::ES384] {
            if let Ok(k) = EcdsaKeyPair::from_pkcs8(ecdsa_alg(alg), der, &rng) {
                return Ok(KeySigner {
                    key: Key::Ecdsa(k),
                    alg,
                    kid: None,
                    rng,
                });
            }
        }
        let k = RsaKeyPair::from_pkcs8(der)
            .map_err(|_| KeyError::Unusable("a PKCS#8 key that is neither P-256, P-384 nor RSA"))?;
        Ok(KeySigner {
            key: Key::Rsa(k),
            alg: JwsAlgorithm::RS256,
            kid: None,
            rng,
        })
    }

    /// A signer from a private JWK: `kty` `EC` (`crv` P-256 or P-384, with `d`, `x`, `y`) or
    /// `RSA` (with `n`, `e`, `d`, `p`, `q`, `dp`, `dq`, `qi`); its `kid` goes in the header, its
    /// `alg` (if any) must be one the key can sign.
    pub fn from_jwk(json: &[u8]) -> Result<KeySigner, KeyError> {
        let jwk: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(json).map_err(|_| KeyError::Unusable("not a JSON object"))?;
        let text = |n: &str| jwk.get(n).and_then(|v| v.as_str());
        let bytes = |n: &'static str| -> Result<Vec<u8>, KeyError> {
            let v = text(n).ok_or(KeyError::Unusable("a required JWK member is missing"))?;
            B64URL
                .decode(v)
                .map_err(|_| KeyError::Unusable("a JWK member is not base64url"))
        };
        let rng = SystemRandom::new();
        let kid = text("kid").map(str::to_owned);
        let mut signer = match text("kty") {
            Some("EC") => {
                let alg = match text("crv") {
                    Some("P-256") => JwsAlgorithm::ES256,
                    Some("P-384") => JwsAlgorithm::ES384,
                    _ => {
                        return Err(KeyError::Unusable(
                            "an EC JWK on a curve other than P-256 or P-384",
                        ))
                    }
                };
                let (d, x, y) = (bytes("d")?, bytes("x")?, bytes("y")?);
                let mut public = Vec::with_capacity(1 + x.len() + y.len());
                public.push(4);
                public.extend_from_slice(&x);
                public.extend_from_slice(&y);
                let k = EcdsaKeyPair::from_private_key_and_public_key(
                    ecdsa_alg(alg),
                    &d,
                    &public,
                    &rng,
                )
                .map_err(|_| {
                    KeyError::Unusable("the EC JWK's private and public parts do not match")
                })?;
                KeySigner {
                    key: Key::Ecdsa(k),
                    alg,
                    kid,
                    rng,
                }
            }
            Some("RSA") => {
                let (n, e, d) = (bytes("n")?, bytes("e")?, bytes("d")?);
                let (p, q) = (bytes("p")?, bytes("q")?);
                let (dp, dq, qi) = (bytes("dp")?, bytes("dq")?, bytes("qi")?);
                let components = ring::rsa::KeyPairComponents {
                    public_key: ring::rsa::PublicKeyComponents {
                        n: &n[..],
                        e: &e[..],
                    },
                    d: &d,
                    p: &p,
                    q: &q,
                    dP: &dp,
                    dQ: &dq,
                    qInv: &qi,
                };
                let k = RsaKeyPair::from_components(&components)
                    .map_err(|_| KeyError::Unusable("the RSA JWK is not a consistent key"))?;
                KeySigner {
                    key: Key::Rsa(k),
                    alg: JwsAlgorithm::RS256,
                    kid,
                    rng,
                }
            }
            _ => return Err(KeyError::Unusable("a JWK whose kty is neither EC nor RSA")),
        };
        if let Some(alg) = text("alg") {
            let alg = JwsAlgorithm::from_name(alg)
                .ok_or(KeyError::Unusable("the JWK names an unsupported alg"))?;
            signer = signer.with_algorithm(alg)?;
        }
        Ok(signer)
    }

    /// Signs with `alg` instead: `PS256` or `RS256` for an RSA key; an ECDSA key signs its own
    /// curve's algorithm only.
    pub fn with_algorithm(mut self, alg: JwsAlgorithm) -> Result<KeySigner, KeyError> {
        let ok = match self.key {
            Key::Rsa(_) => matches!(alg, JwsAlgorithm::RS256 | JwsAlgorithm::PS256),
            Key::Ecdsa(_) => alg == self.alg,
        };
        if !ok {
            return Err(KeyError::Unusable(
                "the key cannot sign with that algorithm",
            ));
        }
        self.alg = alg;
        Ok(self)
    }

    /// Puts `kid` in the header of the assertions.
    #[must_use]
    pub fn with_key_id(mut self, kid: impl Into<String>) -> KeySigner {
        self.kid = Some(kid.into());
        self
    }

    /// A new P-256 key signing `ES256`, from the system's random source: a DPoP key of one
    /// client (RFC 9449), never written anywhere.
    pub fn generate_es256() -> Result<KeySigner, KeyError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(ecdsa_alg(JwsAlgorithm::ES256), &rng)
            .map_err(|_| KeyError::Unusable("no key could be generated"))?;
        KeySigner::from_pkcs8(pkcs8.as_ref())
    }

    /// The public key's bytes: for ECDSA the uncompressed point, for RSA the DER
    /// `RSAPublicKey`. What an authorization server registers to verify the assertions.
    pub fn public_key(&self) -> Vec<u8> {
        use ring::signature::KeyPair as _;
        match &self.key {
            Key::Ecdsa(k) => k.public_key().as_ref().to_vec(),
            Key::Rsa(k) => k.public_key().as_ref().to_vec(),
        }
    }
}

impl JwtSigner for KeySigner {
    fn algorithm(&self) -> JwsAlgorithm {
        self.alg
    }

    fn key_id(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    fn public_jwk(&self) -> Option<serde_json::Value> {
        use ring::signature::KeyPair as _;
        match &self.key {
            Key::Ecdsa(k) => {
                let point = k.public_key().as_ref();
                let n = (point.len().checked_sub(1)?) / 2;
                let (x, y) = point.get(1..)?.split_at(n);
                let crv = match self.alg {
                    JwsAlgorithm::ES384 => "P-384",
                    _ => "P-256",
                };
                Some(serde_json::json!({
                    "kty": "EC", "crv": crv, "x": B64URL.encode(x), "y": B64URL.encode(y),
                }))
            }
            Key::Rsa(k) => {
                let c: ring::rsa::PublicKeyComponents<Vec<u8>> = k.public().into();
                Some(serde_json::json!({
                    "kty": "RSA", "n": B64URL.encode(&c.n), "e": B64URL.encode(&c.e),
                }))
            }
        }
    }

    fn sign(&self, signing_input: &[u8]) -> Result<Vec<u8>, SignError> {
        let failed = |_| SignError {
            reason: "ring could not sign".into(),
        };
        match &self.key {
            Key::Ecdsa(k) => Ok(k
                .sign(&self.rng, signing_input)
                .map_err(failed)?
                .as_ref()
                .to_vec()),
            Key::Rsa(k) => {
                let padding: &dyn signature::RsaEncoding = match self.alg {
                    JwsAlgorithm::PS256 => &signature::RSA_PSS_SHA256,
                    _ => &signature::RSA_PKCS1_SHA256,
                };
                let mut out = vec![0u8; k.public().modulus_len()];
                k.sign(padding, &self.rng, signing_input, &mut out)
                    .map_err(failed)?;
                Ok(out)
            }
        }
    }
}
