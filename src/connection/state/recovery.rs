//! What an operation may still try: its [`Recovery`], and the choice of a recovery after the
//! server refused a listing's page or a call's round ([`Machine::recover`]); what one request
//! may still try: its [`Resends`].

use super::*;

/// The recoveries one operation may make, each at most once, and whether the era it runs in
/// may still prove wrong: data of the operation's states, made new when the operation starts
/// ([`Machine::start_list`], [`Machine::start_call`]) and carried through every state it passes
/// (a re-listing, a re-negotiation, a new session, a resumption, the rounds of a call), so that
/// no allowance outlives its operation and none is reset while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::connection) struct Recovery {
    /// Whether the era assumed may still prove wrong (the hint the operation started with, until
    /// an answer settles it).
    pub(in crate::connection) hint: Hint,
    /// The protocol was re-negotiated after a `-32022` refused the version negotiated.
    pub(in crate::connection) renegotiated: bool,
    /// A new legacy session was started after the server ended the last one.
    pub(in crate::connection) new_session: bool,
    /// The tools were listed once after a header mismatch (a call's; never twice).
    pub(in crate::connection) relisted: bool,
}

impl Recovery {
    /// An operation's, started in an era `hint` says may or may not prove wrong.
    pub(in crate::connection) fn new(hint: Hint) -> Recovery {
        Recovery {
            hint,
            renegotiated: false,
            new_session: false,
            relisted: false,
        }
    }
}

/// The one-time retries of one request, data of its [`Pending`]: made new when the request is
/// made (every request, a listing's next page or a call's next round included, starts with
/// both), and spent only by the machine's decisions ([`Machine::spend_fresh_resend`],
/// [`Machine::spend_nonce_retry`]), so that no request gets either twice and none inherits
/// another's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::connection) struct Resends {
    /// It may still be sent once more on a fresh socket (a pooled socket closed before a byte
    /// of its answer, a stream the server never processed).
    fresh_resend: bool,
    /// It may still be sent once more with the server's `DPoP-Nonce` (RFC 9449 §8).
    nonce_retry: bool,
}

impl Resends {
    /// A new request's: every retry still allowed.
    pub(in crate::connection) fn new() -> Resends {
        Resends {
            fresh_resend: true,
            nonce_retry: true,
        }
    }
}

/// What the server's refusal of a listing's page or a call's round says, as far as the
/// recoveries go: outcome.rs classifies the answer, [`Machine::recover`] decides.
#[derive(Clone, Copy, Debug)]
pub(in crate::connection) struct Refusal {
    /// An answer of the other era: a 4xx without a recognised modern error (a legacy server's
    /// `-32000`, "no valid session id"), or a `-32022`.
    pub(in crate::connection) wrong_era: bool,
    /// A 4xx `-32022`: the server refuses the version negotiated.
    pub(in crate::connection) version_refused: bool,
    /// A 404 while a legacy session id is held: the server ended the session.
    pub(in crate::connection) session_ended: bool,
    /// A `-32020` in a modern session: the call's headers did not match the tool's.
    pub(in crate::connection) header_mismatch: bool,
    /// A `-32020`, in either era.
    pub(in crate::connection) mismatch_code: bool,
}

impl Refusal {
    /// Whether the refusal, met by a tool call and followed by `recover`, says that the catalog
    /// the call took the tool's headers from is stale: a `-32020` (the server's tools changed),
    /// unless the session is replaced (the answer of an ended session says nothing of the
    /// tools). Counted in [`Connection::header_mismatches`], reported by
    /// [`Connection::catalog_stale`].
    pub(in crate::connection) fn catalog_stale(&self, recover: Recover) -> bool {
        self.mismatch_code && recover != Recover::NewSession
    }
}

/// The recovery a refused page or round leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::connection) enum Recover {
    /// Negotiate again (the era or the version proved wrong), then restart the operation.
    Renegotiate,
    /// Start a new legacy session, then restart the operation in it.
    NewSession,
    /// List the tools to learn the called tool's headers, then call once more.
    Relist,
    /// No recovery is left: the operation fails.
    Fail,
}

impl Machine {
    /// Whether the pending request may be sent once more on a fresh socket (its server never
    /// read or processed it); spends that allowance. Without a pending request, no.
    pub(in crate::connection) fn spend_fresh_resend(&mut self) -> bool {
        self.state
            .req_mut()
            .is_some_and(|p| core::mem::replace(&mut p.allowance.fresh_resend, false))
    }

    /// Whether the pending request may be sent once more with the server's new `DPoP-Nonce`
    /// (a second `use_dpop_nonce` for it is refused); spends that allowance. Without a pending
    /// request there is nothing to spend: yes.
    pub(in crate::connection) fn spend_nonce_retry(&mut self) -> bool {
        self.state
            .req_mut()
            .is_none_or(|p| core::mem::replace(&mut p.allowance.nonce_retry, false))
    }

    /// Chooses what a refused page or round leads to, from the running operation's
    /// [`Recovery`] alone, and spends the allowance it uses: an era hint not yet settled and
    /// proved wrong re-negotiates (a `-32022` spends the operation's one re-negotiation);
    /// otherwise a `-32022` re-negotiates once per operation, a session the server ended is
    /// replaced once per operation (the client "MUST start a new session"), and a call's header
    /// mismatch re-lists once (spent by [`Machine::relist`]). Anything else fails.
    pub(in crate::connection) fn recover(&mut self, refusal: Refusal) -> Recover {
        let hint = self.state.hint();
        let calling = matches!(self.state, State::Calling { .. });
        let Some(rec) = self.state.rec_mut() else {
            return Recover::Fail;
        };
        if hint != Hint::Settled && refusal.wrong_era {
            if refusal.version_refused {
                rec.renegotiated = true; // that was the operation's one
            }
            return Recover::Renegotiate;
        }
        if refusal.version_refused && !rec.renegotiated {
            rec.renegotiated = true;
            return Recover::Renegotiate;
        }
        if refusal.session_ended && !rec.new_session {
            rec.new_session = true;
            return Recover::NewSession;
        }
        if refusal.header_mismatch && calling && !rec.relisted {
            return Recover::Relist;
        }
        Recover::Fail
    }
}
