//! Negotiation: the `server/discover` probe, the legacy `initialize` handshake, era hints and
//! the one re-negotiation after a wrong hint.

use super::*;

impl Connection {
    /// Classifies the answer to `server/discover`.
    pub(super) fn classify_discover(&self, outcome: Outcome<'_>) -> Answer {
        match outcome {
            Outcome::Result(result) => match parse_discover(result) {
                Ok(d) => {
                    let modern = self.best_modern(&d.supported);
                    let legacy = d
                        .supported
                        .iter()
                        .any(|v| self.config.legacy_versions.contains(v));
                    Answer::Discovered {
                        modern,
                        legacy,
                        supported: d.supported,
                        server: d.server,
                        cache: d.cache,
                    }
                }
                Err(reason) => Answer::Unusable(invalid_answer("server/discover", reason)),
            },
            Outcome::RpcError { status, error } if MODERN_ERROR_CODES.contains(&error.code) => {
                if error.code != UNSUPPORTED_VERSION {
                    return Answer::ModernError(error.to_error(status));
                }
                let supported = supported_versions(error.data);
                let mutual = self.best_modern(&supported);
                Answer::VersionRefused { mutual, supported }
            }
            Outcome::RpcError { status: 404, error } if error.code == METHOD_NOT_FOUND => {
                Answer::DiscoverUnimplemented
            }
            Outcome::RpcError { status, .. } | Outcome::Status(status)
                if (400..500).contains(&status) || status == 200 =>
            {
                Answer::OtherEra(Error::HttpStatus { status })
            }
            Outcome::RpcError { status, .. } | Outcome::Status(status) => {
                Answer::Unusable(Error::HttpStatus { status })
            }
            Outcome::Accepted => Answer::Unusable(Error::HttpStatus { status: 202 }),
        }
    }

    /// Classifies the answer to `initialize`.
    pub(super) fn classify_initialize(&self, outcome: Outcome<'_>) -> Answer {
        match outcome {
            Outcome::Result(result) => match parse_initialize(result) {
                Ok((version, server)) => {
                    let offered = self.config.legacy_versions.contains(&version);
                    Answer::Initialized {
                        version,
                        offered,
                        server,
                    }
                }
                Err(reason) => Answer::Unusable(invalid_answer("initialize", reason)),
            },
            Outcome::RpcError { status, error } => {
                let modern = MODERN_ERROR_CODES.contains(&error.code)
                    || (status == 404 && error.code == METHOD_NOT_FOUND);
                match modern {
                    true => Answer::ModernError(error.to_error(status)),
                    false => Answer::Unusable(error.to_error(status)),
                }
            }
            Outcome::Status(status) if (400..500).contains(&status) => {
                Answer::OtherEra(status_error(status))
            }
            Outcome::Status(status) => Answer::Unusable(status_error(status)),
            Outcome::Accepted => Answer::Unusable(Error::HttpStatus { status: 202 }),
        }
    }

    pub(super) fn best_modern(&self, supported: &[String]) -> Option<String> {
        self.config
            .modern_versions
            .iter()
            .find(|v| supported.contains(v))
            .cloned()
    }

    pub(super) fn no_mutual(&self, theirs: &[String], all: bool) -> Error {
        let mut ours = self.config.modern_versions.clone();
        if all
            || theirs
                .iter()
                .all(|v| v.as_str() < crate::config::MODERN_VERSION)
        {
            ours.extend(self.config.legacy_versions.iter().cloned());
        }
        Error::NoMutualVersion {
            ours,
            theirs: theirs.iter().take(16).map(|v| truncated(v, 64)).collect(),
        }
    }

    pub(super) fn connected(&mut self, now: Instant, server: Announced) {
        let (era, version) = match &self.session {
            Session::Modern { version } => (Era::Modern, version.clone()),
            Session::Legacy { version, .. } => (Era::Legacy, version.clone()),
            Session::None => return,
        };
        // The legacy session's standalone stream, if it listens: sent before the operation a
        // re-negotiation restarts, so that the server has it when that request arrives.
        let until = self.machine.deadline().map(|d| d.at);
        self.listen_keep(now, until);
        self.events.push_back(Event::Connected {
            era,
            version,
            server_info: server.server_info,
            from_hint: false,
            capabilities: server.capabilities,
            instructions: server.instructions,
        });
        // Straight on to the operation a re-negotiation interrupted, if any, within its own
        // deadline: a listing from its first page (still for the call it may run for), a call's
        // round again.
        let restart = self.machine.restart_step();
        let req = restart.map(|(step, deadline)| self.new_request(now, step, Some(deadline)));
        let sends = req.is_some();
        self.machine.connected(req);
        if sends {
            self.send_pending(now, false, None);
        }
    }

    /// Re-negotiates after an era hint proved wrong (the machine chose it and settled the era),
    /// then restarts the operation: from the probe, or straight to `initialize` when the probe
    /// already found no `server/discover` (`probe` false).
    pub(super) fn renegotiate(&mut self, now: Instant, probe: bool) {
        self.discover_cache = None;
        self.listen_end();
        self.session = Session::None;
        if probe {
            self.start_probe(now);
        } else {
            self.start_initialize(now, false);
        }
    }

    /// Starts a new legacy session for the running operation after the server ended the last
    /// one: `initialize` again (the old id is forgotten), then the operation restarts within its
    /// own deadline.
    pub(super) fn new_session(&mut self, now: Instant) {
        self.listen_end();
        self.session = Session::None;
        self.start_initialize(now, false);
    }

    /// Sends `server/discover` offering the newest modern version (or `initialize` if none is
    /// offered), for the caller's `connect` or a re-negotiation.
    pub(super) fn start_probe(&mut self, now: Instant) {
        match self.config.modern_versions.first().cloned() {
            Some(version) => {
                let step = Step::Discover {
                    attempt: 0,
                    version,
                };
                let req = self.new_request(now, step, None);
                self.machine.discover(req);
                self.send_pending(now, false, None);
            }
            None => self.start_initialize(now, false),
        }
    }

    /// Sends `initialize`; `hinted` if a legacy era hint skipped the probe.
    pub(super) fn start_initialize(&mut self, now: Instant, hinted: bool) {
        let req = self.new_request(now, Step::initialize(), None);
        self.machine.initialize(req, hinted);
        self.send_pending(now, false, None);
    }

    /// Legacy sessions: record the id from `initialize`, then insist it never changes.
    pub(super) fn check_session_header(&mut self, head: &ResponseHead) -> Result<(), Error> {
        let Some(raw) = head.header("mcp-session-id") else {
            return Ok(());
        };
        let invalid = |reason| Error::Protocol(ProtocolError::InvalidSession { reason });
        match (&self.session, self.machine.req_mut().map(|p| &mut p.step)) {
            (Session::Modern { .. }, _) => Ok(()), // modern servers have no sessions: ignored
            (_, Some(Step::Initialize { session_id })) => {
                if raw.is_empty()
                    || raw.len() > MAX_SESSION_ID
                    || !raw.iter().all(|b| (0x21..=0x7e).contains(b))
                {
                    return Err(invalid("not 1 to 1024 visible ASCII characters"));
                }
                // Kept with the request until its answer proves a session was established.
                *session_id = Some(String::from_utf8_lossy(raw).into_owned());
                Ok(())
            }
            (Session::Legacy { session_id, .. }, _) => match session_id {
                Some(s) if s.as_bytes() == raw => Ok(()),
                _ => Err(invalid("the session id changed during the connection")),
            },
            _ => Ok(()),
        }
    }
}

/// `-32022`: unsupported protocol version.
pub(super) const UNSUPPORTED_VERSION: i64 = -32022;

/// `-32021`: the server requires a client capability this client did not declare.
pub(super) const MISSING_CAPABILITY: i64 = -32021;

/// `-32601`: method not found (a modern server answers it with HTTP 404).
pub(super) const METHOD_NOT_FOUND: i64 = -32601;

/// Whether the negotiated era may still prove wrong: data of the states (`Ready`'s, and a
/// running operation's [`Recovery`]), never of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hint {
    /// Taken from the era hint and not yet confirmed by an answer: a wrong-era answer
    /// re-negotiates, once.
    Unproven,
    /// Modern, because `server/discover` was answered 404 with `-32601` (a modern server that
    /// does not implement it) and nothing has confirmed it since: a wrong-era answer falls back
    /// to `initialize`, once.
    Undiscovered,
    /// Negotiated by request, confirmed by an answer, or re-negotiated already: never
    /// re-negotiated.
    Settled,
}

/// What the connection has negotiated.

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Session {
    None,
    Modern {
        version: String,
    },
    Legacy {
        version: String,
        session_id: Option<String>,
        /// Whether the server's `initialize` answer declared `tasks.requests.tools.call`
        /// (2025-11-25): only then does a tool's `execution.taskSupport` count.
        tool_tasks: bool,
    },
}

pub(super) struct Discovered {
    pub(super) supported: Vec<String>,
    pub(super) server: Announced,
    /// Its `ttlMs` and `cacheScope`.
    pub(super) cache: crate::list::CacheHint,
}

/// What the server said of itself while negotiating (`server/discover`'s or `initialize`'s
/// answer), reported with [`Event::Connected`].
#[derive(Clone, Debug, Default)]
pub(super) struct Announced {
    pub(super) server_info: Option<ServerInfo>,
    /// `capabilities`, raw, if at most [`MAX_CAPABILITIES_BYTES`].
    pub(super) capabilities: Option<Box<RawValue>>,
    /// `instructions`, cut to [`MAX_INSTRUCTIONS_BYTES`].
    pub(super) instructions: Option<String>,
}

impl Announced {
    fn new(
        server_info: Option<ServerInfo>,
        capabilities: Option<&RawValue>,
        instructions: Option<alloc::borrow::Cow<'_, str>>,
    ) -> Announced {
        Announced {
            server_info,
            capabilities: capabilities
                .filter(|c| c.get() != "null" && c.get().len() <= MAX_CAPABILITIES_BYTES)
                .map(|c| c.to_owned()),
            instructions: instructions.map(|i| truncated(&i, MAX_INSTRUCTIONS_BYTES)),
        }
    }
}

pub(super) fn parse_discover(result: RawJson<'_>) -> Result<Discovered, String> {
    #[derive(Deserialize)]
    struct Wire<'a> {
        #[serde(rename = "supportedVersions")]
        supported: Vec<String>,
        #[serde(rename = "serverInfo", default)]
        server_info: Option<ServerInfo>,
        #[serde(default, borrow)]
        capabilities: Option<&'a RawValue>,
        #[serde(default, borrow)]
        instructions: Option<alloc::borrow::Cow<'a, str>>,
        #[serde(rename = "resultType", default, borrow)]
        result_type: Option<&'a str>,
        #[serde(rename = "_meta", default)]
        meta: Option<Meta>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/serverInfo", default)]
        server_info: Option<ServerInfo>,
    }
    let w: Wire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    if !matches!(w.result_type, None | Some("complete")) {
        return Err("unexpected resultType".into());
    }
    let server_info = w.meta.and_then(|m| m.server_info).or(w.server_info);
    Ok(Discovered {
        supported: w.supported,
        server: Announced::new(server_info, w.capabilities, w.instructions),
        cache: crate::list::PageHint::of_object(result.get().as_bytes()).hint(),
    })
}

pub(super) fn parse_initialize(result: RawJson<'_>) -> Result<(String, Announced), String> {
    #[derive(Deserialize)]
    struct Wire<'a> {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
        #[serde(rename = "serverInfo", default)]
        server_info: Option<ServerInfo>,
        #[serde(default, borrow)]
        capabilities: Option<&'a RawValue>,
        #[serde(default, borrow)]
        instructions: Option<alloc::borrow::Cow<'a, str>>,
    }
    let w: Wire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    let server = Announced::new(w.server_info, w.capabilities, w.instructions);
    Ok((w.protocol_version, server))
}

/// Versions kept from a -32022 error's `data.supported`.
pub(super) const MAX_SUPPORTED_VERSIONS: usize = 64;

/// The versions named in a -32022 error's `data.supported`: the first
/// [`MAX_SUPPORTED_VERSIONS`] strings, each truncated to 64 bytes. The rest of the list is
/// skipped without being materialised, so an enormous list costs no memory beyond its raw bytes.
pub(super) fn supported_versions(data: Option<&RawValue>) -> Vec<String> {
    use serde::de::{IgnoredAny, SeqAccess, Visitor};

    /// One entry: a string (truncated), or anything else, skipped.
    struct Entry(Option<String>);
    impl<'de> Deserialize<'de> for Entry {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Entry;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Entry, E> {
                    Ok(Entry(Some(truncated(s, 64))))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_unit<E>(self) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Entry, A::Error> {
                    while a.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Entry(None))
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Entry, A::Error> {
                    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Entry(None))
                }
            }
            d.deserialize_any(V)
        }
    }

    /// The list: the first strings kept, the rest skipped.
    struct Versions(Vec<String>);
    impl<'de> Deserialize<'de> for Versions {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Versions;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("a list of versions")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Versions, A::Error> {
                    let mut out = Vec::new();
                    while out.len() < MAX_SUPPORTED_VERSIONS {
                        match a.next_element::<Entry>()? {
                            Some(Entry(Some(v))) => out.push(v),
                            Some(Entry(None)) => {}
                            None => return Ok(Versions(out)),
                        }
                    }
                    while a.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Versions(out))
                }
            }
            d.deserialize_seq(V)
        }
    }

    #[derive(Deserialize)]
    struct Data {
        #[serde(default)]
        supported: Option<Versions>,
    }
    let Some(data) = data else { return Vec::new() };
    let Ok(d) = serde_json::from_str::<Data>(data.get()) else {
        return Vec::new();
    };
    d.supported.map(|v| v.0).unwrap_or_default()
}
