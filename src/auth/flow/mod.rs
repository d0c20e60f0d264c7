//! The authorization state machine: [`Authorizer`].
use crate::prelude::*;

use alloc::collections::{BTreeMap, VecDeque};
use core::time::Duration;

use serde::{Deserialize, Serialize};

use crate::auth::challenge::{parse_challenges, BearerChallenge, BearerErrorCode};
use crate::auth::client::{
    decode_registration, registration_auth_method, ClientCredentials, ClientSettings, IssuerPin,
    TokenAuthMethod,
};
use crate::auth::error::{AuthBudget, AuthError, Purpose};
use crate::auth::grant::Grant;
use crate::auth::metadata::{
    check_issuer, decode_resource_metadata, decode_server_metadata_for, resource_designates,
    resource_metadata_candidates, server_metadata_candidates, ResourceMetadata, ServerMetadata,
    UrlPolicy, MAX_BODY_BYTES,
};
use crate::auth::scope::{select_scopes, step_up_scopes};
use crate::auth::token::{
    authorization_url, decode_token_response_for, parse_callback, token_request, AuthSecrets,
    PendingAuthorization, TokenSet,
};
use crate::auth::wire::{AuthExchange, AuthRequestId, AuthResponse};
use crate::endpoint::Endpoint;
use crate::error::TransportError;
use crate::time::Instant;
use crate::wire::{Method, Request};

mod answers;
mod config;
mod direct;
mod dpop_flow;
mod event;
mod progress;
mod retry;
mod store;

pub use config::{AuthConfig, AuthLimits, DpopKey};
pub use event::AuthEvent;
pub use retry::{
    calls_for_authorization, AfterRefusal, Attempt, AuthRetry, UserAgent, MAX_STEP_UPS,
};
pub use store::{resource_key, token_key, CredentialStore, IssuerCredentials, ResourceCredentials};

use progress::{
    Budget, Candidates, Challenge, ChallengeKind, Discovered, InFlight, Progress, Refresh,
    RefreshAllowance,
};

/// The sans-IO OAuth 2.1 client: see the [module docs](crate::auth).
pub struct Authorizer {
    config: AuthConfig,
    server: Endpoint,
    /// [`Authorizer::token_key`] of the server and the configured grant: where its tokens are stored.
    key: String,
    store: CredentialStore,
    /// Where the authorization stands (moved by [`Authorizer::enter`] only).
    progress: Progress,
    outbox: VecDeque<AuthExchange>,
    events: VecDeque<AuthEvent>,
    next_id: u64,
    /// User-agent round trips since the server last accepted a token.
    attempts: u32,
    refresh: RefreshAllowance,
    /// The scopes asked for last (the base of a step-up).
    last_scopes: Vec<String>,
    /// The random seed of the `jti` of assertions (from the last challenge's secrets or
    /// [`Authorizer::reseed`]).
    jti_seed: Option<String>,
    /// Assertions made so far (the `jti` counter).
    assertions: u64,
    /// The latest time given (the `iat` of DPoP proofs).
    now: Instant,
    /// The last DPoP nonce an authorization server gave, with its issuer: sent to it alone.
    dpop_nonce: Option<(String, String)>,
    /// The MCP server's DPoP nonce, once it gave one.
    resource_nonce: Option<String>,
    /// The token request in flight, to send again once with a DPoP nonce.
    resend: Option<dpop_flow::Resend>,
}

impl core::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &self.config.server_url)
            .field(
                "issuer",
                &self.store.resources.get(&self.key).map(|r| &r.issuer),
            )
            .field("busy", &self.is_busy())
            .field("progress", &self.progress.name())
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

fn ms(i: Instant) -> u64 {
    u64::try_from(i.as_duration().as_millis()).unwrap_or(u64::MAX)
}

fn after(now: Instant, d: Duration) -> Instant {
    Instant::from_duration(now.as_duration().saturating_add(d))
}

/// `base` with a path segment derived from `issuer` (SHA-256, 12 base64url characters) appended
/// to its path.
fn per_issuer_redirect(base: &str, issuer: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(issuer.as_bytes());
    let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..9]);
    let (path, query) = match base.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (base, None),
    };
    let sep = if path.ends_with('/') { "" } else { "/" };
    match query {
        Some(q) => format!("{path}{sep}{tag}?{q}"),
        None => format!("{path}{sep}{tag}"),
    }
}

/// The path of a redirect URI (without its query); empty when it does not parse.
fn redirect_path(uri: &str) -> String {
    Endpoint::parse(uri)
        .map(|e| e.target().split('?').next().unwrap_or("").to_owned())
        .unwrap_or_default()
}

impl Authorizer {
    /// An authorizer for the MCP server at `config.server_url`, with no stored credentials.
    pub fn new(config: AuthConfig) -> Result<Self, AuthError> {
        let server =
            Endpoint::parse(&config.server_url).map_err(AuthError::url("MCP server URL"))?;
        config.client.validate()?;
        config.grant.check()?;
        if let Some(IssuerPin::Exactly(issuer)) = config.grant.issuer_pin() {
            check_issuer(config.policy, issuer)?;
        }
        if let Grant::EnterpriseManaged { idp, .. } = &config.grant {
            config
                .policy
                .check("identity provider token endpoint", &idp.token_endpoint)?;
        }
        if config.limits.max_exchanges == 0 || config.limits.max_attempts == 0 {
            return Err(AuthError::Config {
                what: "exchange and attempt limits must be at least 1",
            });
        }
        let key = token_key(&server, &config.grant_identity());
        Ok(Authorizer {
            config,
            server,
            key,
            store: CredentialStore::default(),
            progress: Progress::Idle,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            next_id: 0,
            attempts: 0,
            refresh: RefreshAllowance::Available,
            last_scopes: Vec::new(),
            jti_seed: None,
            assertions: 0,
            now: Instant::ZERO,
            dpop_nonce: None,
            resource_nonce: None,
            resend: None,
        })
    }

    /// Starts from credentials saved earlier (a store of an earlier format keeps its client
    /// registrations only: see [`CredentialStore`]).
    pub fn with_store(mut self, mut store: CredentialStore) -> Self {
        if store.version < CredentialStore::FORMAT_VERSION {
            store.resources.clear();
        }
        store.version = CredentialStore::FORMAT_VERSION;
        self.store = store;
        self
    }

    /// The credentials, to save.
    pub fn store(&self) -> &CredentialStore {
        &self.store
    }

    /// Where this authorizer's tokens live in its [`CredentialStore`]: the
    /// [`store_key`](crate::store_key) of the token use ([`StoreUse::Tokens`](crate::StoreUse)),
    /// its server and its configured grant ([`AuthConfig::grant_identity`]).
    pub fn token_key(&self) -> &str {
        &self.key
    }

    /// Who obtains this authorizer's tokens ([`AuthConfig::grant_identity`]): what an
    /// authorizing session puts in [`Config::grant`](crate::Config::grant).
    pub fn grant_identity(&self) -> crate::GrantIdentity {
        self.config.grant_identity()
    }

    /// The access token to send to the MCP server (`Authorization: Bearer …`), if any: only a
    /// token issued for this server (stored under its [`Authorizer::token_key`]), never one of another
    /// server or grant in the same store, and never one bound to a DPoP key (those go with
    /// [`Authorizer::authorization_headers`]).
    pub fn bearer(&self) -> Option<&str> {
        let tokens = self.current_tokens()?;
        // A token bound to a DPoP key is never sent as a Bearer token.
        (!tokens.dpop).then_some(tokens.access_token.as_str())
    }

    /// Whether the current access token has expired at `now` (false when it has no expiry).
    pub fn token_expired(&self, now: Instant) -> bool {
        self.current_tokens()
            .and_then(|t| t.expires_at_ms)
            .is_some_and(|at| ms(now) >= at)
    }

    fn current_tokens(&self) -> Option<&TokenSet> {
        Some(&self.store.resources.get(&self.key)?.tokens)
    }

    /// Whether an authorization is in progress (network part or waiting for the callback).
    pub fn is_busy(&self) -> bool {
        self.progress.is_busy()
    }

    /// The MCP server accepted a request with the current token: the attempt count starts over.
    pub fn accepted(&mut self) {
        self.attempts = 0;
        self.refresh = RefreshAllowance::Available;
    }

    /// Abandons any authorization in progress (nothing is reported).
    pub fn cancel(&mut self) {
        self.outbox.clear();
        self.enter(Ok(Progress::Idle));
    }

    /// The MCP server answered `status` with these `WWW-Authenticate` values: authorize.
    ///
    /// A 401 rediscovers the protected resource and its authorization server, refreshes the
    /// token when it can (once until [`Authorizer::accepted`]), and otherwise authorizes with
    /// the challenge's scope. A 403 with `error="insufficient_scope"` steps up with the union of
    /// scopes. Any other status, a 403 without `insufficient_scope`, or a challenge that is not
    /// Bearer is refused ([`AuthError::NotAuthorizable`]). `secrets` are used if the user agent
    /// is needed. Errors here are returned and nothing is sent; later ones come as
    /// [`AuthEvent::Failed`].
    pub fn handle_challenge(
        &mut self,
        now: Instant,
        status: u16,
        www_authenticate: &[&[u8]],
        secrets: AuthSecrets,
    ) -> Result<(), AuthError> {
        if self.is_busy() {
            return Err(AuthError::Misuse {
                reason: "an authorization is already in progress",
            });
        }
        self.now = self.now.max(now);
        let challenges = parse_challenges(www_authenticate.iter().copied())?;
        // With a DPoP key, a server that only accepts DPoP challenges with the `DPoP` scheme
        // (RFC 9449 §7.1), whose parameters are read as a Bearer challenge's.
        let bearer = challenges
            .iter()
            .find(|c| c.is_scheme("bearer"))
            .or_else(|| {
                self.config
                    .dpop
                    .as_ref()
                    .and_then(|_| challenges.iter().find(|c| c.is_scheme("dpop")))
            });
        if bearer.is_none() && !challenges.is_empty() {
            return Err(AuthError::NotAuthorizable {
                status,
                reason: "no Bearer challenge",
            });
        }
        let bearer = bearer
            .map(BearerChallenge::from_challenge)
            .unwrap_or_default();
        let kind = match status {
            401 => ChallengeKind::Unauthorized,
            403 if bearer.error == Some(BearerErrorCode::InsufficientScope) => {
                ChallengeKind::InsufficientScope
            }
            403 => {
                return Err(AuthError::NotAuthorizable {
                    status,
                    reason: "a 403 without insufficient_scope",
                })
            }
            _ => {
                return Err(AuthError::NotAuthorizable {
                    status,
                    reason: "only 401 and 403 call for authorization",
                })
            }
        };
        if self.attempts >= self.config.limits.max_attempts {
            return Err(AuthError::Budget {
                budget: AuthBudget::Attempts,
                limit: u64::from(self.config.limits.max_attempts),
            });
        }
        if let Some(url) = &bearer.resource_metadata {
            self.config.policy.check("resource_metadata URL", url)?;
        }
        self.jti_seed = Some(secrets.state().to_owned());
        let challenge = Challenge {
            kind,
            scopes: bearer.scope,
            secrets,
        };
        let mut candidates = Candidates::new(resource_metadata_candidates(
            &self.server,
            bearer.resource_metadata.as_deref(),
        ));
        let budget = Budget::new(after(now, self.config.limits.time));
        let next = self
            .fetch_candidate(budget, Purpose::ResourceMetadata, &mut candidates)
            .map(|flight| Progress::ResourceMetadata {
                flight,
                challenge,
                candidates,
            });
        self.enter(next);
        Ok(())
    }

    /// Refreshes this server's tokens at the issuer that issued them, for the resource they were
    /// issued for (for example when [`Authorizer::token_expired`]).
    pub fn start_refresh(&mut self, now: Instant) -> Result<(), AuthError> {
        if self.is_busy() {
            return Err(AuthError::Misuse {
                reason: "an authorization is already in progress",
            });
        }
        self.now = self.now.max(now);
        let issuer = self
            .store
            .resources
            .get(&self.key)
            .map(|r| r.issuer.clone())
            .ok_or(AuthError::Misuse {
                reason: "no tokens for this server",
            })?;
        // Tokens from an authorization server the grant's credentials are not pinned to (a
        // store written under another configuration) are neither refreshed nor renewed there:
        // they are forgotten, and the next challenge discovers the server anew.
        if let Err(e) = self.check_grant_issuer(&issuer) {
            self.forget_tokens_from(&issuer);
            return Err(e);
        }
        let budget = Budget::new(after(now, self.config.limits.time));
        let Some(flight) = self.refresh_request(budget, &issuer, None)? else {
            if !self.config.grant.needs_user_agent() {
                // A grant without a user agent is run again, at the stored token endpoint.
                let target = self.stored_target(&issuer)?;
                let next = self.start_grant(now, budget, target)?;
                self.enter(Ok(next));
                return Ok(());
            }
            return Err(AuthError::Misuse {
                reason: "no refresh token for this server",
            });
        };
        self.enter(Ok(Progress::Refreshing {
            flight,
            refresh: Refresh::Asked { issuer },
        }));
        Ok(())
    }

    /// Continues an authorization persisted as `pending` (from [`AuthEvent::OpenUserAgent`]);
    /// the callback wait starts at `now`. One whose client carries pre-registered credentials
    /// pinned to another authorization server is refused ([`AuthError::IssuerNotAllowed`]).
    pub fn resume(&mut self, now: Instant, pending: PendingAuthorization) -> Result<(), AuthError> {
        if self.is_busy() {
            return Err(AuthError::Misuse {
                reason: "an authorization is already in progress",
            });
        }
        self.config
            .policy
            .check("token endpoint", &pending.token_endpoint)?;
        // Persisted under another configuration, it may carry pre-registered credentials
        // pinned to another authorization server: they are not redeemed there.
        if !self.stored_client_admitted(&pending.issuer, &pending.client) {
            return Err(AuthError::IssuerNotAllowed {
                issuer: crate::error::truncated(&pending.issuer, 256),
            });
        }
        if let Some(r) = &pending.resource {
            if !resource_designates(r, &self.server, true) {
                return Err(AuthError::ResourceMismatch {
                    resource: crate::error::truncated(r, 256),
                    server: self.config.server_url.clone(),
                });
            }
        }
        self.enter(Ok(Progress::AwaitingCode {
            pending: Box::new(pending),
            deadline: after(now, self.config.limits.callback_time),
        }));
        Ok(())
    }

    /// The user agent came back with the request target `target` (`/path?query`): the path
    /// must be the one of the redirect URI of the authorization server the request went to
    /// (each authorization server that does not send `iss` gets its own, see
    /// [`Authorizer::redirect_uri_for`]), else the authorization fails with
    /// [`AuthError::RedirectMismatch`] and no code is redeemed; then as
    /// [`Authorizer::handle_callback`] with the query.
    pub fn handle_redirect(&mut self, now: Instant, target: &str) {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if let Progress::AwaitingCode { pending, deadline } = &self.progress {
            if path != redirect_path(&pending.redirect_uri) && now < *deadline {
                self.enter(Err(AuthError::RedirectMismatch));
                return;
            }
        }
        self.handle_callback(now, query);
    }

    /// The redirect URI used with the authorization server `issuer`: the configured one
    /// ([`ClientSettings::redirect_uri`]) when the server sends `iss` (RFC 9207) or when the
    /// client is pre-registered or uses its metadata document; otherwise the configured one with
    /// a path segment derived from the issuer added (`…/callback/<12 characters>`), so that an
    /// answer meant for one authorization server cannot complete an authorization started with
    /// another (RFC 9700 §4.4.2.2).
    pub fn redirect_uri_for(&self, issuer: &str, iss_parameter_supported: bool) -> String {
        let base = &self.config.client.redirect_uri;
        if iss_parameter_supported {
            return base.clone();
        }
        per_issuer_redirect(base, issuer)
    }

    /// The user agent came back to the redirect URI with `query` (the part after `?`): check it
    /// and redeem the code.
    pub fn handle_callback(&mut self, now: Instant, query: &str) {
        if self.progress.callback_deadline().is_some_and(|d| now >= d) {
            // Too late: reported once, as the callback deadline.
            self.handle_timeout(now);
            return;
        }
        self.handle_timeout(now);
        if !matches!(self.progress, Progress::AwaitingCode { .. }) {
            // A stray callback: reported, and whatever is in progress goes on.
            self.events.push_back(AuthEvent::Failed(AuthError::Misuse {
                reason: "no authorization is waiting for a callback",
            }));
            return;
        }
        let Progress::AwaitingCode { pending, .. } = self.take_progress() else {
            return;
        };
        let next = self.redeem(now, pending, query);
        self.enter(next);
    }

    /// Checks the callback's `query` against `pending` and sends the code to the token endpoint.
    fn redeem(
        &mut self,
        now: Instant,
        pending: Box<PendingAuthorization>,
        query: &str,
    ) -> Result<Progress, AuthError> {
        let code = parse_callback(&pending, query)?;
        let mut grant = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", pending.redirect_uri.as_str()),
            ("code_verifier", pending.secrets.verifier()),
        ];
        if let Some(r) = &pending.resource {
            grant.push(("resource", r.as_str()));
        }
        let (headers, body) = token_request(&pending.client, &grant);
        let budget = Budget::new(after(now, self.config.limits.time));
        let flight = self.send_token(
            budget,
            Purpose::Token,
            &pending.issuer,
            &pending.token_endpoint,
            dpop_flow::TokenForm::Fixed { headers, body },
            now,
        )?;
        Ok(Progress::Redeeming { flight, pending })
    }

    /// The next request to send, if any.
    pub fn poll_request(&mut self) -> Option<AuthExchange> {
        self.outbox.pop_front()
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<AuthEvent> {
        self.events.pop_front()
    }

    /// When [`Authorizer::handle_timeout`] must be called next, if anything is waiting.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.progress
            .network_deadline()
            .or(self.progress.callback_deadline())
    }

    /// Time passed: a deadline that has passed fails the authorization.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = self.now.max(now);
        let (budget, limit) = if self.progress.network_deadline().is_some_and(|d| now >= d) {
            (AuthBudget::Time, self.config.limits.time)
        } else if self.progress.callback_deadline().is_some_and(|d| now >= d) {
            (AuthBudget::CallbackTime, self.config.limits.callback_time)
        } else {
            return;
        };
        self.enter(Err(AuthError::Budget {
            budget,
            limit: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
        }));
    }

    /// The transport failed for request `id` (nothing usable arrived).
    pub fn handle_transport_error(
        &mut self,
        now: Instant,
        id: AuthRequestId,
        error: TransportError,
    ) {
        self.handle_timeout(now);
        if let Some((want, purpose)) = self.progress.awaiting() {
            if want == id {
                self.enter(Err(AuthError::Transport {
                    purpose,
                    source: error,
                }));
            }
        }
    }

    /// The answer to request `id`. An answer to a request that is not awaited is ignored.
    pub fn handle_response(&mut self, now: Instant, id: AuthRequestId, response: AuthResponse) {
        self.handle_timeout(now);
        if self.progress.awaiting().is_none_or(|(want, _)| want != id) {
            return;
        }
        match self.dpop_nonce_retry(&response) {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                self.enter(Err(e));
                return;
            }
        }
        let step = self.take_progress();
        let next = self.on_response(now, step, response);
        self.enter(next);
    }

    /// Sends a request within the network part `budget`: the URL must pass the policy and the
    /// part must have an exchange left.
    fn send(
        &mut self,
        mut budget: Budget,
        purpose: Purpose,
        method: Method,
        url: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Result<InFlight, AuthError> {
        let what = match purpose {
            Purpose::ResourceMetadata => "protected-resource metadata URL",
            Purpose::ServerMetadata => "authorization-server metadata URL",
            Purpose::Registration => "registration endpoint",
            Purpose::Token | Purpose::Refresh => "token endpoint",
            Purpose::TokenExchange => "identity provider token endpoint",
        };
        let endpoint = self.config.policy.check(what, url)?;
        let limit = self.config.limits.max_exchanges;
        if budget.exchanges >= limit {
            return Err(AuthError::Budget {
                budget: AuthBudget::Exchanges,
                limit: u64::from(limit),
            });
        }
        budget.exchanges += 1;
        let id = AuthRequestId(self.next_id);
        self.next_id += 1;
        let request = Request {
            method,
            authority: endpoint.authority().to_owned(),
            path: endpoint.target().to_owned(),
            headers,
            body,
        };
        self.outbox.push_back(AuthExchange {
            id,
            purpose,
            url: url.to_owned(),
            endpoint,
            request,
            max_response_bytes: MAX_BODY_BYTES,
        });
        Ok(InFlight { budget, id })
    }

    /// Whether the configured grant's credentials may be presented to the authorization server
    /// `issuer`: its [`IssuerPin`] must admit it ([`AuthError::IssuerNotAllowed`] otherwise).
    /// The authorization code grant has no credentials of its own here.
    pub(super) fn check_grant_issuer(&self, issuer: &str) -> Result<(), AuthError> {
        match self.config.grant.issuer_pin() {
            Some(pin) if !pin.admits(issuer) => Err(AuthError::IssuerNotAllowed {
                issuer: crate::error::truncated(issuer, 256),
            }),
            _ => Ok(()),
        }
    }

    /// Whether `client`, stored for `issuer`, may be presented there: not when it carries the
    /// secret of pre-registered credentials none of whose pins admits `issuer` (a store written
    /// under another configuration).
    fn stored_client_admitted(&self, issuer: &str, client: &ClientCredentials) -> bool {
        let Some(secret) = &client.client_secret else {
            return true;
        };
        let mut carrying = self
            .config
            .client
            .pre_registered
            .iter()
            .filter(|p| p.credentials.client_secret.as_ref() == Some(secret))
            .peekable();
        carrying.peek().is_none() || carrying.any(|p| p.issuer.admits(issuer))
    }

    /// Forgets what is stored for `issuer` that carries a pre-registered secret it may not see
    /// (the client, and this server's tokens from it) and reports it.
    fn refuse_stored_client(&mut self, issuer: &str) -> AuthError {
        if let Some(entry) = self.store.issuers.get_mut(issuer) {
            entry.client = None;
        }
        self.forget_tokens_from(issuer);
        AuthError::IssuerNotAllowed {
            issuer: crate::error::truncated(issuer, 256),
        }
    }

    /// Fetches the next of `candidates`; [`AuthError::NotFound`] when none is left.
    fn fetch_candidate(
        &mut self,
        budget: Budget,
        purpose: Purpose,
        candidates: &mut Candidates,
    ) -> Result<InFlight, AuthError> {
        let Some(url) = candidates.urls.get(candidates.tried).cloned() else {
            return Err(AuthError::NotFound {
                purpose,
                last_status: candidates.last_status,
            });
        };
        candidates.tried += 1;
        let headers = vec![("Accept".to_owned(), "application/json".to_owned())];
        self.send(budget, purpose, Method::Get, &url, headers, Vec::new())
    }

    /// Sends a refresh request when this server holds tokens from `issuer` with a refresh token,
    /// at the token endpoint `discovered` (else the one stored for `issuer`) and for the resource
    /// they were issued for; `None` otherwise. Tokens of another server, or from another issuer,
    /// are never refreshed here.
    fn refresh_request(
        &mut self,
        budget: Budget,
        issuer: &str,
        discovered: Option<&str>,
    ) -> Result<Option<InFlight>, AuthError> {
        let Some(bound) = self.store.resources.get(&self.key) else {
            return Ok(None);
        };
        if bound.issuer != issuer {
            return Ok(None);
        }
        let Some(refresh) = bound.tokens.refresh_token.clone() else {
            return Ok(None);
        };
        let resource = bound.resource.clone();
        let Some(creds) = self.store.issuers.get(issuer) else {
            return Ok(None);
        };
        let Some(client) = creds.client.clone() else {
            return Ok(None);
        };
        if !self.stored_client_admitted(issuer, &client) {
            return Err(self.refuse_stored_client(issuer));
        }
        let token_endpoint = match discovered {
            Some(t) => t.to_owned(),
            None => match &creds.token_endpoint {
                Some(t) => t.clone(),
                None => return Ok(None),
            },
        };
        let grant = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh.as_str()),
            ("resource", resource.as_str()),
        ];
        let (headers, body) = token_request(&client, &grant);
        let flight = self.send_token(
            budget,
            Purpose::Refresh,
            issuer,
            &token_endpoint,
            dpop_flow::TokenForm::Fixed { headers, body },
            self.now,
        )?;
        Ok(Some(flight))
    }

    /// The client identifies itself with the discovered authorization server: stored or given
    /// credentials go straight to the user agent, else it registers.
    fn identify_client(
        &mut self,
        now: Instant,
        budget: Budget,
        found: Box<Discovered>,
    ) -> Result<Progress, AuthError> {
        let issuer = found.issuer.as_str();
        let meta = &found.meta;
        let wanted = self.redirect_uri_for(issuer, meta.iss_parameter_supported);
        let settings = &self.config.client;
        if let Some(stored) = self.store.issuers.get(issuer) {
            if let Some(client) = &stored.client {
                if !self.stored_client_admitted(issuer, client) {
                    return Err(self.refuse_stored_client(issuer));
                }
                // Pre-registered credentials and the metadata document keep the configured
                // redirect URI; a registration of our own is reused if it has the one wanted.
                let given = settings.pre_registered.iter().any(|p| {
                    p.issuer.admits(issuer) && p.credentials.client_id == client.client_id
                }) || settings.metadata_document_url.as_ref()
                    == Some(&client.client_id);
                let registered = stored
                    .redirect_uri
                    .as_deref()
                    .unwrap_or(&settings.redirect_uri);
                if given || registered == wanted {
                    return self.authorize(now, *found);
                }
            }
        }
        // Credentials pinned to this issuer first; those for any (the explicit opt-out) after.
        let pre = settings
            .pre_registered
            .iter()
            .find(|p| p.issuer.issuer() == Some(issuer))
            .or_else(|| {
                settings
                    .pre_registered
                    .iter()
                    .find(|p| p.issuer == IssuerPin::AnyIssuerUnsafe)
            });
        let client = if let Some(p) = pre {
            Some(p.credentials.clone())
        } else if let (true, Some(url)) = (
            meta.client_id_metadata_document_supported,
            settings.metadata_document_url.as_ref(),
        ) {
            Some(ClientCredentials {
                client_id: url.clone(),
                client_secret: None,
                auth_method: TokenAuthMethod::None,
            })
        } else {
            None
        };
        if let Some(client) = client {
            let entry = self.store.issuers.entry(issuer.to_owned()).or_default();
            entry.client = Some(client);
            entry.redirect_uri = None;
            return self.authorize(now, *found);
        }
        let Some(endpoint) = meta.registration_endpoint.clone() else {
            return Err(AuthError::NoRegistration {
                issuer: found.issuer,
            });
        };
        let method = registration_auth_method(meta)?;
        let mut settings = self.config.client.clone();
        settings.redirect_uri = wanted;
        let body = settings.registration_body(method);
        let headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json".to_owned()),
        ];
        let flight = self.send(
            budget,
            Purpose::Registration,
            Method::Post,
            &endpoint,
            headers,
            body,
        )?;
        Ok(Progress::Registering { flight, found })
    }

    /// The network part is over: the user agent goes to the authorization endpoint.
    fn authorize(&mut self, now: Instant, found: Discovered) -> Result<Progress, AuthError> {
        if self.attempts >= self.config.limits.max_attempts {
            return Err(AuthError::Budget {
                budget: AuthBudget::Attempts,
                limit: u64::from(self.config.limits.max_attempts),
            });
        }
        let Discovered {
            challenge,
            resource,
            issuer,
            meta,
        } = found;
        let stored = self.store.issuers.get(&issuer);
        let client = stored
            .and_then(|c| c.client.clone())
            .ok_or(AuthError::NoRegistration {
                issuer: issuer.clone(),
            })?;
        let redirect_uri = stored
            .and_then(|c| c.redirect_uri.clone())
            .unwrap_or_else(|| self.config.client.redirect_uri.clone());
        let server_scopes = meta.scopes_supported.as_deref();
        let scopes = match challenge.kind {
            ChallengeKind::InsufficientScope => {
                let previous = if self.last_scopes.is_empty() {
                    self.current_tokens()
                        .map(|t| t.scopes.clone())
                        .unwrap_or_default()
                } else {
                    self.last_scopes.clone()
                };
                step_up_scopes(&previous, &challenge.scopes, server_scopes)
            }
            ChallengeKind::Unauthorized => select_scopes(
                &challenge.scopes,
                resource.scopes_supported.as_deref(),
                server_scopes,
            ),
        };
        let resource = Some(resource.resource);
        let url = authorization_url(
            &meta.authorization_endpoint,
            &client.client_id,
            &redirect_uri,
            &challenge.secrets,
            &scopes,
            resource.as_deref(),
        );
        let pending = Box::new(PendingAuthorization {
            issuer,
            iss_parameter_supported: meta.iss_parameter_supported,
            token_endpoint: meta.token_endpoint,
            client,
            redirect_uri,
            resource,
            scopes: scopes.clone(),
            secrets: challenge.secrets,
            authorization_url: url.clone(),
        });
        self.attempts += 1;
        self.last_scopes = scopes;
        self.events.push_back(AuthEvent::OpenUserAgent {
            url,
            pending: pending.clone(),
        });
        Ok(Progress::AwaitingCode {
            pending,
            deadline: after(now, self.config.limits.callback_time),
        })
    }
}
