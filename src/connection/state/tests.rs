use super::*;

fn req(step: Step) -> Pending {
    let budgets = crate::budget::Budgets::default();
    Pending {
        step,
        id: 1,
        progress_token: 1,
        exchange: None,
        responses: 0,
        stalled: 0,
        deadline: Deadline::new(Instant::ZERO, &budgets, Budget::ListTime),
        allowance: Resends::new(),
        refusals: 0,
    }
}

fn deadline() -> Deadline {
    Deadline::new(
        Instant::ZERO,
        &crate::budget::Budgets::default(),
        Budget::ListTime,
    )
}

#[test]
fn a_resumption_returns_to_the_state_it_interrupted() {
    let mut m = Machine::new();
    m.connect_from_hint();
    assert_eq!(m.name(), ConnectionState::Ready);
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    m.suspend("ev-1".into(), None, Instant::ZERO);
    assert_eq!(m.name(), ConnectionState::Resuming);
    assert_eq!(m.operation(), Some(Operation::ListTools));
    assert!(m.req().is_some(), "the interrupted request is kept");
    assert_eq!(m.resume(), Some(("ev-1".into(), None)));
    assert_eq!(m.name(), ConnectionState::Listing);
}

#[test]
fn a_re_negotiation_carries_the_operation_it_interrupted() {
    let mut m = Machine::new();
    m.connect_from_hint();
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    m.discover(req(Step::Discover {
        attempt: 0,
        version: "v".into(),
    }));
    assert_eq!(m.name(), ConnectionState::Discovering);
    assert_eq!(m.operation(), Some(Operation::ListTools));
    m.initialize(req(Step::initialize()), false);
    assert_eq!(m.operation(), Some(Operation::ListTools));
    m.confirm(req(Step::Initialized {
        server: Announced::default(),
    }));
    assert_eq!(m.operation(), Some(Operation::ListTools));
    assert!(matches!(
        m.restart_step(),
        Some((Step::ListPage { cursor: None }, _))
    ));
    m.connected(Some(req(Step::ListPage { cursor: None })));
    assert_eq!(
        m.name(),
        ConnectionState::Listing,
        "the listing restarts at once"
    );
    // A failed negotiation leaves nothing negotiated; a failed operation leaves it ready.
    m.fail(&invalid_answer("tools/list", "refused".into()));
    assert_eq!(m.name(), ConnectionState::Ready);
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    m.discover(req(Step::Discover {
        attempt: 0,
        version: "v".into(),
    }));
    m.fail(&invalid_answer("tools/list", "refused".into()));
    assert_eq!(m.name(), ConnectionState::Unconnected);
    m.connect_from_hint();
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    m.fail(&invalid_answer("tools/list", "refused".into()));
    assert_eq!(m.name(), ConnectionState::Ready);
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    m.fail(&Error::Closed);
    assert_eq!(m.name(), ConnectionState::Dead);
    assert_eq!(m.operation(), None);
}

/// "Only a resumption resumes": any other state asked to resume is a bug, caught in a debug
/// build.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "invalid transition Listing → Listing")]
fn an_invalid_transition_is_caught_in_a_debug_build() {
    let mut m = Machine::new();
    m.connect_from_hint();
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    let _ = m.resume();
}

/// A release build ends the connection instead: Dead with the typed error, and the
/// operation that ran reported failed once.
#[test]
fn an_invalid_transition_ends_the_connection_with_a_typed_error() {
    let mut m = Machine::new();
    m.connect_from_hint();
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    m.end_invalid(
        ConnectionState::Listing,
        Some(Operation::ListTools),
        ConnectionState::Backoff,
    );
    let error = Error::InvalidTransition {
        from: ConnectionState::Listing,
        to: ConnectionState::Backoff,
    };
    assert_eq!(m.name(), ConnectionState::Dead);
    assert!(matches!(m.get(), State::Dead(e) if *e == error));
    assert_eq!(error.kind(), crate::error::ErrorKind::ConnectionFailed);
    assert_eq!(m.take_fault(), Some((Operation::ListTools, error)));
    assert_eq!(m.take_fault(), None, "reported once");
}

/// The table's pairs are a set: none listed twice.
#[test]
fn the_transitions_are_listed_once() {
    for (i, a) in TRANSITIONS.iter().enumerate() {
        assert!(!TRANSITIONS[i + 1..].contains(a), "{a:?} listed twice");
    }
}

/// A request's one-time retries (the resend on a fresh socket, the retry with a new
/// `DPoP-Nonce`) are its own: each is granted once, and the next request (a listing's next
/// page, a call's next round) starts with both again, whatever the last one spent.
#[test]
fn each_request_gets_its_own_one_time_retries() {
    let mut m = Machine::new();
    assert!(!m.spend_fresh_resend(), "no request, no resend");
    m.connect_from_hint();
    m.start_list(req(Step::ListPage { cursor: None }), deadline());
    assert!(m.spend_fresh_resend());
    assert!(!m.spend_fresh_resend(), "once per request");
    assert!(m.spend_nonce_retry());
    assert!(!m.spend_nonce_retry(), "once per request");
    // Suspended and resumed, the request keeps what it spent.
    m.suspend("ev-1".into(), None, Instant::ZERO);
    assert!(!m.spend_fresh_resend());
    let _ = m.resume();
    assert!(!m.spend_nonce_retry());
    m.again(req(Step::ListPage {
        cursor: Some("c".into()),
    }));
    assert!(m.spend_nonce_retry(), "the next page is a new request");
    assert!(m.spend_fresh_resend());
}

fn policy(budgets: &crate::budget::Budgets) -> Policy<'_> {
    Policy {
        budgets,
        input_hook: true,
        legacy_offered: true,
        refuse_changed_tools: false,
    }
}

/// Versioning (2026-07-28): after `-32022` the client retries `server/discover` once with a
/// mutual version the error names; a second refusal, or none mutual, fails the negotiation.
#[test]
fn a_refused_version_is_retried_once() {
    let budgets = crate::budget::Budgets::default();
    let refused = || Answer::VersionRefused {
        mutual: Some("v2".into()),
        supported: vec!["v2".into()],
    };
    let mut m = Machine::new();
    m.discover(req(Step::Discover {
        attempt: 0,
        version: "v1".into(),
    }));
    let effects = m.step(Instant::ZERO, refused(), policy(&budgets));
    assert!(
        matches!(&effects[..], [Effect::Rediscover { version }] if version == "v2"),
        "{effects:?}"
    );
    m.discover(req(Step::Discover {
        attempt: 1,
        version: "v2".into(),
    }));
    let effects = m.step(Instant::ZERO, refused(), policy(&budgets));
    assert!(
        matches!(&effects[..], [Effect::NoMutual { all: false, .. }]),
        "{effects:?}"
    );
}

/// A page's answer to a state that waits on no page is a bug of the connection: a debug build
/// stops at the transition function.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "invalid transition Calling → Calling")]
fn an_answer_the_state_does_not_wait_for_is_caught() {
    let budgets = crate::budget::Budgets::default();
    let mut m = Machine::new();
    m.connect_from_hint();
    let call = CallState {
        name: "echo".into(),
        arguments: b"{}".to_vec(),
        input_responses: None,
        request_state: None,
        rounds: 0,
        param_headers: Vec::new(),
        known: false,
    };
    m.start_call(req(Step::Call), call, deadline());
    let page = Answer::Page {
        next: None,
        repeated: false,
    };
    let _ = m.step(Instant::ZERO, page, policy(&budgets));
}
