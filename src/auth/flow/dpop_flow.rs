//! DPoP in the [`Authorizer`] (RFC 9449): a proof on every token request when the
//! configuration names a key, one retry with the authorization server's nonce per token request
//! (§8), tokens of type `DPoP` kept bound, and the header fields of each MCP request.
use super::*;

use crate::auth::dpop::{proof, MAX_NONCE_LEN};

/// A token request as sent without its proof, to send once more with a nonce.
pub(super) struct Resend {
    /// What it is for.
    purpose: Purpose,
    /// Its URL.
    url: String,
    /// Its header fields, without `DPoP`.
    headers: Vec<(String, String)>,
    /// Its body.
    body: Vec<u8>,
    /// Whether it was already sent again with a nonce.
    retried: bool,
}

#[derive(serde::Deserialize)]
struct RawError {
    error: Option<String>,
}

/// Whether `purpose` is a request to the MCP server's authorization server's token endpoint
/// (the requests that get a proof).
fn at_token_endpoint(purpose: Purpose) -> bool {
    matches!(purpose, Purpose::Token | Purpose::Refresh)
}

/// The `DPoP-Nonce` of a response, when usable: visible ASCII, at most [`MAX_NONCE_LEN`].
fn nonce_of(r: &AuthResponse) -> Option<String> {
    let v = r
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("dpop-nonce"))
        .map(|(_, v)| v.as_slice())?;
    let ok =
        !v.is_empty() && v.len() <= MAX_NONCE_LEN && v.iter().all(|b| (0x21..=0x7e).contains(b));
    ok.then(|| String::from_utf8_lossy(v).into_owned())
}

impl Authorizer {
    /// `headers` with a DPoP proof added when the request goes to the token endpoint and a key
    /// is configured; the request is kept to be sent once more with a nonce.
    pub(super) fn with_dpop_proof(
        &mut self,
        purpose: Purpose,
        url: &str,
        mut headers: Vec<(String, String)>,
        body: &[u8],
    ) -> Result<Vec<(String, String)>, AuthError> {
        let Some(key) = self.config.dpop.clone() else {
            return Ok(headers);
        };
        if !at_token_endpoint(purpose) {
            return Ok(headers);
        }
        self.resend = Some(Resend {
            purpose,
            url: url.to_owned(),
            headers: headers.clone(),
            body: body.to_vec(),
            retried: false,
        });
        let jti = self.next_jti()?;
        let p = proof(
            key.0.as_ref(),
            "POST",
            url,
            self.now.as_duration().as_secs(),
            jti,
            None,
            self.dpop_nonce.as_deref(),
        )
        .map_err(|e| AuthError::Assertion {
            reason: e.to_string(),
        })?;
        headers.push(("DPoP".to_owned(), p));
        Ok(headers)
    }

    /// A token endpoint's answer asking for a DPoP nonce (`use_dpop_nonce` with `DPoP-Nonce`)
    /// sends the request again with it, once: `Ok(true)` when sent. A nonce given with any
    /// other answer is kept for the next proof.
    pub(super) fn dpop_nonce_retry(&mut self, r: &AuthResponse) -> Result<bool, AuthError> {
        let Some(purpose) = self.progress.awaiting().map(|(_, p)| p) else {
            return Ok(false);
        };
        if self.config.dpop.is_none() || !at_token_endpoint(purpose) {
            return Ok(false);
        }
        let Some(nonce) = nonce_of(r) else {
            return Ok(false);
        };
        self.dpop_nonce = Some(nonce);
        let asks = matches!(r.status, 400 | 401)
            && crate::auth::metadata::document::<RawError>(purpose, &r.body)
                .ok()
                .and_then(|e| e.error)
                .as_deref()
                == Some("use_dpop_nonce");
        let Some(resend) = self.resend.as_ref().filter(|x| asks && !x.retried) else {
            return Ok(false);
        };
        let (purpose, url, headers, body) = (
            resend.purpose,
            resend.url.clone(),
            resend.headers.clone(),
            resend.body.clone(),
        );
        let Some(budget) = self.progress.flight_mut().map(|f| f.budget) else {
            return Ok(false);
        };
        let flight = self.send(budget, purpose, HttpMethod::Post, &url, headers, body)?;
        if let Some(r) = self.resend.as_mut() {
            r.retried = true;
        }
        if let Some(f) = self.progress.flight_mut() {
            *f = flight;
        }
        Ok(true)
    }

    /// Decodes a token answer; with a DPoP key, a `DPoP` token type is accepted and kept bound.
    pub(super) fn decode_tokens(
        &self,
        purpose: Purpose,
        status: u16,
        body: &[u8],
        scopes: &[String],
        previous_refresh: Option<&str>,
        now_ms: u64,
    ) -> Result<TokenSet, AuthError> {
        decode_token_response_for(
            purpose,
            status,
            body,
            scopes,
            previous_refresh,
            now_ms,
            self.config.dpop.is_some(),
        )
    }

    /// The header fields that carry this server's token on an MCP request `method` `url` at
    /// `now`: `Authorization: Bearer …`, or for a token bound to the DPoP key
    /// `Authorization: DPoP …` and a fresh `DPoP` proof (with `ath` and the server's nonce, if
    /// it gave one: [`Authorizer::set_resource_nonce`]). `Ok(None)` without a token.
    pub fn authorization_headers(
        &mut self,
        method: &str,
        url: &str,
        now: Instant,
    ) -> Result<Option<Vec<(String, String)>>, AuthError> {
        let Some(tokens) = self.current_tokens() else {
            return Ok(None);
        };
        let token = tokens.access_token.clone();
        if !tokens.dpop {
            return Ok(Some(vec![(
                "Authorization".to_owned(),
                format!("Bearer {token}"),
            )]));
        }
        let key = self.config.dpop.clone().ok_or(AuthError::Misuse {
            reason: "a DPoP-bound token without a DPoP key",
        })?;
        let jti = self.next_jti()?;
        let p = proof(
            key.0.as_ref(),
            method,
            url,
            now.as_duration().as_secs(),
            jti,
            Some(&token),
            self.resource_nonce.as_deref(),
        )
        .map_err(|e| AuthError::Assertion {
            reason: e.to_string(),
        })?;
        Ok(Some(vec![
            ("Authorization".to_owned(), format!("DPoP {token}")),
            ("DPoP".to_owned(), p),
        ]))
    }

    /// The current token as a [`DpopBinding`](crate::auth::DpopBinding) for a
    /// [`Config::dpop`](crate::Config::dpop), when it is bound to the DPoP key: its proofs'
    /// `jti`s derive from `jti_seed` (give a fresh random one to each binding). `None` without a
    /// token or for a Bearer token ([`Authorizer::bearer`]).
    pub fn dpop_binding(&self, jti_seed: impl Into<String>) -> Option<crate::auth::DpopBinding> {
        let tokens = self.current_tokens()?;
        let key = self.config.dpop.clone()?;
        tokens
            .dpop
            .then(|| crate::auth::DpopBinding::new(tokens.access_token.clone(), key, jti_seed))
    }

    /// The MCP server gave a `DPoP-Nonce` (RFC 9449 §9): the next proofs carry it. A value that
    /// is not visible ASCII or longer than [`MAX_NONCE_LEN`] is ignored.
    pub fn set_resource_nonce(&mut self, nonce: &str) {
        let ok = !nonce.is_empty()
            && nonce.len() <= MAX_NONCE_LEN
            && nonce.bytes().all(|b| (0x21..=0x7e).contains(&b));
        if ok {
            self.resource_nonce = Some(nonce.to_owned());
        }
    }
}
