//! The servers of the soak and what a work item against each must come to.
//!
//! A *kind* is one server behaviour on one wire: the demo server (both eras, or legacy only)
//! and the in-test HTTP/2 server are well behaved; the hostile ones are taken by name from the
//! hostile catalogue (`checks/support/src/hostile/catalogue.rs` for HTTP/1.1, `checks/support/src/hostile/h2.rs` for
//! HTTP/2), which also says which typed error each must end in. Every kind has its own port, so
//! its own origin in the shared client: its pool, its shared HTTP/2 socket, its era hint.

use std::time::Duration;

use mcp_sansio::{Budget, Budgets, ErrorKind};

use crate::h2_catalogue::{self, H2Cause, H2Op, H2Scenario};
use crate::h2server::{hello, H2Peer, SeenRequest};
use crate::hostile::script::{Rule, Step, Times};
use crate::hostile::{catalogue, Scenario, Setup};

/// How the client reaches a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wire {
    /// HTTP/1.1 in clear text (`http`, a client without prior knowledge).
    H1,
    /// HTTP/1.1 over TLS (`https`, the server offers ALPN `http/1.1` only).
    H1Tls,
    /// HTTP/2 over TLS (`https`, the server offers ALPN `h2` then `http/1.1`).
    H2Tls,
    /// HTTP/2 in clear text with prior knowledge (`http`, a client built for it).
    H2c,
}

impl Wire {
    /// Its short name.
    pub fn name(self) -> &'static str {
        match self {
            Wire::H1 => "h1",
            Wire::H1Tls => "h1-tls",
            Wire::H2Tls => "h2-tls",
            Wire::H2c => "h2c",
        }
    }

    /// Whether the endpoint is `https`.
    pub fn tls(self) -> bool {
        matches!(self, Wire::H1Tls | Wire::H2Tls)
    }

    /// The HTTP version a session must report.
    pub fn http_version(self) -> &'static str {
        match self {
            Wire::H1 | Wire::H1Tls => "HTTP/1.1",
            Wire::H2Tls | Wire::H2c => "HTTP/2",
        }
    }
}

/// A server behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// The demo server, both eras on one endpoint (the client learns the modern era, then
    /// connects from its hint).
    Demo,
    /// The demo server speaking the legacy era only (`initialize`, a session, `DELETE`).
    DemoLegacy,
    /// The in-test HTTP/2 server (`checks/support/src/h2_server.rs`).
    H2Good,
    /// A hostile HTTP/1.1 server of the catalogue, by name.
    H1Hostile(&'static str),
    /// A hostile HTTP/2 server, by name (the HTTP/2 catalogue's, or [`H2_SILENT`]).
    H2Hostile(&'static str),
}

/// The hostile HTTP/2 server of the soak that is not in the catalogue: it greets, then never
/// answers a request.
pub const H2_SILENT: &str = "never_answers";

/// The hostile HTTP/1.1 servers: one trickles its answer, one sends an endless body, one never
/// answers a connect or a call, one is not HTTP, one closes at once, and three answer with a
/// status that fails with each error kind.
pub const H1_HOSTILE: &[&str] = &[
    "slow_loris_body",
    "endless_close_delimited_body",
    "accept_and_never_answer",
    "call_never_answered",
    "not_http_at_all",
    "accept_and_close",
    "unauthorized",
    "json_rpc_error_on_500",
];

/// The hostile HTTP/2 servers: one resets every stream, one refuses every stream, one sends
/// GOAWAY below every stream, one sends a body over the byte budget (in padded one-byte DATA
/// frames), one sends DATA on stream 0 (a connection error), one never answers.
pub const H2_HOSTILE: &[&str] = &[
    "reset_internal_error",
    "refused_stream_every_time",
    "goaway_loop",
    "one_byte_data_with_padding",
    "data_on_stream_zero",
    H2_SILENT,
];

/// One server behaviour on one wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The behaviour.
    pub behaviour: Behaviour,
    /// The wire.
    pub wire: Wire,
}

impl Kind {
    /// `behaviour/wire`, as the figures print it.
    pub fn label(&self) -> String {
        let b = match self.behaviour {
            Behaviour::Demo => "demo",
            Behaviour::DemoLegacy => "demo-legacy",
            Behaviour::H2Good => "h2-server",
            Behaviour::H1Hostile(n) | Behaviour::H2Hostile(n) => n,
        };
        format!("{b}/{}", self.wire.name())
    }

    /// Whether the server is well behaved.
    pub fn good(&self) -> bool {
        matches!(
            self.behaviour,
            Behaviour::Demo | Behaviour::DemoLegacy | Behaviour::H2Good
        )
    }
}

/// Every kind a server process starts: each behaviour on the wires it speaks.
pub fn all() -> Vec<Kind> {
    let mut v = Vec::new();
    let mut add = |behaviour, wires: &[Wire]| {
        for &wire in wires {
            v.push(Kind { behaviour, wire });
        }
    };
    add(Behaviour::Demo, &[Wire::H1, Wire::H1Tls]);
    add(Behaviour::DemoLegacy, &[Wire::H1, Wire::H1Tls]);
    add(Behaviour::H2Good, &[Wire::H2Tls, Wire::H2c]);
    for &n in H1_HOSTILE {
        add(Behaviour::H1Hostile(n), &[Wire::H1, Wire::H1Tls]);
    }
    for &n in H2_HOSTILE {
        add(Behaviour::H2Hostile(n), &[Wire::H2Tls, Wire::H2c]);
    }
    v
}

/// The kinds of the tokio run: one client that speaks HTTP/2 with prior knowledge to `http`
/// endpoints, so HTTP/1.1 runs over TLS there (ALPN), and HTTP/2 both over TLS and in clear text.
pub fn tokio_kinds() -> Vec<Kind> {
    all().into_iter().filter(|k| k.wire != Wire::H1).collect()
}

/// The kinds of the blocking run: a client without prior knowledge, so HTTP/1.1 in clear text,
/// and HTTP/2 over TLS.
pub fn blocking_kinds() -> Vec<Kind> {
    all()
        .into_iter()
        .filter(|k| matches!(k.wire, Wire::H1 | Wire::H2Tls))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Time and budgets

/// The time budgets of every work item: the catalogue's durations divided by ten, as the
/// adapters' socket runs of the catalogue do, so a deadline-bound item ends in seconds.
pub const REQUEST_TIME: Duration = Duration::from_secs(2);
/// The listing budget.
pub const LIST_TIME: Duration = Duration::from_secs(4);
/// The call budget.
pub const CALL_TIME: Duration = Duration::from_secs(4);
/// The close budget.
pub const CLOSE_TIME: Duration = Duration::from_secs(1);
/// The byte budget of one response, at most (a scenario may set a smaller one). It bounds what
/// one work item may hold (see `memory_bound_per_item`).
pub const RESPONSE_BYTES: u64 = 256 * 1024;
/// The catalogue's server timings (trickles, waits) are divided by this, as the budgets are.
pub const SCALE: u32 = 10;

/// `b` with the soak's time budgets and at most [`RESPONSE_BYTES`] a response.
pub fn soak_budgets(mut b: Budgets) -> Budgets {
    b.request_time = REQUEST_TIME;
    b.list_time = LIST_TIME;
    b.call_time = CALL_TIME;
    b.close_time = CLOSE_TIME;
    b.max_retry_wait = Duration::from_secs(1);
    b.response_bytes = b.response_bytes.min(RESPONSE_BYTES);
    b.sse_event_bytes = b.sse_event_bytes.min(RESPONSE_BYTES);
    b
}

/// The budgets of the well-behaved servers' work items.
pub fn good_budgets() -> Budgets {
    soak_budgets(crate::hostile::test_budgets())
}

// ---------------------------------------------------------------------------------------------
// The hostile scenarios

/// The HTTP/1.1 catalogue scenarios of [`H1_HOSTILE`], by name, with the soak's budgets and
/// their servers' timings divided by [`SCALE`]. The catalogue is built once (some of its
/// scenarios are large). Panics if one is missing, or if its server keeps state between
/// requests (a rule used once): every work item of the kind shares one server.
pub fn h1_scenarios() -> Vec<Scenario> {
    let all = catalogue::all();
    H1_HOSTILE
        .iter()
        .map(|&name| {
            let mut s = all
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("no scenario {name} in the catalogue"))
                .clone();
            assert!(
                s.rules.iter().all(|r| r.times == Times::Always) && s.setup != Setup::Legacy,
                "{name}: its server keeps state between requests"
            );
            s.budgets = soak_budgets(s.budgets);
            s.rules = s
                .rules
                .iter()
                .map(|r| Rule {
                    when: r.when.clone(),
                    times: r.times,
                    steps: r.steps.iter().map(scale_step).collect(),
                })
                .collect();
            s
        })
        .collect()
}

fn scale_step(s: &Step) -> Step {
    match s {
        Step::Wait(d) => Step::Wait(*d / SCALE),
        Step::Trickle {
            bytes,
            piece,
            every,
        } => Step::Trickle {
            bytes: bytes.clone(),
            piece: *piece,
            every: *every / SCALE,
        },
        other => other.clone(),
    }
}

fn silent(_: &mut H2Peer, _: &SeenRequest) -> Vec<u8> {
    Vec::new()
}

/// The HTTP/2 scenario `name` (the catalogue's, or [`H2_SILENT`]) with the soak's budgets.
pub fn h2_scenario(name: &str) -> H2Scenario {
    let mut sc = if name == H2_SILENT {
        H2Scenario {
            name: H2_SILENT,
            op: H2Op::Call(2),
            budgets: h2_catalogue::budgets(),
            prelude: |_| hello(),
            respond: silent,
            expect: H2Cause::Budget(Budget::CallTime),
            requests: 1,
            within: CALL_TIME,
        }
    } else {
        h2_catalogue::scenarios()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no scenario {name} in the HTTP/2 catalogue"))
    };
    sc.budgets = soak_budgets(sc.budgets);
    sc
}

/// The longest an operation may take by its budgets: a connect makes at most four requests of
/// `request_time` each (as the adapters' socket runs of the catalogue count it); a listing, a
/// call and a close have their aggregate budgets.
pub fn connect_limit(b: &Budgets) -> Duration {
    b.request_time * 4
}

/// The error kind every hostile HTTP/2 work item must end with.
pub const H2_KIND: ErrorKind = ErrorKind::ConnectionFailed;
