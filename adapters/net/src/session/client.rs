//! What every session of a client shares (the network guard, the TLS configuration, the idle
//! pool, the era hints and the transcript sink) and the one builder of both adapters' clients.

use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::HashMap;

use mcp_sansio::{Config, Endpoint, EraHint, EraHints, Scheme, TransportError};
use mcp_sansio_transcript::TranscriptSink;

use crate::guard::{vetted_addresses, AddressPolicy, IdlePool, Resolve};
use crate::lock::lock;
use crate::session::builder::{BuildClient, ClientBuilder};
use crate::session::h2share::{H2Io, SharedH2, Waker};

/// The era hints of a client, shared by its sessions ([`EraHints`]: keyed by server and
/// authorization context, expiring with the `ttlMs` of `server/discover`, on the wall clock);
/// with a shared store ([`ClientBuilder::shared_store`]), also written to it and read from it
/// when this client has none for a key.
pub(crate) struct HintBook {
    pub(crate) on: bool,
    pub(crate) hints: Mutex<EraHints>,
    pub(crate) store: Option<Arc<dyn crate::cache::Store>>,
}

impl HintBook {
    /// Offers the hint of `config` to it (this client's, else the shared store's, under `key`:
    /// [`EraHints::key`] of `config`).
    pub(crate) fn offer(&self, key: &str, config: &mut Config) {
        if !self.on {
            return;
        }
        if lock(&self.hints).offer(config, crate::cache::wall_instant()) {
            return;
        }
        if let Some(store) = &self.store {
            crate::cache::offer_stored_hint(&**store, key, config);
        }
    }

    /// Learns from `event` of a connection whose hints live under `key`; `discover` is what its
    /// `server/discover` answer declared of its caching.
    pub(crate) fn learn(
        &self,
        key: &str,
        event: &mcp_sansio::Event,
        discover: Option<mcp_sansio::CacheHint>,
    ) {
        if !self.on {
            return;
        }
        let learnt = lock(&self.hints).learn(key, event, discover, crate::cache::wall_instant());
        let proven = matches!(
            event,
            mcp_sansio::Event::Connected {
                from_hint: false,
                ..
            }
        );
        match (&self.store, learnt) {
            (Some(store), Some((hint, expires))) => {
                crate::cache::store_hint(&**store, key, &hint, expires);
            }
            // A negotiation whose answer may not be kept ("stale immediately") forgets the
            // shared hint too.
            (Some(store), None) if proven => store.remove(key.as_bytes()),
            _ => {}
        }
    }
}

/// What every session of a client shares; `S` is the adapter's socket type.
pub struct Shared<S> {
    /// The address policy every dial is judged by.
    pub policy: AddressPolicy,
    /// The resolver of host names.
    pub resolver: Arc<dyn Resolve>,
    /// The TLS configuration of `https` endpoints over HTTP/1.1 (ALPN `http/1.1`).
    pub tls: Arc<rustls::ClientConfig>,
    /// The TLS configuration of `https` endpoints where HTTP/2 may be spoken: `tls` offering
    /// ALPN `h2` first (`with_h2_alpn`).
    pub tls_h2: Arc<rustls::ClientConfig>,
    /// The per-origin copies of `tls`, each keeping its origin's TLS sessions, when the client
    /// built `tls` itself; `None` for a configuration given whole
    /// ([`ClientBuilder::tls_config`]), which is used as given, its session store included.
    pub(crate) origin_tls: Option<crate::guard::tls::OriginSessions>,
    /// Whether every exchange runs on HTTP/1.1 ([`ClientBuilder::http1_only`]).
    pub http1_only: bool,
    /// Whether `http` endpoints speak HTTP/2 with prior knowledge
    /// ([`ClientBuilder::h2_prior_knowledge`]).
    pub h2c: bool,
    /// Streams each HTTP/2 socket opens at once, at most ([`ClientBuilder::h2_max_streams`];
    /// `None`: the core's default).
    pub h2_max_streams: Option<u32>,
    /// The deadline of one dial, TCP and TLS together (never zero).
    pub dial_timeout: Duration,
    /// How long a write to an HTTP/2 socket may wait on the server before the socket fails
    /// ([`ClientBuilder::write_stall`]).
    pub write_stall: Duration,
    pub(crate) pool: Mutex<IdlePool<S>>,
    /// The shared HTTP/2 connection of each origin, and the origins being dialled.
    pub(crate) h2: Arc<Mutex<H2Book>>,
    pub(crate) hints: Arc<HintBook>,
    /// The catalog cache, if on ([`ClientBuilder::catalog_cache`]).
    pub(crate) cache: Option<Arc<crate::cache::CatalogCache>>,
    /// The tool pins ([`ClientBuilder::tool_pins`]).
    pub(crate) pins: Arc<crate::pins::PinBook>,
    pub(crate) sink: Option<Arc<dyn TranscriptSink>>,
    pub(crate) sessions: AtomicU64,
}

impl<S> fmt::Debug for Shared<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("policy", &self.policy)
            .field("dial_timeout", &self.dial_timeout)
            .field("era_hints", &self.hints.on)
            .finish_non_exhaustive()
    }
}

impl<S> Shared<S> {
    /// The fresh era hint this client remembers for `config`'s server (its URL, path included)
    /// and authorization context, if any.
    pub fn hint(&self, config: &Config) -> Option<EraHint> {
        lock(&self.hints.hints)
            .get(
                &crate::cache::hint_key(config),
                crate::cache::wall_instant(),
            )
            .cloned()
    }

    /// Idle sockets held in the pool now.
    pub fn idle_sockets(&self) -> usize {
        lock(&self.pool).len()
    }

    /// Takes the newest parked socket of `origin` for which `idle` holds; the others found on the
    /// way are closed.
    pub fn take_idle(
        &self,
        origin: &str,
        mut idle: impl FnMut(&mut S) -> bool,
    ) -> Option<(SocketAddr, S)> {
        loop {
            let (address, mut socket) = lock(&self.pool).take(origin, std::time::Instant::now())?;
            if idle(&mut socket) {
                crate::metrics::socket_reused(crate::metrics::Reuse::Pooled);
                return Some((address, socket));
            }
        }
    }

    /// Whether an idle socket of `origin` is parked (an origin that spoke HTTP/1.1).
    pub fn has_idle(&self, origin: &str) -> bool {
        lock(&self.pool).contains(origin, std::time::Instant::now())
    }

    /// Parks a socket the core declared reusable.
    pub fn park(&self, origin: &str, address: SocketAddr, socket: S) {
        lock(&self.pool).put(origin, address, socket, std::time::Instant::now());
    }

    /// The scheme of the HTTP/2 connection a new session of `endpoint` (whose origin is
    /// `origin`) uses, if any: `https` (ALPN decides, when the socket is dialled) unless HTTP/1.1
    /// is forced ([`ClientBuilder::http1_only`]), an HTTP/1.1 socket of the origin is idle in
    /// the pool, or the origin's TLS handshake chose HTTP/1.1 within the pool's idle timeout
    /// ([`chose_http1`](Self::chose_http1)); `http` with prior knowledge only when the client
    /// was built for it ([`ClientBuilder::h2_prior_knowledge`]). `None`: HTTP/1.1.
    pub fn h2_scheme(&self, endpoint: &Endpoint, origin: &str) -> Option<&'static str> {
        if self.http1_only {
            return None;
        }
        if self.h2_connection(origin).is_some() {
            return Some(match endpoint.scheme() {
                Scheme::Https => "https",
                Scheme::Http => "http",
            });
        }
        match endpoint.scheme() {
            Scheme::Https if !self.has_idle(origin) && !lock(&self.h2).chose_http1(origin) => {
                Some("https")
            }
            Scheme::Http if self.h2c => Some("http"),
            _ => None,
        }
    }

    /// Notes that the TLS handshake of `origin`'s HTTP/2 dial chose HTTP/1.1 (ALPN): for the
    /// pool's idle timeout, new sessions of the origin speak HTTP/1.1 without trying HTTP/2
    /// ([`h2_scheme`](Self::h2_scheme)), even once its HTTP/1.1 sockets are all in use. Call it
    /// before dropping the [`H2DialLead`]: the sessions that waited on the dial then take
    /// HTTP/1.1 too, instead of dialling for HTTP/2 again one after another.
    pub fn chose_http1(&self, origin: &str) {
        let mut book = lock(&self.h2);
        book.http1
            .insert(origin.to_owned(), std::time::Instant::now());
    }

    /// Whether the client records its sessions ([`ClientBuilder::record_to`]): each HTTP/2
    /// session then gets a connection of its own from [`h2_recorded`](Self::h2_recorded)
    /// instead of joining or registering the origin's shared one.
    pub fn records(&self) -> bool {
        self.sink.is_some()
    }

    /// A recorded HTTP/2 connection for one session of a client that records, over a socket
    /// just opened with `scheme` and served through `io` ([`SharedH2::new_recorded`], with the
    /// client's sink and the session's number); `None` if the client does not record. It is not
    /// registered for the origin: no other session joins it. Join it
    /// ([`SessionDriver::join_h2`](crate::session::driver::SessionDriver::join_h2)) before its socket's reader
    /// starts.
    pub fn h2_recorded(
        &self,
        scheme: &'static str,
        budgets: &mcp_sansio::Budgets,
        io: Arc<dyn H2Io>,
    ) -> Option<Arc<SharedH2>> {
        let sink = self.sink.clone()?;
        Some(SharedH2::make(
            scheme,
            budgets,
            self.h2_max_streams,
            io,
            Some((sink, self.next_session())),
        ))
    }

    /// The live shared HTTP/2 connection of `origin`, if there is one: a new session joins it
    /// ([`SessionDriver::join_h2`](crate::session::driver::SessionDriver::join_h2)) instead of dialling.
    pub fn h2_connection(&self, origin: &str) -> Option<Arc<SharedH2>> {
        lock(&self.h2).live(origin)
    }

    /// How a new HTTP/2 session of `origin` gets its connection: it joins the live one, or
    /// dials it (one session at a time per origin: the others wait, and `wake` is called when
    /// the dial is over, after which they ask again).
    pub fn h2_route(&self, origin: &str, wake: Waker) -> H2Route {
        let mut book = lock(&self.h2);
        if let Some(conn) = book.live(origin) {
            crate::metrics::socket_reused(crate::metrics::Reuse::Multiplexed);
            return H2Route::Join(conn);
        }
        match book.dialling.get_mut(origin) {
            Some(waiting) => {
                waiting.push(wake);
                H2Route::Wait
            }
            None => {
                book.dialling.insert(origin.to_owned(), Vec::new());
                H2Route::Dial(H2DialLead {
                    book: self.h2.clone(),
                    origin: origin.to_owned(),
                })
            }
        }
    }

    /// Makes `conn`, just opened, the shared HTTP/2 connection of `origin`, unless a live one
    /// was registered meanwhile: that one is returned, and `conn` should be dropped (its socket
    /// closed unused).
    pub fn h2_register(&self, origin: &str, conn: Arc<SharedH2>) -> Arc<SharedH2> {
        let mut book = lock(&self.h2);
        match book.live(origin) {
            Some(c) => c,
            None => {
                book.conns.insert(origin.to_owned(), conn.clone());
                conn
            }
        }
    }

    /// Live shared HTTP/2 connections now (one per origin at most).
    pub fn h2_connections(&self) -> usize {
        lock(&self.h2)
            .conns
            .values()
            .filter(|c| !c.is_shut())
            .count()
    }

    /// Resolves `host` once and keeps the addresses the policy admits (blocking).
    pub fn vetted(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, TransportError> {
        Ok(vetted_addresses(
            self.resolver.as_ref(),
            &self.policy,
            host,
            port,
        )?)
    }
}

/// The shared HTTP/2 connections of a client, by origin, and the origins being dialled with the
/// sessions waiting for each. Dropped with the client: every connection, idle or not, is then
/// closed with GOAWAY(NO_ERROR).
pub(crate) struct H2Book {
    conns: HashMap<String, Arc<SharedH2>>,
    dialling: HashMap<String, Vec<Waker>>,
    /// When the TLS handshake of each origin's HTTP/2 dial last chose HTTP/1.1.
    http1: HashMap<String, std::time::Instant>,
    /// How long a connection no session is on stays open for the next one (the pool's).
    idle_timeout: Duration,
}

impl Drop for H2Book {
    fn drop(&mut self) {
        for conn in self.conns.values() {
            conn.close();
        }
    }
}

impl H2Book {
    pub(crate) fn new(idle_timeout: Duration) -> H2Book {
        H2Book {
            conns: HashMap::new(),
            dialling: HashMap::new(),
            http1: HashMap::new(),
            idle_timeout,
        }
    }

    /// Whether `origin`'s TLS handshake chose HTTP/1.1 within the idle timeout.
    fn chose_http1(&mut self, origin: &str) -> bool {
        match self.http1.get(origin) {
            Some(at) if at.elapsed() <= self.idle_timeout => true,
            Some(_) => {
                self.http1.remove(origin);
                false
            }
            None => false,
        }
    }

    fn live(&mut self, origin: &str) -> Option<Arc<SharedH2>> {
        match self.conns.get(origin) {
            Some(c) if c.reusable(self.idle_timeout) => Some(c.clone()),
            Some(_) => {
                self.conns.remove(origin);
                None
            }
            None => None,
        }
    }
}

/// What [`Shared::h2_route`] tells a new HTTP/2 session.
#[derive(Debug)]
pub enum H2Route {
    /// Join this live connection.
    Join(Arc<SharedH2>),
    /// Dial the origin: no connection is live and no other session dials it. Register the
    /// connection ([`Shared::h2_register`]) or fall back to HTTP/1.1, then drop the lead.
    Dial(H2DialLead),
    /// Another session is dialling the origin: wait for the waker, then ask again.
    Wait,
}

/// The one session dialling an origin's HTTP/2 connection. Dropping it (once the connection is
/// registered, or the dial failed or chose HTTP/1.1) wakes the sessions that waited.
pub struct H2DialLead {
    book: Arc<Mutex<H2Book>>,
    origin: String,
}

impl fmt::Debug for H2DialLead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("H2DialLead")
            .field("origin", &self.origin)
            .finish()
    }
}

impl Drop for H2DialLead {
    fn drop(&mut self) {
        let waiting = lock(&self.book).dialling.remove(&self.origin);
        for wake in waiting.into_iter().flatten() {
            wake();
        }
    }
}

impl<S> Shared<S> {
    /// The number of the next session's transcript, from 1.
    pub(crate) fn next_session(&self) -> u64 {
        self.sessions.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// What a runtime's [`Client`] is made of: the socket its pool keeps, and what connecting
/// gives on that runtime (a future on an async runtime, the session itself on threads).
pub trait ClientRuntime: Sized + 'static {
    /// The adapter's socket, kept in the idle pool.
    type Socket;
    /// What [`Client::connect`] returns.
    type Connect<'a>;
    /// Opens a session of `client` with `config` (see [`Client::connect`]).
    fn connect(client: &Client<Self>, config: mcp_sansio::Config) -> Self::Connect<'_>;
}

/// An MCP client on runtime `R`. Cheap to clone: clones share the address policy, resolver, TLS
/// configuration, idle-socket pool, HTTP/2 connections and the era hints learnt per server and
/// authorization context.
///
/// [`Client::new`] admits public addresses only ([`AddressPolicy::strict`]), resolves with the
/// system resolver and trusts the Mozilla roots of `webpki-roots`.
///
/// # HTTP/2
///
/// When the TLS handshake of an `https` endpoint negotiates `h2`, the session speaks HTTP/2 on the
/// origin's one HTTP/2 connection, shared by every session of the [`Client`]
/// ([`SharedH2`]): the first session to the origin dials (others connecting
/// meanwhile wait and join), every exchange of every session is a stream of that socket, driven by
/// the core's HTTP/2 client (every frame byte budgeted, each session keeping its own budgets), and
/// one fresh socket is dialled for all of them when the server sends GOAWAY or a request must be
/// retried on a fresh socket. A dropped session resets its own streams; when the last session
/// leaves, the socket stays idle for the next one (see [`SharedH2`]), and dropping
/// the client writes GOAWAY(NO_ERROR) and closes it. Otherwise the session speaks HTTP/1.1,
/// starting on the socket just dialled. [`Session::http_version`](crate::Session::http_version)
/// says which. [`ClientBuilder::http1_only`](crate::ClientBuilder::http1_only) turns HTTP/2 off;
/// [`ClientBuilder::h2_prior_knowledge`](crate::ClientBuilder::h2_prior_knowledge) speaks HTTP/2 in
/// clear text to `http` endpoints. A client that records gives each HTTP/2 session a socket of its
/// own, recorded as an HTTP/2 transcript
/// ([`ClientBuilder::record_to`](crate::ClientBuilder::record_to)); an origin with an idle HTTP/1.1
/// socket in the pool keeps HTTP/1.1. Each HTTP/2 socket is served by one task (a thread of the
/// runtime's executor) that writes what the connection sends and feeds it what it reads.
///
/// # Errors
///
/// Every operation fails with the core's [`Error`](mcp_sansio::Error), whose
/// [`kind`](mcp_sansio::Error::kind) is one of the three [`ErrorKind`](mcp_sansio::ErrorKind)s.
/// What an adapter observes reaches the core as a [`TransportError`]
/// and comes back as [`Error::Transport`](mcp_sansio::Error::Transport), of kind
/// `ConnectionFailed`:
///
/// | [`TransportErrorKind`](mcp_sansio::TransportErrorKind) | when |
/// |---|---|
/// | `AddressRefused` | the policy refused every address of the host; no socket was opened |
/// | `Resolve` | the name did not resolve, or to no address |
/// | `Connect` | no admitted address accepted a connection within the dial timeout |
/// | `Tls` | the TLS handshake failed (untrusted certificate, wrong name, …) |
/// | `Io` | writing the request or reading the response failed |
///
/// # Era hints
///
/// With era hints on (the default), the [`Client`] remembers the era and version a connection
/// negotiated, per server URL (path included) and authorization context, and offers them to the
/// next [`Client::connect`] with the same URL and context whose configuration has no hint of its
/// own: a modern server then connects without any request. A hint lives as long as the
/// `server/discover` answer's `ttlMs` allows (none when it declared 0), at most
/// [`MAX_ERA_HINT_TTL`](mcp_sansio::limits::MAX_ERA_HINT_TTL).
///
/// # Catalog cache
///
/// Off by default; `Client::builder().catalog_cache(true)` turns it on. A 2026-07-28 listing is
/// then reused by the client's next sessions of the same server URL, authorization context
/// (credential, DPoP key, grant), offered versions and declared capabilities for
/// min(`ttlMs`, 5 minutes): such a work item connects and lists with no request at all, and calls a
/// cached tool with its `x-mcp-header` parameters at once. It is off by default because a cached
/// listing hides the server's changes to its tools for that long. See [`cache`](crate::cache) for
/// its bounds, its invalidation and the shared store (`ClientBuilder::shared_store`) a platform of
/// many processes can give it.
pub struct Client<R: ClientRuntime> {
    shared: Arc<Shared<R::Socket>>,
}

impl<R: ClientRuntime> Clone for Client<R> {
    fn clone(&self) -> Self {
        Client {
            shared: self.shared.clone(),
        }
    }
}

impl<R: ClientRuntime> BuildClient for Client<R> {
    type Socket = R::Socket;
    fn from_shared(shared: Arc<Shared<R::Socket>>) -> Self {
        Client { shared }
    }
}

impl<R: ClientRuntime> Default for Client<R> {
    fn default() -> Self {
        Client::new()
    }
}

impl<R: ClientRuntime> fmt::Debug for Client<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.shared, f)
    }
}

impl<R: ClientRuntime> Client<R> {
    /// A client with the strict address policy (public addresses only), the system resolver
    /// and the webpki roots.
    pub fn new() -> Self {
        ClientBuilder::new().build()
    }

    /// A builder, starting from the defaults of [`Client::new`].
    pub fn builder() -> ClientBuilder<Self> {
        ClientBuilder::new()
    }

    /// Opens a session: negotiates the protocol with the server of `config`.
    ///
    /// Fails with the core's error: [`Error::Config`](mcp_sansio::Error::Config) for a
    /// configuration it refuses, a transport error
    /// ([`TransportErrorKind`](mcp_sansio::TransportErrorKind): `Resolve`, `AddressRefused`
    /// before any socket is opened, `Connect`, `Tls`, `Io`) when the server cannot be reached,
    /// or what the negotiation came to. When `config` carries no era hint and hints are on, the
    /// era this client learnt for the same URL and authorization context is offered (if it is
    /// fresh and `config` offers its version).
    pub fn connect(&self, config: mcp_sansio::Config) -> R::Connect<'_> {
        R::connect(self, config)
    }

    /// The state every session of this client shares.
    pub fn shared(&self) -> &Arc<Shared<R::Socket>> {
        &self.shared
    }

    /// The fresh era hint remembered for `config`'s server URL (path included) and
    /// authorization context, if any.
    pub fn hint(&self, config: &mcp_sansio::Config) -> Option<mcp_sansio::EraHint> {
        self.shared.hint(config)
    }

    /// Idle sockets held in the pool now.
    pub fn idle_sockets(&self) -> usize {
        self.shared.idle_sockets()
    }

    /// Live shared HTTP/2 connections of this client (one per origin at most).
    pub fn h2_connections(&self) -> usize {
        self.shared.h2_connections()
    }

    /// Forgets the tool pins of `config`'s server URL and authorization context (see
    /// [`crate::pins`]): the embedder accepts the tools as the server defines them now, and the
    /// next sight of each pins it again.
    pub fn forget_tool_pins(&self, config: &mcp_sansio::Config) {
        self.shared.pins.forget(config);
    }
}

/// What a runtime's [`Session`] is made of: the I/O of its exchanges, and how an operation runs
/// on that runtime (a future on an async runtime, the result itself on threads).
pub trait SessionRuntime: Sized + 'static {
    /// The I/O of the session's exchanges.
    type Io;
    /// What an operation giving `T` returns.
    type Op<'a, T: Send + 'a>;
    /// Runs `op` to its end, reporting a call's progress to `observer`, and gives what `then`
    /// makes of the completion.
    fn run<'a, T: Send + 'a>(
        session: &'a mut Session<Self>,
        op: crate::session::io::Start<'a>,
        observer: &'a mut dyn crate::session::io::CallObserver,
        then: fn(mcp_sansio::Completion) -> Result<T, mcp_sansio::Error>,
    ) -> Self::Op<'a, T>;
    /// Closes the session: runs [`Start::Close`](crate::session::io::Start::Close), closes every socket still
    /// serving one of its exchanges and ends its recording.
    fn close(session: Session<Self>) -> Self::Op<'static, ()>;
}

/// A connected MCP session on runtime `R`. Operations run one at a time, each within the budgets
/// of the configuration.
///
/// On an async runtime, dropping an operation's future before it ends (a caller's timeout, say)
/// cancels the operation's request and leaves the session usable: the HTTP/1.1 socket of its
/// exchange is closed (never pooled), its HTTP/2 stream is reset with RST_STREAM(CANCEL), and in a
/// legacy session (2025-11-25 and earlier, where a disconnect is no cancellation) one
/// `notifications/cancelled` naming the request is posted, best effort, within the close budget.
pub struct Session<R: SessionRuntime> {
    driver: crate::session::driver::SessionDriver,
    io: R::Io,
}

impl<R: SessionRuntime> fmt::Debug for Session<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.driver, f)
    }
}

impl<R: SessionRuntime> Session<R> {
    /// A session of `driver` whose exchanges run on `io` (for adapters).
    #[doc(hidden)]
    pub fn from_parts(driver: crate::session::driver::SessionDriver, io: R::Io) -> Self {
        Session { driver, io }
    }

    /// The session's driver and I/O (for adapters).
    #[doc(hidden)]
    pub fn parts(&mut self) -> (&mut crate::session::driver::SessionDriver, &mut R::Io) {
        (&mut self.driver, &mut self.io)
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> &str {
        self.driver.version()
    }

    /// The negotiated era.
    pub fn era(&self) -> mcp_sansio::Era {
        self.driver.era()
    }

    /// The server's name and version, if it reported them (not after a modern era hint, which
    /// connects without a request).
    pub fn server_info(&self) -> Option<&mcp_sansio::ServerInfo> {
        self.driver.server_info()
    }

    /// The server's `capabilities` as raw JSON (`ServerCapabilities`), from `server/discover`
    /// or `initialize`: absent after a modern era hint, which connects without a request, when
    /// the server sent none, or when they were too large to keep.
    pub fn capabilities(&self) -> Option<&serde_json::value::RawValue> {
        self.driver.capabilities()
    }

    /// The server's `instructions`: untrusted text from the server, cut to the core's bound,
    /// under the same conditions as [`capabilities`](Self::capabilities).
    pub fn instructions(&self) -> Option<&str> {
        self.driver.instructions()
    }

    /// The legacy session id, if the server assigned one.
    pub fn session_id(&self) -> Option<&str> {
        self.driver.session_id()
    }

    /// Sets the trace context of the operations that follow: every request they send carries
    /// its `traceparent` (and `tracestate`, `baggage`) in `params._meta`. `None` (and the
    /// default, unless [`Config::trace_context`](mcp_sansio::Config::trace_context) is set):
    /// each operation takes the current OpenTelemetry context (feature `opentelemetry`), or
    /// sends none.
    pub fn set_trace_context(&mut self, trace: Option<mcp_sansio::TraceContext>) {
        self.driver.set_trace_context(trace);
    }

    /// Raw bytes read so far (bounded by the byte budget).
    pub fn bytes_read(&self) -> u64 {
        self.driver.bytes_read()
    }

    /// The HTTP version the session's exchanges run on: `"HTTP/2"` or `"HTTP/1.1"`.
    pub fn http_version(&self) -> &'static str {
        self.driver.http_version()
    }

    /// The notes of the last listing or call under the tool-pin policy `warn`
    /// ([`ClientBuilder::tool_pins`]): each tool that changed since it was pinned. Empty when
    /// the policy is off, and when nothing changed.
    pub fn tool_changes(&self) -> &[mcp_sansio::ToolChange] {
        self.driver.tool_changes()
    }

    /// Lists every tool, following cursors to the end, within the page and list-time budgets.
    pub fn list_tools(&mut self) -> R::Op<'_, mcp_sansio::Catalog> {
        R::run(
            self,
            crate::session::io::Start::ListTools,
            no_observer(),
            crate::session::driver::SessionDriver::listed,
        )
    }

    /// Calls tool `name` with `arguments_json`, a JSON object sent verbatim (empty means `{}`).
    pub fn call_tool<'a>(
        &'a mut self,
        name: &'a str,
        arguments_json: &'a [u8],
    ) -> R::Op<'a, mcp_sansio::CallResult> {
        self.call_tool_with(name, arguments_json, no_observer())
    }

    /// Calls tool `name`, reporting progress and input requests to `observer`.
    pub fn call_tool_with<'a>(
        &'a mut self,
        name: &'a str,
        arguments_json: &'a [u8],
        observer: &'a mut dyn crate::session::io::CallObserver,
    ) -> R::Op<'a, mcp_sansio::CallResult> {
        let op = crate::session::io::Start::call(name, arguments_json);
        R::run(
            self,
            op,
            observer,
            crate::session::driver::SessionDriver::called,
        )
    }

    /// Resumes the task of `handle` (SEP-2663), persisted from another session, process or
    /// executor (`TaskHandle::to_bytes`, read back with `TaskHandle::from_bytes`): polls it with
    /// `tasks/get` from now on and returns the tool's result when the task completes, within its
    /// budgets (the handle's deadline, `task_polls`, the byte budget) and as the call that
    /// created it would have (`failed` is `Error::Rpc`, `cancelled` `TaskError::Cancelled`).
    /// The session must speak 2026-07-28 with `Config::tasks` on; a handle of another server or
    /// authorization context is refused (`TaskError::Handle`). A recording session records it
    /// as `op resume` with the handle rebound to the replay's stand-in credentials.
    pub fn resume_task<'a>(
        &'a mut self,
        handle: &'a mcp_sansio::task::TaskHandle,
    ) -> R::Op<'a, mcp_sansio::CallResult> {
        self.resume_task_with(handle, no_observer())
    }

    /// [`resume_task`](Self::resume_task), reporting the task's statuses, its updated handle and
    /// its input requests to `observer`.
    pub fn resume_task_with<'a>(
        &'a mut self,
        handle: &'a mcp_sansio::task::TaskHandle,
        observer: &'a mut dyn crate::session::io::CallObserver,
    ) -> R::Op<'a, mcp_sansio::CallResult> {
        let op = crate::session::io::Start::ResumeTask {
            handle,
            cancel: false,
        };
        R::run(
            self,
            op,
            observer,
            crate::session::driver::SessionDriver::called,
        )
    }

    /// One `tasks/get` of the task of `handle` (SEP-2663): checked as
    /// [`resume_task`](Self::resume_task) checks it (a handle of another server or authorization
    /// context is `TaskError::Handle`, nothing sent), then the task's report whatever its status
    /// (`TaskReport`: the status, `statusMessage`, `ttlMs`, `pollIntervalMs`, a `completed`
    /// task's result, a `failed` task's error). A `working` task is not waited for. The poll's
    /// own failures (`-32602` for an unknown task, transport, budgets) are errors.
    pub fn get_task<'a>(
        &'a mut self,
        handle: &'a mcp_sansio::task::TaskHandle,
    ) -> R::Op<'a, mcp_sansio::task::TaskReport> {
        let op = crate::session::io::Start::GetTask { handle };
        R::run(
            self,
            op,
            no_observer(),
            crate::session::driver::SessionDriver::reported,
        )
    }

    /// Cancels the task of `handle`: resumes it as [`resume_task`](Self::resume_task) does, sends
    /// `tasks/cancel` (never `notifications/cancelled`) and polls to a terminal status within
    /// `task_cancel_time` (`Budget::TaskCancelTime`). The task ends `cancelled` as
    /// `Err(Error::Task(TaskError::Cancelled { .. }))`: the outcome a cancel asks for. A task that
    /// completed before the server acted on the cancel gives its result (`Ok`), one that failed
    /// its error.
    pub fn cancel_task<'a>(
        &'a mut self,
        handle: &'a mcp_sansio::task::TaskHandle,
    ) -> R::Op<'a, mcp_sansio::CallResult> {
        let op = crate::session::io::Start::ResumeTask {
            handle,
            cancel: true,
        };
        R::run(
            self,
            op,
            no_observer(),
            crate::session::driver::SessionDriver::called,
        )
    }

    /// Closes the session: a legacy session is ended with `DELETE` within the close budget. Every
    /// socket still serving an exchange of the session is closed; sockets parked earlier stay in
    /// the client's pool for other sessions.
    pub fn close(self) -> R::Op<'static, ()> {
        R::close(self)
    }
}

/// An observer that declines everything, for as long as needed: a zero-sized value, so leaking
/// its box allocates nothing.
fn no_observer() -> &'static mut crate::session::io::NoObserver {
    Box::leak(Box::new(crate::session::io::NoObserver))
}
