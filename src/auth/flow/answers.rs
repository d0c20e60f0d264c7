//! The answer handlers of the [`Authorizer`]: what each kind of answer from the authorization
//! server or the resource's metadata endpoint moves the state machine to.
use super::*;

impl Authorizer {
    pub(super) fn on_response(
        &mut self,
        now: Instant,
        purpose: Purpose,
        r: AuthResponse,
    ) -> Result<(), AuthError> {
        if (300..400).contains(&r.status) {
            return Err(AuthError::Redirect {
                purpose,
                status: r.status,
            });
        }
        if r.body.len() > MAX_BODY_BYTES {
            return Err(AuthError::Budget {
                budget: AuthBudget::BodyBytes,
                limit: MAX_BODY_BYTES as u64,
            });
        }
        match purpose {
            Purpose::ResourceMetadata | Purpose::ServerMetadata
                if !(200..300).contains(&r.status) =>
            {
                if let Some(run) = self.run.as_mut() {
                    run.last_status = Some(r.status);
                }
                self.fetch_next_candidate(now, purpose)
            }
            Purpose::ResourceMetadata => self.on_resource_metadata(now, &r.body),
            Purpose::ServerMetadata => self.on_server_metadata(now, &r.body),
            Purpose::Registration => self.on_registration(now, r),
            Purpose::Token => self.on_token(now, r),
            Purpose::Refresh => self.on_refresh(now, r),
        }
    }

    fn on_resource_metadata(&mut self, now: Instant, body: &[u8]) -> Result<(), AuthError> {
        // The identifier the document must name depends on where it was fetched (RFC 9728
        // §3.3): the server's URL, or its origin at the root well-known URL.
        let root = format!(
            "{}/.well-known/oauth-protected-resource",
            self.server.origin()
        );
        let at_root = self
            .run
            .as_ref()
            .and_then(|r| r.next.checked_sub(1).and_then(|i| r.candidates.get(i)))
            .is_some_and(|u| *u == root);
        let prm = decode_resource_metadata(
            body,
            &self.server,
            &self.config.server_url,
            self.config.policy,
            at_root,
        )?;
        let issuer = prm
            .authorization_servers
            .first()
            .cloned()
            .ok_or(AuthError::NoAuthorizationServer)?;
        let issuer_endpoint = check_issuer(self.config.policy, &issuer)?;
        let run = self.run_mut()?;
        run.candidates = server_metadata_candidates(&issuer_endpoint);
        run.next = 0;
        run.last_status = None;
        run.resource = Some(prm);
        run.issuer = Some(issuer);
        self.fetch_next_candidate(now, Purpose::ServerMetadata)
    }

    fn on_server_metadata(&mut self, now: Instant, body: &[u8]) -> Result<(), AuthError> {
        let issuer = self.run_mut()?.issuer.clone().unwrap_or_default();
        let meta = decode_server_metadata(body, &issuer, self.config.policy)?;
        let run = self.run_mut()?;
        run.meta = Some(meta);
        let status = run.status;
        // A 401 with a refresh token from this same server: refresh once before the user agent.
        if status == 401 && !self.refreshed && self.refresh_request(now, &issuer)? {
            return Ok(());
        }
        self.identify_client(now)
    }

    fn on_registration(&mut self, now: Instant, r: AuthResponse) -> Result<(), AuthError> {
        if !(200..300).contains(&r.status) {
            return Err(AuthError::HttpStatus {
                purpose: Purpose::Registration,
                status: r.status,
            });
        }
        let run = self.run_mut()?;
        let issuer = run.issuer.clone().unwrap_or_default();
        let meta = run.meta.clone().ok_or(AuthError::Misuse {
            reason: "no authorization-server metadata",
        })?;
        let requested = registration_auth_method(&meta)?;
        let client = decode_registration(&r.body, &meta, requested)?;
        let redirect_uri = self.redirect_uri_for(&issuer, meta.iss_parameter_supported);
        let entry = self.store.issuers.entry(issuer).or_default();
        entry.client = Some(client);
        entry.redirect_uri = Some(redirect_uri);
        self.authorize(now)
    }

    fn on_token(&mut self, now: Instant, r: AuthResponse) -> Result<(), AuthError> {
        let pending = self.pending_token.take().ok_or(AuthError::Misuse {
            reason: "no token request in progress",
        })?;
        let tokens = decode_token_response(
            Purpose::Token,
            r.status,
            &r.body,
            &pending.scopes,
            None,
            ms(now),
        )
        .inspect_err(|e| self.forget_rejected_client(&pending.issuer, e))?;
        let scopes = tokens.scopes.clone();
        let entry = self
            .store
            .issuers
            .entry(pending.issuer.clone())
            .or_default();
        entry.client = Some(pending.client);
        entry.token_endpoint = Some(pending.token_endpoint);
        // Bound to this server: sent to it only, refreshed for it only.
        let resource = pending
            .resource
            .unwrap_or_else(|| self.config.server_url.clone());
        self.store.resources.insert(
            self.key.clone(),
            ResourceCredentials {
                issuer: pending.issuer.clone(),
                resource,
                tokens,
            },
        );
        self.run = None;
        self.events.push_back(AuthEvent::Authorized {
            issuer: pending.issuer,
            scopes,
        });
        Ok(())
    }

    /// An `invalid_client` answer means the stored registration is no longer good: forget it,
    /// so that the next authorization identifies the client anew.
    fn forget_rejected_client(&mut self, issuer: &str, e: &AuthError) {
        if let AuthError::TokenError { error, .. } = e {
            if error == "invalid_client" {
                if let Some(entry) = self.store.issuers.get_mut(issuer) {
                    entry.client = None;
                }
                self.forget_tokens_from(issuer);
            }
        }
    }

    /// Forgets this server's tokens if `issuer` issued them.
    fn forget_tokens_from(&mut self, issuer: &str) {
        if self
            .store
            .resources
            .get(&self.key)
            .is_some_and(|r| r.issuer == issuer)
        {
            self.store.resources.remove(&self.key);
        }
    }

    fn on_refresh(&mut self, now: Instant, r: AuthResponse) -> Result<(), AuthError> {
        let run = self.run_mut()?;
        let issuer = run.issuer.clone().unwrap_or_default();
        let in_challenge = run.meta.is_some();
        let meta_endpoint = run.meta.as_ref().map(|m| m.token_endpoint.clone());
        let previous = self
            .store
            .resources
            .get(&self.key)
            .filter(|b| b.issuer == issuer)
            .map(|b| b.tokens.clone())
            .ok_or(AuthError::Misuse {
                reason: "no tokens of this server to refresh",
            })?;
        match decode_token_response(
            Purpose::Refresh,
            r.status,
            &r.body,
            &previous.scopes,
            previous.refresh_token.as_deref(),
            ms(now),
        ) {
            Ok(tokens) => {
                let scopes = tokens.scopes.clone();
                if let Some(bound) = self.store.resources.get_mut(&self.key) {
                    bound.tokens = tokens;
                }
                if let Some(t) = meta_endpoint {
                    self.store
                        .issuers
                        .entry(issuer.clone())
                        .or_default()
                        .token_endpoint = Some(t);
                }
                self.refreshed = true;
                self.run = None;
                self.events
                    .push_back(AuthEvent::Authorized { issuer, scopes });
                Ok(())
            }
            Err(e @ AuthError::TokenError { .. }) => {
                // The refresh token (or the client) is no longer good: forget it; within a
                // challenge, authorize anew.
                self.forget_tokens_from(&issuer);
                self.forget_rejected_client(&issuer, &e);
                if in_challenge {
                    self.identify_client(now)
                } else {
                    Err(e)
                }
            }
            Err(e) => Err(e),
        }
    }
}
