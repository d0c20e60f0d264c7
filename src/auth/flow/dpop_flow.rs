//! DPoP in the [`Authorizer`] (RFC 9449): a proof on every token request when the
//! configuration names a key, one retry with the authorization server's nonce per token request
//! (§8), tokens of type `DPoP` kept bound, and the header fields of each MCP request.
use super::*;

use crate::auth::dpop::{proof, MAX_NONCE_LEN};
use crate::auth::grant::ClientAuth;

/// How the header fields and body of a token request are made, so that a resend makes them
/// anew rather than repeating them.
#[derive(Clone)]
pub(super) enum TokenForm {
    /// Made once (nothing in them is single-use): sent again as they are.
    Fixed {
        /// The header fields, without `DPoP`.
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// Made by the client authentication with the grant's parameters: a `private_key_jwt`
    /// assertion is signed anew, with a new `jti` (RFC 7523 §3: a server may refuse a `jti`
    /// it has seen), each time the request is sent.
    Client {
        /// How the client authenticates.
        client: ClientAuth,
        /// The grant's form parameters.
        grant: Vec<(String, String)>,
    },
}

/// A token request as sent, to send once more with a nonce.
pub(super) struct Resend {
    /// What it is for.
    purpose: Purpose,
    /// The authorization server it goes to (its nonce is kept for it alone).
    issuer: String,
    /// Its URL.
    url: String,
    /// How its header fields and body are made.
    form: TokenForm,
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
    /// Sends a token request to the token endpoint `url` of the authorization server `issuer`
    /// within `budget`: its header fields and body made from `form` at `now`, with a DPoP proof
    /// when a key is configured (then the request is kept, to be made and sent once more with
    /// a nonce).
    pub(super) fn send_token(
        &mut self,
        budget: Budget,
        purpose: Purpose,
        issuer: &str,
        url: &str,
        form: TokenForm,
        now: Instant,
    ) -> Result<InFlight, AuthError> {
        let (headers, body) = match &form {
            TokenForm::Fixed { headers, body } => (headers.clone(), body.clone()),
            TokenForm::Client { client, grant } => {
                let pairs: Vec<(&str, &str)> = grant
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                let id = self.next_jti()?;
                client.token_request(&pairs, issuer, now.as_duration().as_secs(), id)?
            }
        };
        let headers = match self.config.dpop.clone() {
            Some(key) => {
                let jti = self.next_jti()?;
                let nonce = self
                    .dpop_nonce
                    .as_ref()
                    .filter(|(at, _)| at == issuer)
                    .map(|(_, n)| n.as_str());
                let p = proof(
                    key.0.as_ref(),
                    "POST",
                    url,
                    self.now.as_duration().as_secs(),
                    jti,
                    None,
                    nonce,
                )
                .map_err(|e| AuthError::Assertion {
                    reason: e.to_string(),
                })?;
                self.resend = Some(Resend {
                    purpose,
                    issuer: issuer.to_owned(),
                    url: url.to_owned(),
                    form,
                    retried: false,
                });
                let mut headers = headers;
                headers.push(("DPoP".to_owned(), p));
                headers
            }
            None => headers,
        };
        self.send(budget, purpose, Method::Post, url, headers, body)
    }

    /// A token endpoint's answer asking for a DPoP nonce (`use_dpop_nonce` with `DPoP-Nonce`)
    /// makes the request anew (a fresh client assertion and a fresh proof, with the nonce) and
    /// sends it, once: `Ok(true)` when sent. A nonce given with any other answer is kept for
    /// the next proof to the same authorization server; a nonce is never sent to another.
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
        let Some(issuer) = self.resend.as_ref().map(|x| x.issuer.clone()) else {
            return Ok(false);
        };
        self.dpop_nonce = Some((issuer.clone(), nonce));
        let asks = matches!(r.status, 400 | 401)
            && crate::auth::metadata::document::<RawError>(purpose, &r.body)
                .ok()
                .and_then(|e| e.error)
                .as_deref()
                == Some("use_dpop_nonce");
        let Some(resend) = self.resend.as_ref().filter(|x| asks && !x.retried) else {
            return Ok(false);
        };
        let (purpose, url, form) = (resend.purpose, resend.url.clone(), resend.form.clone());
        // The credentials are presented again: checked again against the grant's pin.
        self.check_grant_issuer(&issuer)?;
        let Some(budget) = self.progress.flight_mut().map(|f| f.budget) else {
            return Ok(false);
        };
        let flight = self.send_token(budget, purpose, &issuer, &url, form, self.now)?;
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
    /// is not visible ASCII or longer than 512 octets (`MAX_NONCE_LEN`) is ignored.
    pub fn set_resource_nonce(&mut self, nonce: &str) {
        let ok = !nonce.is_empty()
            && nonce.len() <= MAX_NONCE_LEN
            && nonce.bytes().all(|b| (0x21..=0x7e).contains(&b));
        if ok {
            self.resource_nonce = Some(nonce.to_owned());
        }
    }
}
