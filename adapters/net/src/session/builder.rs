//! The one builder of every adapter's client ([`ClientBuilder`]): the address policy, the
//! resolver, the TLS configuration, the dial and write limits, the idle pool, the era hints, the
//! catalog cache and the transcript sink, the same defaults in every adapter.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::EraHints;
use mcp_sansio_transcript::TranscriptSink;
use rustls::pki_types::CertificateDer;

use crate::guard::dial::effective_dial_timeout;
use crate::guard::dial::DEFAULT_DIAL_TIMEOUT;
use crate::guard::{AddressPolicy, IdlePool, PoolLimits, Resolve, SystemResolver};
use crate::session::client::{H2Book, HintBook, Shared};

/// Default time a write to an HTTP/2 socket may wait on the server (which stopped reading)
/// before the socket fails: a server that stops reading cannot hold the socket forever.
pub const DEFAULT_WRITE_STALL: Duration = Duration::from_secs(30);

/// A client type a [`ClientBuilder`] builds: an adapter's `Client`, made from the shared state.
pub trait BuildClient: Sized {
    /// The adapter's socket, kept in the idle pool.
    type Socket;
    /// The client over `shared`.
    fn from_shared(shared: Arc<Shared<Self::Socket>>) -> Self;
}

/// Builds a client of an adapter (`C`). Every default is the same in both adapters.
pub struct ClientBuilder<C> {
    policy: AddressPolicy,
    resolver: Option<Arc<dyn Resolve>>,
    tls: Option<Arc<rustls::ClientConfig>>,
    extra_roots: Vec<CertificateDer<'static>>,
    dial_timeout: Duration,
    write_stall: Duration,
    pool_limits: PoolLimits,
    era_hints: bool,
    catalog_cache: bool,
    cache_store: Option<Arc<dyn crate::cache::Store>>,
    cache_max_ttl: Duration,
    tool_pins: mcp_sansio::PinPolicy,
    http1_only: bool,
    h2c: bool,
    h2_max_streams: Option<u32>,
    sink: Option<Arc<dyn TranscriptSink>>,
    client: PhantomData<fn() -> C>,
}

impl<C> fmt::Debug for ClientBuilder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("policy", &self.policy)
            .field("dial_timeout", &self.dial_timeout)
            .field("pool_limits", &self.pool_limits)
            .field("era_hints", &self.era_hints)
            .field("catalog_cache", &self.catalog_cache)
            .field("tool_pins", &self.tool_pins)
            .field("h2_max_streams", &self.h2_max_streams)
            .finish_non_exhaustive()
    }
}

impl<C: BuildClient> Default for ClientBuilder<C> {
    fn default() -> Self {
        ClientBuilder::new()
    }
}

impl<C: BuildClient> ClientBuilder<C> {
    /// The defaults: the strict address policy (public addresses only), the system resolver, the
    /// webpki roots, [`DEFAULT_DIAL_TIMEOUT`], the default pool limits, era hints on, the catalog
    /// cache off, no recording.
    pub fn new() -> Self {
        ClientBuilder {
            policy: AddressPolicy::strict(),
            resolver: None,
            tls: None,
            extra_roots: Vec::new(),
            dial_timeout: DEFAULT_DIAL_TIMEOUT,
            write_stall: DEFAULT_WRITE_STALL,
            pool_limits: PoolLimits::default(),
            era_hints: true,
            catalog_cache: false,
            cache_store: None,
            cache_max_ttl: crate::cache::DEFAULT_MAX_TTL,
            tool_pins: mcp_sansio::PinPolicy::Off,
            http1_only: false,
            h2c: false,
            h2_max_streams: None,
            sink: None,
            client: PhantomData,
        }
    }

    /// The address policy every dial is judged by. Default: [`AddressPolicy::strict`].
    pub fn policy(mut self, p: AddressPolicy) -> Self {
        self.policy = p;
        self
    }

    /// The resolver of host names. Default: [`SystemResolver`].
    pub fn resolver(mut self, r: impl Resolve) -> Self {
        self.resolver = Some(Arc::new(r));
        self
    }

    /// The rustls configuration for `https` endpoints. Default: [`crate::client_config`]
    /// (webpki roots, ALPN `http/1.1`). Its ALPN list should offer `http/1.1` only: where the
    /// adapter speaks HTTP/2, a copy offering `h2` first is made of it.
    ///
    /// TLS session resumption: the client's own configuration keeps the sessions of each origin
    /// (scheme, host and port) apart, for the last 32 origins it dialled, so that every origin
    /// costs one full handshake per client. A configuration given here is used as given, with
    /// its own `resumption` setting (rustls's default store, keyed by server name alone, or
    /// none): its sessions are shared by every client it is given to, and two origins on one
    /// host share one server name's sessions.
    pub fn tls_config(mut self, c: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(c);
        self
    }

    /// Trusts `certs` as roots besides the webpki roots, for servers behind a private certificate
    /// authority; [`read_ca_certificates`](crate::read_ca_certificates) reads them from a PEM
    /// file. Adds to the certificates of earlier calls. Ignored when
    /// [`tls_config`](Self::tls_config) sets the whole configuration.
    pub fn add_root_certificates(
        mut self,
        certs: impl IntoIterator<Item = CertificateDer<'static>>,
    ) -> Self {
        self.extra_roots.extend(certs);
        self
    }

    /// The deadline of one dial: the TCP connects to every admitted address in turn and the TLS
    /// handshake, together. Default [`DEFAULT_DIAL_TIMEOUT`]; zero means the default. The core's
    /// request budget bounds the whole exchange anyway.
    pub fn dial_timeout(mut self, d: Duration) -> Self {
        self.dial_timeout = effective_dial_timeout(d);
        self
    }

    /// How long a write to an HTTP/2 socket may wait on a server that stopped reading before
    /// the socket fails, failing every stream on it. Default [`DEFAULT_WRITE_STALL`]
    /// (30 s); zero means the default. The blocking adapter fails a write that makes no progress
    /// for this long; the tokio adapter one that has not finished within it.
    pub fn write_stall(mut self, d: Duration) -> Self {
        self.write_stall = if d.is_zero() { DEFAULT_WRITE_STALL } else { d };
        self
    }

    /// The limits of the idle-socket pool.
    pub fn pool_limits(mut self, l: PoolLimits) -> Self {
        self.pool_limits = l;
        self
    }

    /// Whether listings are cached across the client's sessions (2026-07-28 `ttlMs`, SEP-2549;
    /// see [`crate::cache`]). **Default off**: a cached listing hides a server's changes to its
    /// tools for up to its lifetime, which a client opts into. On, a session of the same server
    /// URL, the same authorization context ([`AuthContext`](mcp_sansio::AuthContext): bearer or
    /// DPoP token and key, grant, or none), the same offered versions and declared capabilities
    /// lists with no request while a listing is fresh, and calls a cached tool with its
    /// `x-mcp-header` parameters without a `-32020` round trip. Entries live min(`ttlMs`,
    /// [`catalog_cache_max_ttl`](Self::catalog_cache_max_ttl)); they are kept per authorization
    /// context even when the server declares `cacheScope: public`. A client that records
    /// transcripts does not use the cache (a transcript is what the session did on the wire).
    pub fn catalog_cache(mut self, on: bool) -> Self {
        self.catalog_cache = on;
        self
    }

    /// A store shared beyond this client (by a platform's executor processes, say), behind the
    /// catalog cache and the era hints: listings and learnt eras are written to it, and read
    /// from it when this client has none. Every entry read back is checked again (a malformed
    /// one is a miss). Default: none; the catalog cache then lives in a
    /// [`MemoryStore`](crate::cache::MemoryStore) of
    /// [`DEFAULT_MAX_BYTES`](crate::cache::DEFAULT_MAX_BYTES) and the era hints in the client.
    pub fn shared_store(mut self, store: Arc<dyn crate::cache::Store>) -> Self {
        self.cache_store = Some(store);
        self
    }

    /// The longest a cached listing lives, whatever its `ttlMs`. Default
    /// [`DEFAULT_MAX_TTL`](crate::cache::DEFAULT_MAX_TTL) (5 minutes).
    pub fn catalog_cache_max_ttl(mut self, d: Duration) -> Self {
        self.cache_max_ttl = d;
        self
    }

    /// What every session does with a tool that changed since it was pinned (see
    /// [`crate::pins`]): [`PinPolicy::Off`](mcp_sansio::PinPolicy::Off) (the default),
    /// `Warn` (the operation goes on with a note,
    /// [`Session::tool_changes`](crate::Session::tool_changes)) or `Refuse` (a listing that
    /// shows a changed tool fails, a call of one fails before it is sent). A session's
    /// [`Config::tool_pins`](mcp_sansio::Config::tool_pins) may be stricter. Pins live in the
    /// [`shared_store`](Self::shared_store) if there is one (a fleet shares them), else in the
    /// client's memory.
    pub fn tool_pins(mut self, policy: mcp_sansio::PinPolicy) -> Self {
        self.tool_pins = policy;
        self
    }

    /// Whether the era learnt per server and authorization context is offered to the next
    /// connect. Default on.
    pub fn era_hints(mut self, on: bool) -> Self {
        self.era_hints = on;
        self
    }

    /// Forces HTTP/1.1: TLS offers ALPN `http/1.1` only and
    /// [`h2_prior_knowledge`](Self::h2_prior_knowledge) is ignored. Default off: both adapters
    /// offer ALPN `h2` then `http/1.1` and speak HTTP/2 where the server chooses it, every
    /// session of the client to one origin sharing one HTTP/2 socket
    /// ([`SharedH2`](crate::SharedH2)). A client that records ([`record_to`](Self::record_to)) negotiates
    /// HTTP/2 the same way, each of its sessions on an HTTP/2 socket of its own.
    pub fn http1_only(mut self, on: bool) -> Self {
        self.http1_only = on;
        self
    }

    /// Speaks HTTP/2 with prior knowledge (h2c, no upgrade) to `http` endpoints: the server must
    /// speak HTTP/2 in clear text, as test servers behind a trusted network may. Default off.
    pub fn h2_prior_knowledge(mut self, on: bool) -> Self {
        self.h2c = on;
        self
    }

    /// Streams each HTTP/2 socket of the client opens at once, at most: the work items of an
    /// origin's shared socket beyond them wait for a stream slot, first come first served. The
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS caps it further; before its SETTINGS arrive a
    /// socket opens one stream. Default [`H2Config::max_streams`](mcp_sansio::h2::H2Config)
    /// (100: as many as the server allows, up to the least RFC 9113 §6.5.2 recommends a server
    /// allow); 0 is taken as 1.
    ///
    /// A request's time budget counts from when its operation made it, so the time it waits
    /// for a slot counts against it (`request_time_ms`, `list_time_ms`, `call_time_ms`): a
    /// request still waiting at its deadline fails with that budget and never opens a stream.
    pub fn h2_max_streams(mut self, n: u32) -> Self {
        self.h2_max_streams = Some(n.max(1));
        self
    }

    /// Records every session of the client to `sink`: one transcript per session (connect to
    /// close or drop), written as it goes, that replays against the core exactly. Secrets are
    /// redacted before the sink sees them. Default: no recording.
    ///
    /// Recording does not change the HTTP version: an HTTP/1.1 session is recorded as HTTP/1.1
    /// exchanges, an HTTP/2 session (ALPN `h2`, or [`h2_prior_knowledge`](Self::h2_prior_knowledge))
    /// as an HTTP/2 transcript (`config http 2`) of the frames on its sockets. A transcript is
    /// one session's view, so a client that records gives **each HTTP/2 session a socket of its
    /// own** (and a fresh one when the server sends GOAWAY): its sessions do not share the
    /// origin's HTTP/2 socket as those of a client that does not record do. That recorded
    /// session moves to a fresh socket as soon as it is open, as its replay does. See
    /// `docs/transcripts.md`.
    pub fn record_to(mut self, sink: Arc<dyn TranscriptSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The client.
    pub fn build(self) -> C {
        let given = self.tls.is_some();
        let tls = self.tls.unwrap_or_else(|| {
            if self.extra_roots.is_empty() {
                crate::client_config()
            } else {
                crate::client_config_with_extra_roots(&self.extra_roots)
            }
        });
        let http1_only = self.http1_only;
        C::from_shared(Arc::new(Shared {
            policy: self.policy,
            resolver: self.resolver.unwrap_or_else(|| Arc::new(SystemResolver)),
            tls_h2: crate::guard::tls::with_h2_alpn(&tls),
            origin_tls: (!given).then(|| crate::guard::tls::OriginSessions::new(tls.clone())),
            tls,
            http1_only,
            h2c: self.h2c && !http1_only,
            h2_max_streams: self.h2_max_streams,
            dial_timeout: self.dial_timeout,
            write_stall: self.write_stall,
            pool: Mutex::new(IdlePool::new(self.pool_limits)),
            h2: Arc::new(Mutex::new(H2Book::new(self.pool_limits.idle_timeout))),
            hints: Arc::new(HintBook {
                on: self.era_hints,
                hints: Mutex::new(EraHints::new()),
                store: self.cache_store.clone(),
            }),
            pins: Arc::new(crate::pins::PinBook::new(
                self.cache_store.clone().unwrap_or_else(|| {
                    Arc::new(crate::cache::MemoryStore::new(
                        crate::pins::DEFAULT_MAX_BYTES,
                    ))
                }),
                self.tool_pins,
            )),
            cache: (self.catalog_cache && self.sink.is_none()).then(|| {
                let store = self.cache_store.unwrap_or_else(|| {
                    Arc::new(crate::cache::MemoryStore::new(
                        crate::cache::DEFAULT_MAX_BYTES,
                    ))
                });
                Arc::new(crate::cache::CatalogCache::new(store, self.cache_max_ttl))
            }),
            sink: self.sink,
            sessions: AtomicU64::new(0),
        }))
    }
}
