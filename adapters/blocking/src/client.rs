//! The client: the network guard, the TLS configuration, the idle pool and the era hints, shared
//! by every session it opens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_sansio::{Config, EraHint, Error};
use mcp_sansio_net::{
    AddressPolicy, IdlePool, PoolLimits, Resolve, SystemResolver, DEFAULT_DIAL_TIMEOUT,
};

use crate::exchange::Stream;
use crate::session::Session;

/// What every session of a client shares.
pub(crate) struct Inner {
    pub(crate) policy: AddressPolicy,
    pub(crate) resolver: Box<dyn Resolve>,
    pub(crate) tls: Arc<rustls::ClientConfig>,
    pub(crate) dial_timeout: Duration,
    pub(crate) pool: Mutex<IdlePool<Stream>>,
    era_hints: bool,
    hints: Mutex<HashMap<String, EraHint>>,
    pub(crate) sink: Option<Arc<dyn mcp_sansio_transcript::TranscriptSink>>,
    pub(crate) sessions: std::sync::atomic::AtomicU64,
}

/// Locks `m`, recovering the data of a poisoned lock: pool and hint bookkeeping stays consistent
/// even if a holder panicked, since every update is a single insert or removal.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Inner {
    /// The hint learnt for `origin`, if hints are on.
    fn hint(&self, origin: &str) -> Option<EraHint> {
        if !self.era_hints {
            return None;
        }
        lock(&self.hints).get(origin).cloned()
    }

    /// Remembers what a negotiation (not a hint) found for `origin`.
    pub(crate) fn learn(&self, origin: &str, hint: EraHint) {
        if self.era_hints {
            lock(&self.hints).insert(origin.to_owned(), hint);
        }
    }
}

/// A blocking MCP client. Cheap to clone: clones share the address policy, resolver, TLS
/// configuration, idle-socket pool and era hints.
///
/// [`Client::new`] admits public addresses only ([`AddressPolicy::strict`]), resolves with the
/// system resolver and trusts the Mozilla roots of `webpki-roots`.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("policy", &self.inner.policy)
            .field("dial_timeout", &self.inner.dial_timeout)
            .field("era_hints", &self.inner.era_hints)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client with the strict address policy, the system resolver and the webpki roots.
    pub fn new() -> Client {
        Client::builder().build()
    }

    /// A builder to change the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            policy: AddressPolicy::strict(),
            resolver: None,
            tls: None,
            extra_roots: Vec::new(),
            dial_timeout: DEFAULT_DIAL_TIMEOUT,
            pool_limits: PoolLimits::default(),
            era_hints: true,
            sink: None,
        }
    }

    /// Negotiates the protocol with the server of `config` and returns the session.
    ///
    /// Fails with the core's error: [`Error::Config`] for a configuration it refuses, a
    /// transport error ([`mcp_sansio::TransportErrorKind`]: `Resolve`, `AddressRefused`
    /// before any socket is opened, `Connect`, `Tls`, `Io`) when the server cannot be reached,
    /// or what the negotiation came to.
    ///
    /// When `config` carries no era hint and hints are on, the era this client learnt for the
    /// same origin is offered (if `config` offers its version).
    pub fn connect(&self, mut config: Config) -> Result<Session, Error> {
        let origin = config.endpoint.origin();
        if config.era_hint.is_none() {
            if let Some(hint) = self.inner.hint(&origin) {
                let offered = match hint.era {
                    mcp_sansio::Era::Modern => &config.modern_versions,
                    mcp_sansio::Era::Legacy => &config.legacy_versions,
                };
                if offered.contains(&hint.version) {
                    config.era_hint = Some(hint);
                }
            }
        }
        Session::connect(self.inner.clone(), origin, config)
    }

    /// The era hint remembered for `origin` (as [`Endpoint::origin`] spells it), if any.
    ///
    /// [`Endpoint::origin`]: mcp_sansio::Endpoint::origin
    pub fn hint(&self, origin: &str) -> Option<EraHint> {
        lock(&self.inner.hints).get(origin).cloned()
    }

    /// Idle sockets held in the pool now.
    pub fn idle_sockets(&self) -> usize {
        lock(&self.inner.pool).len()
    }
}

/// Builds a [`Client`].
pub struct ClientBuilder {
    policy: AddressPolicy,
    resolver: Option<Box<dyn Resolve>>,
    tls: Option<Arc<rustls::ClientConfig>>,
    extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    dial_timeout: Duration,
    pool_limits: PoolLimits,
    era_hints: bool,
    sink: Option<Arc<dyn mcp_sansio_transcript::TranscriptSink>>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("policy", &self.policy)
            .field("dial_timeout", &self.dial_timeout)
            .field("pool_limits", &self.pool_limits)
            .field("era_hints", &self.era_hints)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The address policy every dial is judged by. Default [`AddressPolicy::strict`].
    pub fn policy(mut self, p: AddressPolicy) -> Self {
        self.policy = p;
        self
    }

    /// The resolver of host names. Default [`SystemResolver`].
    pub fn resolver(mut self, r: impl Resolve) -> Self {
        self.resolver = Some(Box::new(r));
        self
    }

    /// The TLS configuration. Default [`mcp_sansio_net::tls::client_config`]. Its ALPN list
    /// should offer `http/1.1` only.
    pub fn tls_config(mut self, c: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(c);
        self
    }

    /// Trusts `certs` as roots besides the webpki roots, for servers behind a private certificate
    /// authority; [`read_ca_certificates`](crate::read_ca_certificates) reads them from a
    /// PEM file. Adds to the certificates of earlier calls. Ignored when
    /// [`tls_config`](Self::tls_config) sets the whole configuration.
    pub fn add_root_certificates(
        mut self,
        certs: impl IntoIterator<Item = rustls::pki_types::CertificateDer<'static>>,
    ) -> Self {
        self.extra_roots.extend(certs);
        self
    }

    /// The deadline of one dial attempt (TCP connect, then the TLS handshake). Default
    /// [`DEFAULT_DIAL_TIMEOUT`]; zero means the default. The core's request budget bounds the
    /// whole exchange anyway.
    pub fn dial_timeout(mut self, d: Duration) -> Self {
        self.dial_timeout = if d.is_zero() { DEFAULT_DIAL_TIMEOUT } else { d };
        self
    }

    /// The limits of the idle-socket pool.
    pub fn pool_limits(mut self, l: PoolLimits) -> Self {
        self.pool_limits = l;
        self
    }

    /// Whether the era learnt per origin is offered to the next connect. Default on.
    pub fn era_hints(mut self, on: bool) -> Self {
        self.era_hints = on;
        self
    }

    /// Records every session of the client to `sink`: one transcript per session (connect to
    /// close or drop), written as it goes, that replays against the core exactly. Secrets are
    /// redacted before the sink sees them. Default: no recording.
    pub fn record_to(mut self, sink: Arc<dyn mcp_sansio_transcript::TranscriptSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The client.
    pub fn build(self) -> Client {
        Client {
            inner: Arc::new(Inner {
                policy: self.policy,
                resolver: self.resolver.unwrap_or_else(|| Box::new(SystemResolver)),
                tls: self.tls.unwrap_or_else(|| {
                    if self.extra_roots.is_empty() {
                        mcp_sansio_net::client_config()
                    } else {
                        mcp_sansio_net::client_config_with_extra_roots(&self.extra_roots)
                    }
                }),
                dial_timeout: self.dial_timeout,
                pool: Mutex::new(IdlePool::new(self.pool_limits)),
                era_hints: self.era_hints,
                hints: Mutex::new(HashMap::new()),
                sink: self.sink,
                sessions: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }
}
