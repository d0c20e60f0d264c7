//! The session driver over an in-memory [`Io`]: what it dispatches, how an operation completes,
//! the era hints it learns and offers, and the core's decisions it carries out (the `DELETE`
//! socket, the single fresh-socket retry of a stale pooled socket).

mod support;

use mcp_sansio::{Completion, Config, Era, Error, ExchangeId, Transmit, TransportError};
use mcp_sansio_net::{ClientBuilder, Io, NoObserver, Report, SessionDriver, Start, Wait};
use support::{json, method_and_id, TestClient};

/// What the driver asked of the I/O.
#[derive(Debug, PartialEq, Eq)]
enum Call {
    Start {
        id: u64,
        method: String,
        fresh: bool,
    },
    ReadOn(u64),
    Finish(u64, bool),
    Abandon(u64),
}

#[derive(Default)]
struct Recorded {
    calls: Vec<Call>,
    /// Started and not yet answered: (exchange, JSON-RPC or HTTP method, JSON-RPC id).
    waiting: Vec<(ExchangeId, String, u64)>,
    /// What each `read_allowance` said, with the number of `read_on` calls made before it.
    allowances: Vec<(u64, usize)>,
}

impl Io for Recorded {
    fn start(&mut self, t: Transmit, request: Vec<u8>) -> Result<(), TransportError> {
        let (method, id) = method_and_id(&request);
        self.calls.push(Call::Start {
            id: t.exchange.0,
            method: method.clone(),
            fresh: t.fresh_socket,
        });
        self.waiting.push((t.exchange, method, id));
        Ok(())
    }
    fn read_on(&mut self, exchange: ExchangeId) {
        self.calls.push(Call::ReadOn(exchange.0));
    }
    fn finish(&mut self, exchange: ExchangeId, reusable: bool) {
        self.calls.push(Call::Finish(exchange.0, reusable));
    }
    fn abandon(&mut self, exchange: ExchangeId) {
        self.calls.push(Call::Abandon(exchange.0));
    }
    fn read_allowance(&mut self, bytes_left: u64) {
        let reads = self
            .calls
            .iter()
            .filter(|c| matches!(c, Call::ReadOn(_)))
            .count();
        self.allowances.push((bytes_left, reads));
    }
}

const DISCOVER: &str = r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"instructions":"Call t first.","ttlMs":60000}"#;
const INITIALIZE: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"old","version":"1"}}"#;
const TOOLS: &str = r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#;

/// A modern server when `modern`, else a legacy one with session `s`.
fn answer(method: &str, id: u64, modern: bool) -> Vec<u8> {
    let result = |r: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#);
    match (method, modern) {
        ("server/discover", true) => json(200, "", &result(DISCOVER)),
        ("server/discover", false) => json(404, "", ""),
        ("initialize", _) => json(200, "mcp-session-id: s\r\n", &result(INITIALIZE)),
        ("tools/list", _) => json(200, "", &result(TOOLS)),
        _ => json(202, "", ""),
    }
}

/// Pumps until the operation ends, answering every request like the server of `modern`.
fn run(
    d: &mut SessionDriver,
    io: &mut Recorded,
    op: Start<'_>,
    modern: bool,
) -> Result<Completion, Error> {
    d.start(op);
    loop {
        if let Some(r) = d.pump(io, &mut NoObserver) {
            return r;
        }
        let (id, method, rpc_id) = io.waiting.remove(0);
        d.feed(id, Report::Bytes(answer(&method, rpc_id, modern)));
    }
}

fn client() -> TestClient {
    ClientBuilder::<TestClient>::new().build()
}

const URL: &str = "http://127.0.0.1:9/mcp";

fn start(id: u64, method: &str, fresh: bool) -> Call {
    Call::Start {
        id,
        method: method.into(),
        fresh,
    }
}

#[test]
fn a_proven_era_is_offered_to_the_next_session_of_the_origin() {
    let c = client();
    let mut io = Recorded::default();
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    let connected = run(&mut d, &mut io, Start::Connect, true);
    assert!(matches!(connected, Ok(Completion::Connected)));
    assert_eq!(d.era(), Era::Modern);
    assert_eq!(
        io.calls,
        [start(1, "server/discover", false), Call::Finish(1, true)]
    );
    assert_eq!(
        c.0.hint(&Config::new(URL).unwrap()).unwrap().era,
        Era::Modern
    );

    // The next session connects from the hint, without a request.
    let mut io = Recorded::default();
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    let connected = run(&mut d, &mut io, Start::Connect, true);
    assert!(matches!(connected, Ok(Completion::Connected)));
    assert!(io.calls.is_empty(), "{:?}", io.calls);
    match run(&mut d, &mut io, Start::ListTools, true) {
        Ok(Completion::Listed(c)) => assert_eq!(c.tools[0].name(), "t"),
        other => panic!("{other:?}"),
    }
    // Nothing waits any more.
    assert_eq!(d.wait(), Wait::Nothing);

    // With hints off, nothing is learnt.
    let off = ClientBuilder::<TestClient>::new().era_hints(false).build();
    let mut d = SessionDriver::new(&off.0, Config::new(URL).unwrap()).unwrap();
    run(&mut d, &mut Recorded::default(), Start::Connect, true).unwrap();
    assert!(off.0.hint(&Config::new(URL).unwrap()).is_none());
}

/// Versioning (2026-07-28): `server/discover`'s result carries the server's `capabilities` and
/// optional `instructions`; a session shows what its negotiation received, and a session that
/// connected from an era hint (no request) shows nothing rather than a guess.
#[test]
fn a_session_shows_the_capabilities_and_instructions_its_negotiation_received() {
    let c = client();
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    run(&mut d, &mut Recorded::default(), Start::Connect, true).unwrap();
    assert_eq!(
        d.capabilities().map(|r| r.get()),
        Some(r#"{"tools":{"listChanged":true}}"#)
    );
    assert_eq!(d.instructions(), Some("Call t first."));

    // From the hint: no request, so nothing received.
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    run(&mut d, &mut Recorded::default(), Start::Connect, true).unwrap();
    assert_eq!(d.capabilities().map(|r| r.get()), None);
    assert_eq!(d.instructions(), None);

    // A legacy server's `initialize`: its capabilities, and no instructions.
    let mut d = SessionDriver::new(&client().0, Config::new(URL).unwrap()).unwrap();
    run(&mut d, &mut Recorded::default(), Start::Connect, false).unwrap();
    assert_eq!(d.capabilities().map(|r| r.get()), Some("{}"));
    assert_eq!(d.instructions(), None);
}

#[test]
fn the_delete_socket_never_goes_back_to_the_pool() {
    let c = client();
    let mut io = Recorded::default();
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    run(&mut d, &mut io, Start::Connect, false).unwrap();
    assert_eq!(d.era(), Era::Legacy);
    assert_eq!(d.server_info().unwrap().name, "old");
    assert_eq!(
        io.calls[1],
        Call::Finish(1, true),
        "a keep-alive 404 is reusable"
    );
    io.calls.clear();
    let closed = run(&mut d, &mut io, Start::Close, false);
    assert!(matches!(closed, Ok(Completion::Closed)));
    assert_eq!(
        io.calls,
        [start(4, "DELETE", false), Call::Finish(4, false)],
        "a keep-alive answer to DELETE, yet not reusable"
    );
}

#[test]
fn a_stale_pooled_socket_is_retried_once_on_a_fresh_one() {
    let c = client();
    let mut io = Recorded::default();
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    run(&mut d, &mut io, Start::Connect, true).unwrap();
    io.calls.clear();
    d.start(Start::ListTools);
    assert!(d.pump(&mut io, &mut NoObserver).is_none());
    // The pooled socket was closed by the server: end of stream before any byte.
    let (id, _, _) = io.waiting.remove(0);
    d.feed(id, Report::Eof);
    assert!(d.pump(&mut io, &mut NoObserver).is_none());
    assert_eq!(
        io.calls,
        [
            start(2, "tools/list", false),
            Call::Abandon(2),
            start(3, "tools/list", true),
        ]
    );
    // A report for the abandoned exchange is not fed.
    d.feed(id, Report::Bytes(b"HTTP/1.1 200 OK\r\n".to_vec()));
    let (id, method, rpc) = io.waiting.remove(0);
    d.feed(id, Report::Bytes(answer(&method, rpc, true)));
    let listed = d.pump(&mut io, &mut NoObserver);
    assert!(matches!(listed, Some(Ok(Completion::Listed(_)))));
}

#[test]
fn closing_ends_with_closed_not_with_the_interrupted_operations_failure() {
    let c = client();
    let mut io = Recorded::default();
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    run(&mut d, &mut io, Start::Connect, true).unwrap();
    d.start(Start::ListTools);
    assert!(d.pump(&mut io, &mut NoObserver).is_none());
    assert_eq!(d.open_exchanges(), 1);
    assert!(matches!(d.wait(), Wait::Until(_)));
    // The listing is left unfinished (its future dropped, say): closing interrupts it.
    d.start(Start::Close);
    let closed = d.pump(&mut io, &mut NoObserver);
    assert!(matches!(closed, Some(Ok(Completion::Closed))), "{closed:?}");
    assert_eq!(io.calls.last(), Some(&Call::Abandon(2)));
    assert_eq!(d.open_exchanges(), 0);
}

#[test]
fn an_exchange_that_cannot_start_fails_the_operation() {
    struct Refusing;
    impl Io for Refusing {
        fn start(&mut self, _: Transmit, _: Vec<u8>) -> Result<(), TransportError> {
            Err(TransportError {
                kind: mcp_sansio::TransportErrorKind::Io,
                message: "no thread".into(),
            })
        }
        fn read_on(&mut self, _: ExchangeId) {}
        fn finish(&mut self, _: ExchangeId, _: bool) {}
        fn abandon(&mut self, _: ExchangeId) {}
    }
    let c = client();
    let mut d = SessionDriver::new(&c.0, Config::new(URL).unwrap()).unwrap();
    d.start(Start::Connect);
    match d.pump(&mut Refusing, &mut NoObserver) {
        Some(Err(Error::Transport(e))) => assert_eq!(e.message, "no thread"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn reads_are_sized_from_what_the_byte_budget_leaves() {
    use mcp_sansio_net::session::{next_read_size, read_size, READ_MAX, READ_MIN};
    // A quarter of what is left, within the bounds.
    assert_eq!(read_size(0), READ_MIN);
    assert_eq!(read_size(4 * READ_MIN as u64 - 4), READ_MIN);
    assert_eq!(read_size(400_000), 100_000);
    assert_eq!(read_size(4 * READ_MAX as u64 + 4), READ_MAX);
    assert_eq!(read_size(u64::MAX), READ_MAX);
    // A read that filled its buffer lets the next ask four times more, within the cap.
    assert_eq!(next_read_size(READ_MIN, READ_MIN, READ_MAX), 4 * READ_MIN);
    assert_eq!(
        next_read_size(4 * READ_MIN, 4 * READ_MIN, READ_MAX),
        READ_MAX
    );
    assert_eq!(next_read_size(READ_MAX, READ_MAX, READ_MAX), READ_MAX);
    assert_eq!(next_read_size(READ_MIN, READ_MIN, 20_000), 20_000);
    // One that did not fill it keeps its size; a smaller cap shrinks it, never under READ_MIN.
    assert_eq!(next_read_size(4 * READ_MIN, 100, READ_MAX), 4 * READ_MIN);
    assert_eq!(next_read_size(READ_MAX, READ_MAX, READ_MIN), READ_MIN);
    assert_eq!(next_read_size(READ_MAX, 1, 0), READ_MIN);
}

#[test]
fn the_byte_budget_left_is_told_before_each_read_on() {
    let c = client();
    let mut io = Recorded::default();
    let config = Config::new(URL).unwrap();
    let budget = config.budgets.response_bytes;
    let mut d = SessionDriver::new(&c.0, config).unwrap();
    d.start(Start::Connect);
    assert!(d.pump(&mut io, &mut NoObserver).is_none());
    assert!(io.allowances.is_empty(), "nothing was fed yet");
    let (id, method, rpc_id) = io.waiting.remove(0);
    let response = answer(&method, rpc_id, true);
    let (first, rest) = response.split_at(response.len() / 2);
    d.feed(id, Report::Bytes(first.to_vec()));
    assert!(d.pump(&mut io, &mut NoObserver).is_none());
    let left = budget - first.len() as u64;
    assert_eq!(d.bytes_left(), left);
    // Told once, before the one read_on of the pump.
    assert_eq!(io.allowances, [(left, 0)]);
    assert_eq!(io.calls.last(), Some(&Call::ReadOn(id.0)));
    d.feed(id, Report::Bytes(rest.to_vec()));
    assert!(matches!(
        d.pump(&mut io, &mut NoObserver),
        Some(Ok(Completion::Connected))
    ));
    // The exchange finished: it reads no more, and nothing more is told.
    assert_eq!(io.allowances.len(), 1);
    assert_eq!(d.bytes_left(), budget - response.len() as u64);
}
