//! The configuration of a connection.
use crate::prelude::*;

use crate::budget::Budgets;
use crate::endpoint::Endpoint;
use crate::error::ConfigError;

/// The modern protocol revision this client speaks (no handshake, no session).
pub const MODERN_VERSION: &str = "2026-07-28";
/// The legacy revisions this client speaks, newest first (`initialize` handshake).
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The protocol era of a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2026-07-28 and later: per-request metadata, no handshake, no session.
    Modern,
    /// 2024-11-05 … 2025-11-25 on the Streamable HTTP endpoint: `initialize` and sessions.
    Legacy,
}

impl Era {
    /// The era's stable lowercase name, `modern` or `legacy`, as logs, transcripts and the CLI
    /// print it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        }
    }
}

impl core::fmt::Display for Era {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an earlier connection learnt about the server: its era and the version it spoke.
///
/// With a modern hint, connecting makes no request at all; a legacy hint skips the probe. A hint
/// that proves wrong causes one re-negotiation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EraHint {
    /// The era.
    pub era: Era,
    /// The version negotiated then.
    pub version: String,
}

impl EraHint {
    /// Whether `config` offers this hint's version for its era (a hint is offered only then).
    pub fn offered_by(&self, config: &Config) -> bool {
        let offered = match self.era {
            Era::Modern => &config.modern_versions,
            Era::Legacy => &config.legacy_versions,
        };
        offered.contains(&self.version)
    }
}

/// The name and version this client reports to servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    /// Name, e.g. `mcp-sansio`.
    pub name: String,
    /// Version, e.g. `0.1.0`.
    pub version: String,
}

impl Default for ClientInfo {
    fn default() -> Self {
        ClientInfo {
            name: "mcp-sansio".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Everything a connection needs before it starts.
///
/// Its `Debug` output never shows the bearer token (only whether one is set) nor a secret
/// parameter of the endpoint's query.
#[derive(Clone)]
#[non_exhaustive]
pub struct Config {
    /// The server's endpoint.
    pub endpoint: Endpoint,
    /// A bearer token sent as `Authorization: Bearer …` on every request; empty means anonymous.
    pub bearer_token: String,
    /// A DPoP-bound access token and its key (RFC 9449): every request then carries
    /// `Authorization: DPoP …` and a fresh `DPoP` proof instead of the bearer token, which must
    /// be empty. `None` by default.
    pub dpop: Option<crate::auth::DpopBinding>,
    /// The grant that obtained the credential, where an authorization knows it (an
    /// authorizing session sets it when it presents a token). Never sent: with the credential
    /// it makes the [`AuthContext`](crate::AuthContext) that keys what a client stores for the
    /// connection. `None` by default.
    pub grant: Option<crate::GrantIdentity>,
    /// The client's name and version.
    pub client_info: ClientInfo,
    /// The budgets.
    pub budgets: Budgets,
    /// Modern versions offered, preferred first.
    pub modern_versions: Vec<String>,
    /// Legacy versions accepted, preferred first; the first is offered in `initialize`.
    pub legacy_versions: Vec<String>,
    /// The era learnt from an earlier connection to this server in this authorization context
    /// ([`EraHints`](crate::EraHints)), if any.
    pub era_hint: Option<EraHint>,
    /// The client capabilities declared in every modern request's `_meta`, as a raw JSON
    /// object. Default `{}`: servers must not ask for elicitation, sampling or roots.
    pub client_capabilities: String,
    /// Whether the embedder answers a tool call's input requests
    /// ([`Event::InputRequired`](crate::Event::InputRequired)) and a legacy server's own requests
    /// ([`Event::ServerRequest`](crate::Event::ServerRequest)). Without it such a call fails and
    /// such requests are refused. With it, a legacy session also opens the standalone `GET`
    /// stream, where a server sends requests that belong to no request of the client (see
    /// [`Event::ServerRequest`](crate::Event::ServerRequest)); without it, none is opened. A
    /// legacy `initialize` declares no capability either way.
    pub input_hook: bool,
    /// Which tool names a listing accepts; others are refused entries of the catalog.
    pub tool_names: crate::list::ToolNameRule,
    /// Whether this client follows tasks (SEP-2663, the `io.modelcontextprotocol/tasks`
    /// extension): with it, every request of the 2026-07-28 era declares the extension in its
    /// client capabilities ([`task::client_capabilities`](crate::task::client_capabilities)),
    /// and a server may answer a tool call with a task. Off by default; `client_capabilities`
    /// may not declare the extension itself ([`ConfigError::TasksNotEnabled`]).
    pub tasks: bool,
    /// Where the caller's timeline (the `now` of every input) starts on the Unix clock: `now`
    /// is `unix_at_zero + now` in Unix time. The core reads no clock; a task's
    /// [`TaskHandle`](crate::task::TaskHandle) holds its times on the Unix clock so that another
    /// process can resume it, and this is how a connection converts. Adapters set it from the
    /// system clock; zero (the default) makes the timeline Unix time itself.
    pub unix_at_zero: core::time::Duration,
    /// What a client does with a tool that changed since it was pinned ([`crate::pin`]): applied
    /// by the client that keeps the pins (the adapters' session driver) to listings and to calls
    /// before they are sent; the connection reads it only when a call made with a known
    /// definition (a tool of the connection's last listing, with or without `x-mcp-header`
    /// parameters, or one passed to `call_known_tool`) meets `-32020` (header mismatch): under
    /// [`PinPolicy::Refuse`](crate::pin::PinPolicy::Refuse) it is not sent again with the
    /// re-listed definition but fails with [`Error::ToolChanged`](crate::Error::ToolChanged).
    /// [`PinPolicy::Off`](crate::pin::PinPolicy::Off) by default.
    pub tool_pins: crate::pin::PinPolicy,
    /// The trace context written into every request's `params._meta` (`traceparent`, and
    /// `tracestate` and `baggage` when present; MCP 2026-07-28, SEP-414), valid by construction
    /// ([`TraceContext::new`](crate::TraceContext::new) checks the W3C formats).
    /// [`Connection::set_trace_context`](crate::Connection::set_trace_context) changes it for the
    /// operations that follow. `None` by default: no trace context is sent.
    pub trace_context: Option<crate::TraceContext>,
}

impl core::fmt::Debug for Config {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use crate::auth::redact;
        let endpoint = redact::url(&format!(
            "{}{}",
            self.endpoint.origin(),
            self.endpoint.target()
        ));
        f.debug_struct("Config")
            .field("endpoint", &endpoint)
            .field("bearer_token", &redact::debug_secret(&self.bearer_token))
            .field("dpop", &self.dpop)
            .field("client_info", &self.client_info)
            .field("budgets", &self.budgets)
            .field("modern_versions", &self.modern_versions)
            .field("legacy_versions", &self.legacy_versions)
            .field("era_hint", &self.era_hint)
            .field("client_capabilities", &self.client_capabilities)
            .field("input_hook", &self.input_hook)
            .field("tool_names", &self.tool_names)
            .field("tasks", &self.tasks)
            .field("unix_at_zero", &self.unix_at_zero)
            .field("tool_pins", &self.tool_pins)
            .field(
                "trace_context",
                &self.trace_context.as_ref().map(|t| t.trace_id()),
            )
            .finish()
    }
}

impl Config {
    /// A configuration for `endpoint_url` with every default.
    pub fn new(endpoint_url: &str) -> Result<Config, ConfigError> {
        Ok(Config {
            endpoint: Endpoint::parse(endpoint_url)?,
            bearer_token: String::new(),
            dpop: None,
            grant: None,
            client_info: ClientInfo::default(),
            budgets: Budgets::default(),
            modern_versions: vec![MODERN_VERSION.to_owned()],
            legacy_versions: LEGACY_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
            era_hint: None,
            client_capabilities: "{}".to_owned(),
            input_hook: false,
            tool_names: crate::list::ToolNameRule::Strict,
            tasks: false,
            unix_at_zero: core::time::Duration::ZERO,
            tool_pins: crate::pin::PinPolicy::Off,
            trace_context: None,
        })
    }

    /// Sets the bearer token.
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Config {
        self.bearer_token = token.into();
        self
    }

    /// Sets the DPoP binding ([`Config::dpop`]).
    pub fn with_dpop(mut self, binding: crate::auth::DpopBinding) -> Config {
        self.dpop = Some(binding);
        self
    }

    /// Sets the grant identity ([`Config::grant`]).
    pub fn with_grant(mut self, grant: Option<crate::GrantIdentity>) -> Config {
        self.grant = grant;
        self
    }

    /// Sets the era hint.
    pub fn with_era_hint(mut self, hint: Option<EraHint>) -> Config {
        self.era_hint = hint;
        self
    }

    /// Sets the budgets.
    pub fn with_budgets(mut self, budgets: Budgets) -> Config {
        self.budgets = budgets;
        self
    }

    /// Sets the client info.
    pub fn with_client_info(mut self, info: ClientInfo) -> Config {
        self.client_info = info;
        self
    }

    /// Turns tasks on or off ([`Config::tasks`]).
    pub fn with_tasks(mut self, tasks: bool) -> Config {
        self.tasks = tasks;
        self
    }

    /// Sets the tool-pin policy ([`Config::tool_pins`]).
    pub fn with_tool_pins(mut self, policy: crate::pin::PinPolicy) -> Config {
        self.tool_pins = policy;
        self
    }

    /// Sets the trace context ([`Config::trace_context`]).
    pub fn with_trace_context(mut self, trace: Option<crate::TraceContext>) -> Config {
        self.trace_context = trace;
        self
    }

    /// Checks everything that is sent verbatim in headers.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if !header_safe(&self.bearer_token) {
            return Err(ConfigError::InvalidToken);
        }
        if let Some(d) = &self.dpop {
            if !header_safe(&d.access_token) || d.access_token.is_empty() {
                return Err(ConfigError::InvalidToken);
            }
            if !self.bearer_token.is_empty() {
                return Err(ConfigError::InvalidValue {
                    what: "both a bearer token and a DPoP-bound token",
                });
            }
        }
        if self.modern_versions.is_empty() && self.legacy_versions.is_empty() {
            return Err(ConfigError::NoVersions);
        }
        // Modern revisions keep the 2026-07-28 wire format; later ones may be offered ahead of it.
        let modern = |v: &String| is_version(v) && v.as_str() >= MODERN_VERSION;
        if !self.modern_versions.iter().all(modern) {
            return Err(ConfigError::InvalidValue {
                what: "a modern version that is not YYYY-MM-DD on or after 2026-07-28",
            });
        }
        if !self
            .legacy_versions
            .iter()
            .all(|v| LEGACY_VERSIONS.contains(&v.as_str()))
        {
            return Err(ConfigError::InvalidValue {
                what: "a legacy version this client does not speak",
            });
        }
        let caps: Result<alloc::collections::BTreeMap<String, &serde_json::value::RawValue>, _> =
            serde_json::from_str(&self.client_capabilities);
        if caps.is_err() {
            return Err(ConfigError::InvalidValue {
                what: "client capabilities that are not a JSON object",
            });
        }
        if !self.tasks && crate::task::declares_extension(&self.client_capabilities) {
            return Err(ConfigError::TasksNotEnabled);
        }
        if let Some(h) = &self.era_hint {
            let ok = match h.era {
                Era::Modern => self.modern_versions.contains(&h.version),
                Era::Legacy => self.legacy_versions.contains(&h.version),
            };
            if !ok {
                return Err(ConfigError::InvalidValue {
                    what: "the era hint names a version not offered",
                });
            }
        }
        Ok(())
    }
}

/// Whether `v` is shaped like a protocol revision, `YYYY-MM-DD`.
fn is_version(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// Whether `s` can be sent as an HTTP header value: no control characters but HTAB.
pub(crate) fn header_safe(s: &str) -> bool {
    s.bytes().all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_with_newline_is_a_config_error() {
        let c = Config::new("http://h/mcp")
            .unwrap()
            .with_bearer_token("abc\r\nX-Evil: 1");
        assert_eq!(c.validate(), Err(ConfigError::InvalidToken));
        let c = Config::new("http://h/mcp")
            .unwrap()
            .with_bearer_token("abc.def");
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn era_names_are_stable() {
        assert_eq!(Era::Modern.as_str(), "modern");
        assert_eq!(Era::Legacy.as_str(), "legacy");
        assert_eq!(Era::Legacy.to_string(), Era::Legacy.as_str());
    }

    #[test]
    fn hints_must_name_offered_versions() {
        let c = Config::new("http://h/mcp")
            .unwrap()
            .with_era_hint(Some(EraHint {
                era: Era::Modern,
                version: LEGACY_VERSIONS[0].into(),
            }));
        assert!(c.validate().is_err());
        let c = Config::new("http://h/mcp")
            .unwrap()
            .with_era_hint(Some(EraHint {
                era: Era::Legacy,
                version: LEGACY_VERSIONS[1].into(),
            }));
        assert!(c.validate().is_ok());
    }
}
