//! What a session that authorizes does when its MCP server refuses: [`AuthRetry`].

use crate::prelude::*;

use crate::auth::challenge::{parse_challenges, BearerChallenge, BearerErrorCode};
use crate::error::Error;

/// How many times a session that authorizes may open the user agent after it connected: the
/// step-up authorizations (403 `insufficient_scope`) and new authorizations (401) a server asks
/// for over the session's life. A server that alternates acceptance and refusal would
/// otherwise send the user to the browser on every operation. Silent authorizations (a
/// refresh) are not counted.
pub const MAX_STEP_UPS: u32 = 4;

/// Whether an MCP answer of `status` with this `WWW-Authenticate` value calls for
/// authorization: a 401, or a 403 whose Bearer (or DPoP, RFC 9449 §7.1) challenge has
/// `error="insufficient_scope"`. A plain 403 does not (it can mean an invalid `Origin`).
pub fn calls_for_authorization(status: u16, www_authenticate: Option<&str>) -> bool {
    match status {
        401 => true,
        403 => {
            let Some(v) = www_authenticate else {
                return false;
            };
            let Ok(challenges) = parse_challenges([v.as_bytes()]) else {
                return false;
            };
            challenges.iter().any(|c| {
                (c.is_scheme("bearer") || c.is_scheme("dpop"))
                    && BearerChallenge::from_challenge(c).error
                        == Some(BearerErrorCode::InsufficientScope)
            })
        }
        _ => false,
    }
}

/// Which try of an operation failed (connecting counts as an operation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attempt {
    /// The first try.
    First,
    /// The try after authorizing (and connecting again).
    AfterAuthorization,
}

/// What a session that authorizes does after a try of an operation failed
/// ([`AuthRetry::after_failure`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AfterRefusal {
    /// Authorize with this refusal's status and `WWW-Authenticate` value, connect again with
    /// the new token, then try the operation once more, as [`Attempt::AfterAuthorization`].
    AuthorizeThenRetry {
        /// The refusal's status (401 or 403).
        status: u16,
        /// Its `WWW-Authenticate` value, if any.
        challenge: Option<String>,
    },
    /// Return the error as it is.
    Return,
}

/// Whether the user agent may open now ([`AuthRetry::open_user_agent`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UserAgent {
    /// Open it (one opening is counted).
    Open,
    /// Do not: the authorization fails, before the user agent opens, naming the limit.
    Refuse {
        /// The limit that was reached.
        limit: u32,
    },
}

/// The decisions of a session that authorizes, which every adapter's authorizing session
/// carries out:
///
/// - A refusal that calls for authorization ([`calls_for_authorization`]: a 401, or a 403 whose
///   challenge says `insufficient_scope`) on the first try of an operation (connecting, or an
///   operation on a connected session) is answered by authorizing once, connecting again and
///   trying the operation once more ([`AfterRefusal::AuthorizeThenRetry`]).
/// - Any other error, and every error of the try after authorizing, is returned as it is
///   ([`AfterRefusal::Return`]): a server that refuses the new token is not asked again by the
///   same operation, so an operation tries at most twice.
/// - Once the session connected, the user agent opens at most [`MAX_STEP_UPS`] more times over
///   the session's life ([`AuthRetry::open_user_agent`]); the authorization that would open it
///   once more is refused before it opens ([`UserAgent::Refuse`]). Silent authorizations (a
///   refresh, a grant without a user agent) are not counted.
///
/// Deterministic: it holds the user agent's allowance and nothing else; the adapter reports
/// what happened ([`AuthRetry::connected`]) and asks what to do next.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthRetry {
    /// How many more times the user agent may open (`None`: no limit).
    user_agent_left: Option<u32>,
    /// The limit it counts down from.
    user_agent_limit: u32,
    /// The session connected once.
    connected: bool,
}

impl AuthRetry {
    /// Before the session connected: the user agent is not limited (the first authorization is
    /// the user's own).
    pub const fn new() -> Self {
        AuthRetry {
            user_agent_left: None,
            user_agent_limit: 0,
            connected: false,
        }
    }

    /// What to do after try `attempt` of an operation failed with `error`: authorize and retry
    /// when it is the first try and the error calls for authorization
    /// ([`calls_for_authorization`]), else return it as it is.
    pub fn after_failure(&self, attempt: Attempt, error: &Error) -> AfterRefusal {
        match (attempt, error) {
            (Attempt::First, Error::Authentication { status, challenge })
                if calls_for_authorization(*status, challenge.as_deref()) =>
            {
                AfterRefusal::AuthorizeThenRetry {
                    status: *status,
                    challenge: challenge.clone(),
                }
            }
            _ => AfterRefusal::Return,
        }
    }

    /// The session connected (first time, or again after authorizing). The first time, the
    /// user agent's allowance becomes [`MAX_STEP_UPS`]; a new connection after authorizing
    /// does not restore it.
    pub fn connected(&mut self) {
        if !self.connected {
            self.limit_user_agent(Some(MAX_STEP_UPS));
        }
        self.connected = true;
    }

    /// From now on, the user agent may open at most `n` more times (`None`: no limit).
    pub fn limit_user_agent(&mut self, n: Option<u32>) {
        self.user_agent_left = n;
        self.user_agent_limit = n.unwrap_or(0);
    }

    /// How many more times the user agent may open (`None`: no limit).
    pub fn user_agent_left(&self) -> Option<u32> {
        self.user_agent_left
    }

    /// An authorization is about to open the user agent: [`UserAgent::Open`] (and one
    /// opening counted) while the allowance lasts, [`UserAgent::Refuse`] once it is spent.
    pub fn open_user_agent(&mut self) -> UserAgent {
        match &mut self.user_agent_left {
            Some(0) => UserAgent::Refuse {
                limit: self.user_agent_limit,
            },
            Some(n) => {
                *n -= 1;
                UserAgent::Open
            }
            None => UserAgent::Open,
        }
    }
}
