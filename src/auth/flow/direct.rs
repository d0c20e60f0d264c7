//! The grants without a user agent ([`Grant`] other than the authorization code grant): after
//! discovery (or from what is stored, on a refresh), one token request at the authorization
//! server (client credentials, JWT bearer), or a token exchange at the enterprise identity
//! provider followed by the JWT bearer grant. An error answer ends the authorization: it is
//! never retried and no other grant is tried.
use super::*;

use crate::auth::grant::{
    AssertionSource, ClientAuth, CLIENT_CREDENTIALS, ID_JAG_TOKEN_TYPE, ID_TOKEN_TYPE, JWT_BEARER,
    TOKEN_EXCHANGE,
};
use crate::auth::jwt::{audience_names, audiences, jti, unverified_claims, JwtError, MAX_JWT_LEN};
use crate::auth::scope::join_scopes;

use super::dpop_flow::TokenForm;

/// Where a grant without a user agent asks for tokens: the authorization server, its token
/// endpoint, the resource and the scopes.
#[derive(Clone, Debug)]
pub(super) struct Target {
    /// The authorization server's issuer.
    pub(super) issuer: String,
    /// Its token endpoint.
    pub(super) token_endpoint: String,
    /// The resource indicator (RFC 8707), verbatim from the protected-resource metadata.
    pub(super) resource: String,
    /// The scopes asked for.
    pub(super) scopes: Vec<String>,
    /// The algorithms of client assertions the server accepts, if it lists them.
    pub(super) signing_algs: Option<Vec<String>>,
}

#[derive(serde::Deserialize)]
struct RawExchange {
    access_token: Option<String>,
    issued_token_type: Option<String>,
}

#[derive(serde::Deserialize)]
struct RawTokenError {
    error: Option<String>,
}

fn assertion_error(e: JwtError) -> AuthError {
    AuthError::Assertion {
        reason: e.to_string(),
    }
}

impl Authorizer {
    /// Sets the random seed of the `jti` of the assertions this authorizer makes, for a grant
    /// run without a challenge (a refresh, [`Authorizer::start_refresh`]). A challenge's
    /// secrets reseed it too.
    pub fn reseed(&mut self, secrets: &AuthSecrets) {
        self.jti_seed = Some(secrets.state().to_owned());
    }

    /// The next `jti`.
    pub(super) fn next_jti(&mut self) -> Result<String, AuthError> {
        let seed = self.jti_seed.as_deref().ok_or(AuthError::Assertion {
            reason: "no random seed for the assertion's jti".into(),
        })?;
        let id = jti(seed, self.assertions);
        self.assertions += 1;
        Ok(id)
    }

    /// What discovery found, as the target of a grant without a user agent.
    pub(super) fn discovered_target(&self, found: &Discovered) -> Target {
        let scopes = select_scopes(
            &found.challenge.scopes,
            found.resource.scopes_supported.as_deref(),
            found.meta.scopes_supported.as_deref(),
        );
        Target {
            issuer: found.issuer.clone(),
            token_endpoint: found.meta.token_endpoint.clone(),
            resource: found.resource.resource.clone(),
            scopes,
            signing_algs: found
                .meta
                .token_endpoint_auth_signing_alg_values_supported
                .clone(),
        }
    }

    /// The target of a grant run again from what is stored for this server (its issuer, the
    /// token endpoint stored for it, the resource and scopes of its tokens).
    pub(super) fn stored_target(&self, issuer: &str) -> Result<Target, AuthError> {
        let bound = self
            .store
            .resources
            .get(&self.key)
            .filter(|b| b.issuer == issuer)
            .ok_or(AuthError::Misuse {
                reason: "no tokens for this server",
            })?;
        let token_endpoint = self
            .store
            .issuers
            .get(issuer)
            .and_then(|c| c.token_endpoint.clone())
            .ok_or(AuthError::Misuse {
                reason: "no token endpoint stored for this server's authorization server",
            })?;
        Ok(Target {
            issuer: issuer.to_owned(),
            token_endpoint,
            resource: bound.resource.clone(),
            scopes: bound.tokens.scopes.clone(),
            signing_algs: None,
        })
    }

    /// Starts the configured grant without a user agent at `target`.
    pub(super) fn start_grant(
        &mut self,
        now: Instant,
        budget: Budget,
        target: Target,
    ) -> Result<Progress, AuthError> {
        // Whether discovered or stored, the target must be the issuer the grant is pinned to.
        self.check_grant_issuer(&target.issuer)?;
        if self.attempts >= self.config.limits.max_attempts {
            return Err(AuthError::Budget {
                budget: AuthBudget::Attempts,
                limit: u64::from(self.config.limits.max_attempts),
            });
        }
        self.attempts += 1;
        self.last_scopes = target.scopes.clone();
        match self.config.grant.clone() {
            Grant::AuthorizationCode => Err(AuthError::Misuse {
                reason: "the authorization code grant needs the user agent",
            }),
            Grant::ClientCredentials { client, .. } => {
                let scope = join_scopes(&target.scopes);
                let mut grant = vec![
                    ("grant_type", CLIENT_CREDENTIALS),
                    ("resource", target.resource.as_str()),
                ];
                if !scope.is_empty() {
                    grant.push(("scope", scope.as_str()));
                }
                self.grant_request(now, budget, target.clone(), &client, &grant)
            }
            Grant::JwtBearer {
                client, assertion, ..
            } => {
                let token = self.supplied(assertion.as_ref(), "the workload token source")?;
                self.jwt_bearer(now, budget, target, &client, &token)
            }
            Grant::EnterpriseManaged { idp, .. } => {
                let subject = self.supplied(idp.id_token.as_ref(), "the ID token source")?;
                let scope = join_scopes(&target.scopes);
                let mut grant = vec![
                    ("grant_type", TOKEN_EXCHANGE),
                    ("requested_token_type", ID_JAG_TOKEN_TYPE),
                    ("audience", target.issuer.as_str()),
                    ("resource", target.resource.as_str()),
                    ("subject_token", subject.as_str()),
                    ("subject_token_type", ID_TOKEN_TYPE),
                ];
                if !scope.is_empty() {
                    grant.push(("scope", scope.as_str()));
                }
                let seconds = now.as_duration().as_secs();
                let id = self.next_jti()?;
                let (headers, body) = idp.client.token_request(&grant, &idp.issuer, seconds, id)?;
                let flight = self.send(
                    budget,
                    Purpose::TokenExchange,
                    Method::Post,
                    &idp.token_endpoint,
                    headers,
                    body,
                )?;
                Ok(Progress::Exchanging {
                    flight,
                    target: Box::new(target),
                })
            }
        }
    }

    /// A token from the embedder's source, bounded and header-safe.
    fn supplied(&self, source: &dyn AssertionSource, what: &str) -> Result<String, AuthError> {
        let token = source.token().map_err(|e| AuthError::Assertion {
            reason: format!("{what}: {}", crate::error::truncated(&e, 256)),
        })?;
        if token.len() > MAX_JWT_LEN || !crate::auth::token::is_header_safe(&token) {
            return Err(AuthError::Assertion {
                reason: format!("{what} gave a token that is not a compact JWT"),
            });
        }
        Ok(token)
    }

    /// The JWT bearer grant with `assertion`, sent only if its `aud` names the target.
    fn jwt_bearer(
        &mut self,
        now: Instant,
        budget: Budget,
        target: Target,
        client: &ClientAuth,
        assertion: &str,
    ) -> Result<Progress, AuthError> {
        let claims = unverified_claims(assertion).map_err(assertion_error)?;
        if !audience_names(&audiences(&claims), &target.issuer, &target.token_endpoint) {
            return Err(AuthError::AudienceMismatch {
                issuer: crate::error::truncated(&target.issuer, 256),
            });
        }
        let scope = join_scopes(&target.scopes);
        let mut grant = vec![
            ("grant_type", JWT_BEARER),
            ("assertion", assertion),
            ("resource", target.resource.as_str()),
        ];
        if !scope.is_empty() {
            grant.push(("scope", scope.as_str()));
        }
        self.grant_request(now, budget, target.clone(), client, &grant)
    }

    /// Sends a token request at the target's token endpoint with `grant`, the client
    /// authenticated as configured.
    fn grant_request(
        &mut self,
        now: Instant,
        budget: Budget,
        target: Target,
        client: &ClientAuth,
        grant: &[(&str, &str)],
    ) -> Result<Progress, AuthError> {
        if let (ClientAuth::PrivateKeyJwt { signer, .. }, Some(algs)) =
            (client, &target.signing_algs)
        {
            let alg = signer.algorithm().as_str();
            if !algs.iter().any(|a| a == alg) {
                return Err(AuthError::AlgorithmUnsupported { alg });
            }
        }
        let form = TokenForm::Client {
            client: client.clone(),
            grant: grant
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        };
        let flight = self.send_token(
            budget,
            Purpose::Token,
            &target.issuer,
            &target.token_endpoint,
            form,
            now,
        )?;
        Ok(Progress::Granting {
            flight,
            target: Box::new(target),
        })
    }

    /// The identity provider's answer to the token exchange: an identity assertion grant, then
    /// the JWT bearer grant with it at the authorization server.
    pub(super) fn on_exchange(
        &mut self,
        now: Instant,
        budget: Budget,
        target: Target,
        r: AuthResponse,
    ) -> Result<Progress, AuthError> {
        let purpose = Purpose::TokenExchange;
        if !(200..300).contains(&r.status) {
            if matches!(r.status, 400 | 401) {
                if let Ok(RawTokenError { error: Some(error) }) =
                    crate::auth::metadata::document(purpose, &r.body)
                {
                    return Err(AuthError::TokenError {
                        purpose,
                        status: r.status,
                        error: crate::error::truncated(&error, 128),
                    });
                }
            }
            return Err(AuthError::HttpStatus {
                purpose,
                status: r.status,
            });
        }
        let raw: RawExchange = crate::auth::metadata::document(purpose, &r.body)?;
        if raw.issued_token_type.as_deref() != Some(ID_JAG_TOKEN_TYPE) {
            return Err(AuthError::Document {
                purpose,
                reason: "`issued_token_type` is not an identity assertion grant".into(),
            });
        }
        let grant = raw.access_token.ok_or_else(|| AuthError::Document {
            purpose,
            reason: "`access_token` is missing".into(),
        })?;
        if grant.len() > MAX_JWT_LEN || !crate::auth::token::is_header_safe(&grant) {
            return Err(AuthError::UnsafeToken {
                what: "identity assertion grant",
            });
        }
        let Grant::EnterpriseManaged { client, .. } = self.config.grant.clone() else {
            return Err(AuthError::Misuse {
                reason: "a token exchange answer without enterprise-managed authorization",
            });
        };
        self.jwt_bearer(now, budget, target, &client, &grant)
    }

    /// The authorization server's answer to the grant: tokens bound to this server, or the
    /// error, reported without a retry.
    pub(super) fn on_grant(
        &mut self,
        now: Instant,
        target: Target,
        r: AuthResponse,
    ) -> Result<Progress, AuthError> {
        let tokens = match self.decode_tokens(
            Purpose::Token,
            r.status,
            &r.body,
            &target.scopes,
            None,
            ms(now),
        ) {
            Ok(t) => t,
            Err(e) => {
                self.forget_tokens_from(&target.issuer);
                return Err(e);
            }
        };
        let scopes = tokens.scopes.clone();
        let entry = self.store.issuers.entry(target.issuer.clone()).or_default();
        entry.token_endpoint = Some(target.token_endpoint);
        self.store.resources.insert(
            self.key.clone(),
            ResourceCredentials {
                issuer: target.issuer.clone(),
                resource: target.resource,
                tokens,
            },
        );
        self.events.push_back(AuthEvent::Authorized {
            issuer: target.issuer,
            scopes,
        });
        Ok(Progress::Authorized)
    }
}
