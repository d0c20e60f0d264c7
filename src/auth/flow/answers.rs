//! The answer handlers of the [`Authorizer`]: what each kind of answer from the authorization
//! server or the resource's metadata endpoint moves the authorization to. Each takes the step
//! that awaited the answer and gives the next one back.
use super::*;

impl Authorizer {
    /// The answer to the request `step` awaits.
    pub(super) fn on_response(
        &mut self,
        now: Instant,
        step: Progress,
        r: AuthResponse,
    ) -> Result<Progress, AuthError> {
        let Some((_, purpose)) = step.awaiting() else {
            return Err(AuthError::Misuse {
                reason: "no request is awaited",
            });
        };
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
        let found = (200..300).contains(&r.status);
        match step {
            Progress::ResourceMetadata {
                flight,
                challenge,
                mut candidates,
            } if !found => {
                candidates.last_status = Some(r.status);
                let flight = self.fetch_candidate(flight.budget, purpose, &mut candidates)?;
                Ok(Progress::ResourceMetadata {
                    flight,
                    challenge,
                    candidates,
                })
            }
            Progress::ResourceMetadata {
                flight,
                challenge,
                candidates,
            } => self.on_resource_metadata(flight.budget, challenge, &candidates, &r.body),
            Progress::ServerMetadata {
                flight,
                challenge,
                resource,
                issuer,
                mut candidates,
            } if !found => {
                candidates.last_status = Some(r.status);
                let flight = self.fetch_candidate(flight.budget, purpose, &mut candidates)?;
                Ok(Progress::ServerMetadata {
                    flight,
                    challenge,
                    resource,
                    issuer,
                    candidates,
                })
            }
            Progress::ServerMetadata {
                flight,
                challenge,
                resource,
                issuer,
                ..
            } => {
                let meta = decode_server_metadata_for(
                    &r.body,
                    &issuer,
                    self.config.policy,
                    self.config.grant.needs_user_agent(),
                )?;
                let found = Discovered {
                    challenge,
                    resource: *resource,
                    issuer,
                    meta,
                };
                self.on_server_metadata(now, flight.budget, Box::new(found))
            }
            Progress::Registering { found, .. } => self.on_registration(now, found, r),
            Progress::Redeeming { pending, .. } => self.on_token(now, *pending, r),
            Progress::Refreshing { flight, refresh } => {
                self.on_refresh(now, flight.budget, refresh, r)
            }
            Progress::Exchanging { flight, target } => {
                self.on_exchange(now, flight.budget, *target, r)
            }
            Progress::Granting { target, .. } => self.on_grant(now, *target, r),
            Progress::Idle
            | Progress::AwaitingCode { .. }
            | Progress::Authorized
            | Progress::Failed => Err(AuthError::Misuse {
                reason: "no request is awaited",
            }),
        }
    }

    fn on_resource_metadata(
        &mut self,
        budget: Budget,
        challenge: Challenge,
        candidates: &Candidates,
        body: &[u8],
    ) -> Result<Progress, AuthError> {
        // The identifier the document must name depends on where it was fetched (RFC 9728
        // §3.3): the server's URL, or its origin at the root well-known URL.
        let root = format!(
            "{}/.well-known/oauth-protected-resource",
            self.server.origin()
        );
        let at_root = candidates.last_tried().is_some_and(|u| *u == root);
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
        // Before any request to it: the grant's credentials go to their pinned issuer only.
        self.check_grant_issuer(&issuer)?;
        let issuer_endpoint = check_issuer(self.config.policy, &issuer)?;
        let mut candidates = Candidates::new(server_metadata_candidates(&issuer_endpoint));
        let flight = self.fetch_candidate(budget, Purpose::ServerMetadata, &mut candidates)?;
        Ok(Progress::ServerMetadata {
            flight,
            challenge,
            resource: Box::new(prm),
            issuer,
            candidates,
        })
    }

    fn on_server_metadata(
        &mut self,
        now: Instant,
        budget: Budget,
        found: Box<Discovered>,
    ) -> Result<Progress, AuthError> {
        // A 401 with a refresh token from this same server: refresh once before the user agent.
        if found.challenge.kind == ChallengeKind::Unauthorized
            && self.refresh == RefreshAllowance::Available
        {
            let endpoint = found.meta.token_endpoint.clone();
            if let Some(flight) = self.refresh_request(budget, &found.issuer, Some(&endpoint))? {
                return Ok(Progress::Refreshing {
                    flight,
                    refresh: Refresh::Challenge(found),
                });
            }
        }
        if !self.config.grant.needs_user_agent() {
            let target = self.discovered_target(&found);
            return self.start_grant(now, budget, target);
        }
        self.identify_client(now, budget, found)
    }

    fn on_registration(
        &mut self,
        now: Instant,
        found: Box<Discovered>,
        r: AuthResponse,
    ) -> Result<Progress, AuthError> {
        if !(200..300).contains(&r.status) {
            return Err(AuthError::HttpStatus {
                purpose: Purpose::Registration,
                status: r.status,
            });
        }
        let requested = registration_auth_method(&found.meta)?;
        let client = decode_registration(&r.body, &found.meta, requested)?;
        let redirect_uri = self.redirect_uri_for(&found.issuer, found.meta.iss_parameter_supported);
        let entry = self.store.issuers.entry(found.issuer.clone()).or_default();
        entry.client = Some(client);
        entry.redirect_uri = Some(redirect_uri);
        self.authorize(now, *found)
    }

    fn on_token(
        &mut self,
        now: Instant,
        pending: PendingAuthorization,
        r: AuthResponse,
    ) -> Result<Progress, AuthError> {
        let tokens = self
            .decode_tokens(
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
        self.events.push_back(AuthEvent::Authorized {
            issuer: pending.issuer,
            scopes,
        });
        Ok(Progress::Authorized)
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
    pub(super) fn forget_tokens_from(&mut self, issuer: &str) {
        if self
            .store
            .resources
            .get(&self.key)
            .is_some_and(|r| r.issuer == issuer)
        {
            self.store.resources.remove(&self.key);
        }
    }

    fn on_refresh(
        &mut self,
        now: Instant,
        budget: Budget,
        refresh: Refresh,
        r: AuthResponse,
    ) -> Result<Progress, AuthError> {
        let issuer = refresh.issuer().to_owned();
        let previous = self
            .store
            .resources
            .get(&self.key)
            .filter(|b| b.issuer == issuer)
            .map(|b| b.tokens.clone())
            .ok_or(AuthError::Misuse {
                reason: "no tokens of this server to refresh",
            })?;
        match self.decode_tokens(
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
                if let Refresh::Challenge(found) = &refresh {
                    self.store
                        .issuers
                        .entry(issuer.clone())
                        .or_default()
                        .token_endpoint = Some(found.meta.token_endpoint.clone());
                }
                self.refresh = RefreshAllowance::Spent;
                self.events
                    .push_back(AuthEvent::Authorized { issuer, scopes });
                Ok(Progress::Authorized)
            }
            Err(e @ AuthError::TokenError { .. }) => {
                // The refresh token (or the client) is no longer good: forget it; within a
                // challenge, authorize anew.
                self.forget_tokens_from(&issuer);
                self.forget_rejected_client(&issuer, &e);
                match refresh {
                    Refresh::Challenge(found) => self.identify_client(now, budget, found),
                    Refresh::Asked { .. } => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }
}
