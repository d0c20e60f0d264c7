//! Where an [`Authorizer`] stands: one enum whose variants carry what each step of the flow
//! needs, and the one place that moves it.
//!
//! Every step of the network part holds the request it waits for ([`InFlight`]); the answer
//! handlers (`answers.rs`) take the step by value and give the next one back, which
//! [`Authorizer::enter`] installs (or, for an error, reports as [`AuthEvent::Failed`] and
//! installs [`Progress::Failed`]). Nothing else assigns the progress.
//!
//! | From | On | To |
//! |---|---|---|
//! | `Idle`, `Authorized`, `Failed` | [`Authorizer::handle_challenge`] | `ResourceMetadata` |
//! | `Idle`, `Authorized`, `Failed` | [`Authorizer::start_refresh`] | `Refreshing` (asked) |
//! | `Idle`, `Authorized`, `Failed` | [`Authorizer::resume`] | `AwaitingCode` |
//! | `ResourceMetadata` | a non-2xx answer | `ResourceMetadata` (next candidate) |
//! | `ResourceMetadata` | the metadata | `ServerMetadata` |
//! | `ServerMetadata` | a non-2xx answer | `ServerMetadata` (next candidate) |
//! | `ServerMetadata` | the metadata | `Refreshing` (challenge), `Registering` or `AwaitingCode` |
//! | `Registering` | the registration | `AwaitingCode` |
//! | `Refreshing` | tokens | `Authorized` |
//! | `Refreshing` (challenge) | a token error | `Registering` or `AwaitingCode` |
//! | `AwaitingCode` | [`Authorizer::handle_callback`] with a code | `Redeeming` |
//! | `Redeeming` | tokens | `Authorized` |
//! | `ServerMetadata` (grant without user agent) | the metadata | `Granting` or `Exchanging` |
//! | `Idle`, `Authorized`, `Failed` (grant without user agent) | [`Authorizer::start_refresh`] without a refresh token | `Granting` or `Exchanging` |
//! | `Exchanging` | an identity assertion grant | `Granting` |
//! | `Granting` | tokens | `Authorized` |
//! | any step | an error, a deadline, a transport failure | `Failed` |
//! | any | [`Authorizer::cancel`] | `Idle` |
use super::*;

/// Where the authorization stands.
pub(super) enum Progress {
    /// No authorization has run (since the authorizer was made or cancelled).
    Idle,
    /// The protected-resource metadata is being fetched from its candidate URLs.
    ResourceMetadata {
        /// The request in flight.
        flight: InFlight,
        /// The challenge being answered.
        challenge: Challenge,
        /// Where the document may be.
        candidates: Candidates,
    },
    /// The authorization server's metadata is being fetched from its candidate URLs.
    ServerMetadata {
        /// The request in flight.
        flight: InFlight,
        /// The challenge being answered.
        challenge: Challenge,
        /// The protected resource's metadata.
        resource: Box<ResourceMetadata>,
        /// The authorization server it names first.
        issuer: String,
        /// Where its metadata may be.
        candidates: Candidates,
    },
    /// The client registers itself (RFC 7591).
    Registering {
        /// The request in flight.
        flight: InFlight,
        /// What discovery found.
        found: Box<Discovered>,
    },
    /// The server's tokens are refreshed.
    Refreshing {
        /// The request in flight.
        flight: InFlight,
        /// Why, and what the refresh falls back on.
        refresh: Refresh,
    },
    /// The user agent is at the authorization endpoint; the callback is awaited.
    AwaitingCode {
        /// What the callback is checked against and the code redeemed with.
        pending: Box<PendingAuthorization>,
        /// When waiting stops.
        deadline: Instant,
    },
    /// The code is redeemed at the token endpoint.
    Redeeming {
        /// The request in flight.
        flight: InFlight,
        /// The authorization the code belongs to.
        pending: Box<PendingAuthorization>,
    },
    /// A grant without a user agent: the enterprise identity provider exchanges a token for an
    /// identity assertion grant.
    Exchanging {
        /// The request in flight.
        flight: InFlight,
        /// Where the grant goes next.
        target: Box<direct::Target>,
    },
    /// A grant without a user agent: its token request at the authorization server.
    Granting {
        /// The request in flight.
        flight: InFlight,
        /// Where the tokens come from, and for what.
        target: Box<direct::Target>,
    },
    /// The last authorization ended with tokens.
    Authorized,
    /// The last authorization failed (reported as [`AuthEvent::Failed`]).
    Failed,
}

/// The network part of an authorization: its deadline and the exchanges made so far.
#[derive(Clone, Copy, Debug)]
pub(super) struct Budget {
    /// When the network part must be over.
    pub(super) deadline: Instant,
    /// The requests sent so far.
    pub(super) exchanges: u32,
}

impl Budget {
    /// A network part that ends by `deadline` and has sent nothing.
    pub(super) fn new(deadline: Instant) -> Budget {
        Budget {
            deadline,
            exchanges: 0,
        }
    }
}

/// The one request a step of the network part waits for.
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    /// The network part it belongs to (this request counted).
    pub(super) budget: Budget,
    /// The request.
    pub(super) id: AuthRequestId,
}

/// The MCP server's challenge an authorization answers.
pub(super) struct Challenge {
    /// What the server answered.
    pub(super) kind: ChallengeKind,
    /// The scopes the challenge names.
    pub(super) scopes: Vec<String>,
    /// The `state` and verifier, for the user agent step.
    pub(super) secrets: AuthSecrets,
}

/// What the MCP server answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ChallengeKind {
    /// 401: no valid token.
    Unauthorized,
    /// 403 `insufficient_scope`: a step-up.
    InsufficientScope,
}

/// Candidate URLs of a metadata document, tried in order.
pub(super) struct Candidates {
    /// The URLs.
    pub(super) urls: Vec<String>,
    /// How many were tried.
    pub(super) tried: usize,
    /// The status of the last non-2xx answer, if one came.
    pub(super) last_status: Option<u16>,
}

impl Candidates {
    /// None tried yet.
    pub(super) fn new(urls: Vec<String>) -> Candidates {
        Candidates {
            urls,
            tried: 0,
            last_status: None,
        }
    }

    /// The URL fetched last.
    pub(super) fn last_tried(&self) -> Option<&String> {
        self.urls.get(self.tried.checked_sub(1)?)
    }
}

/// What discovery found: enough to identify the client and send the user agent.
pub(super) struct Discovered {
    /// The challenge being answered.
    pub(super) challenge: Challenge,
    /// The protected resource's metadata.
    pub(super) resource: ResourceMetadata,
    /// The authorization server.
    pub(super) issuer: String,
    /// Its metadata.
    pub(super) meta: ServerMetadata,
}

/// Why tokens are refreshed.
pub(super) enum Refresh {
    /// The caller asked ([`Authorizer::start_refresh`]): tokens of `issuer`.
    Asked {
        /// The issuer of the tokens.
        issuer: String,
    },
    /// A 401 with tokens of the discovered issuer: a token error authorizes anew.
    Challenge(Box<Discovered>),
}

impl Refresh {
    /// The authorization server refreshing the tokens.
    pub(super) fn issuer(&self) -> &str {
        match self {
            Refresh::Asked { issuer } => issuer,
            Refresh::Challenge(found) => &found.issuer,
        }
    }
}

/// Whether the one refresh a challenge may try before the user agent is still to come: spent by
/// a refresh, given back when the server accepts a token ([`Authorizer::accepted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RefreshAllowance {
    /// A 401 may refresh.
    Available,
    /// Tokens were refreshed since the server last accepted one.
    Spent,
}

impl Progress {
    /// The request awaited and what it is for, in a step of the network part.
    pub(super) fn awaiting(&self) -> Option<(AuthRequestId, Purpose)> {
        let (flight, purpose) = match self {
            Progress::ResourceMetadata { flight, .. } => (flight, Purpose::ResourceMetadata),
            Progress::ServerMetadata { flight, .. } => (flight, Purpose::ServerMetadata),
            Progress::Registering { flight, .. } => (flight, Purpose::Registration),
            Progress::Refreshing { flight, .. } => (flight, Purpose::Refresh),
            Progress::Redeeming { flight, .. } => (flight, Purpose::Token),
            Progress::Exchanging { flight, .. } => (flight, Purpose::TokenExchange),
            Progress::Granting { flight, .. } => (flight, Purpose::Token),
            Progress::Idle
            | Progress::AwaitingCode { .. }
            | Progress::Authorized
            | Progress::Failed => return None,
        };
        Some((flight.id, purpose))
    }

    /// The request a step of the network part waits for, to replace it.
    pub(super) fn flight_mut(&mut self) -> Option<&mut InFlight> {
        match self {
            Progress::ResourceMetadata { flight, .. }
            | Progress::ServerMetadata { flight, .. }
            | Progress::Registering { flight, .. }
            | Progress::Refreshing { flight, .. }
            | Progress::Redeeming { flight, .. }
            | Progress::Exchanging { flight, .. }
            | Progress::Granting { flight, .. } => Some(flight),
            Progress::Idle
            | Progress::AwaitingCode { .. }
            | Progress::Authorized
            | Progress::Failed => None,
        }
    }

    /// The deadline of the network part, in one of its steps.
    pub(super) fn network_deadline(&self) -> Option<Instant> {
        match self {
            Progress::ResourceMetadata { flight, .. }
            | Progress::ServerMetadata { flight, .. }
            | Progress::Registering { flight, .. }
            | Progress::Refreshing { flight, .. }
            | Progress::Redeeming { flight, .. }
            | Progress::Exchanging { flight, .. }
            | Progress::Granting { flight, .. } => Some(flight.budget.deadline),
            Progress::Idle
            | Progress::AwaitingCode { .. }
            | Progress::Authorized
            | Progress::Failed => None,
        }
    }

    /// The deadline of the callback, while it is awaited.
    pub(super) fn callback_deadline(&self) -> Option<Instant> {
        match self {
            Progress::AwaitingCode { deadline, .. } => Some(*deadline),
            _ => None,
        }
    }

    /// Whether an authorization is in progress.
    pub(super) fn is_busy(&self) -> bool {
        !matches!(
            self,
            Progress::Idle | Progress::Authorized | Progress::Failed
        )
    }

    /// The step's name, for `Debug`.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Progress::Idle => "idle",
            Progress::ResourceMetadata { .. } => "resource metadata",
            Progress::ServerMetadata { .. } => "server metadata",
            Progress::Registering { .. } => "registering",
            Progress::Refreshing { .. } => "refreshing",
            Progress::AwaitingCode { .. } => "awaiting code",
            Progress::Redeeming { .. } => "redeeming",
            Progress::Exchanging { .. } => "exchanging at the identity provider",
            Progress::Granting { .. } => "granting",
            Progress::Authorized => "authorized",
            Progress::Failed => "failed",
        }
    }
}

impl Authorizer {
    /// Takes the step out to move it on; [`Authorizer::enter`] puts the next one in.
    pub(super) fn take_progress(&mut self) -> Progress {
        core::mem::replace(&mut self.progress, Progress::Idle)
    }

    /// The one transition: installs `next`, or for an error drops what was to be sent, reports
    /// it and installs [`Progress::Failed`].
    pub(super) fn enter(&mut self, next: Result<Progress, AuthError>) {
        self.progress = match next {
            Ok(next) => next,
            Err(e) => {
                self.outbox.clear();
                self.events.push_back(AuthEvent::Failed(e));
                Progress::Failed
            }
        };
    }
}
