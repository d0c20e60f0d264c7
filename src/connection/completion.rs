//! How an operation completes, and the era hints a client keeps per origin: the two decisions an
//! adapter would otherwise make on its own.

use alloc::collections::BTreeMap;

use super::*;

/// What an operation came to when it succeeded.
#[derive(Clone, Debug)]
pub enum Completion {
    /// [`Connection::connect`] negotiated the protocol.
    Connected,
    /// [`Connection::list_tools`] listed every tool.
    Listed(Catalog),
    /// [`Connection::call_tool`] got the call's result.
    Called(CallResult),
    /// [`Connection::close`] closed the connection.
    Closed,
}

impl Event {
    /// Whether this event completes `running`, the operation the caller started last.
    ///
    /// Every operation the caller starts ends with exactly one such event: `Connected` for
    /// [`Operation::Connect`], `ToolsListed` for [`Operation::ListTools`], `CallFinished` for
    /// [`Operation::CallTool`], `Closed` for [`Operation::Close`], or a `Failed` naming the
    /// operation. Other events do not end it: a `Connected` after a re-negotiation comes in the
    /// middle of a listing or call, and the `Failed` of an operation that
    /// [`close`](Connection::close) interrupted belongs to that operation, not to the close.
    pub fn completes(&self, running: Operation) -> bool {
        match self {
            Event::Connected { .. } => running == Operation::Connect,
            Event::ToolsListed(_) => running == Operation::ListTools,
            Event::CallFinished(_) => running == Operation::CallTool,
            Event::Closed => running == Operation::Close,
            Event::Failed { operation, .. } => *operation == running,
            _ => false,
        }
    }

    /// What `running` came to, if this event [completes](Event::completes) it; otherwise the
    /// event itself, unchanged.
    pub fn completion(self, running: Operation) -> Result<Result<Completion, Error>, Event> {
        if !self.completes(running) {
            return Err(self);
        }
        Ok(match self {
            Event::Connected { .. } => Ok(Completion::Connected),
            Event::ToolsListed(c) => Ok(Completion::Listed(c)),
            Event::CallFinished(r) => Ok(Completion::Called(r)),
            Event::Failed { error, .. } => Err(error),
            _ => Ok(Completion::Closed),
        })
    }
}

/// Era hints learnt per origin, at most this many; beyond, the first origin in order is forgotten.
pub const MAX_ERA_HINTS: usize = 1024;

/// The era and version each origin negotiated, offered to the next connection to the same origin
/// (see [`Config::era_hint`]): a client keeps one, learns from every connection it drives and
/// offers before every connect. Only a negotiation that a request proved teaches a hint; a hint
/// that proved wrong is replaced by what the re-negotiation found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EraHints {
    by_origin: BTreeMap<String, EraHint>,
}

impl EraHints {
    /// No hint yet.
    pub fn new() -> EraHints {
        EraHints::default()
    }

    /// The hint learnt for `origin` (as [`Endpoint::origin`](crate::Endpoint::origin) spells
    /// it), if any.
    pub fn get(&self, origin: &str) -> Option<&EraHint> {
        self.by_origin.get(origin)
    }

    /// Origins with a hint.
    pub fn len(&self) -> usize {
        self.by_origin.len()
    }

    /// Whether no origin has a hint.
    pub fn is_empty(&self) -> bool {
        self.by_origin.is_empty()
    }

    /// Sets `config.era_hint` to the hint learnt for its origin, unless it has a hint of its own
    /// or no longer offers the hint's version. Returns whether a hint was offered.
    pub fn offer(&self, config: &mut Config) -> bool {
        if config.era_hint.is_some() {
            return false;
        }
        let Some(hint) = self.get(&config.endpoint.origin()) else {
            return false;
        };
        let offered = match hint.era {
            Era::Modern => &config.modern_versions,
            Era::Legacy => &config.legacy_versions,
        };
        if !offered.contains(&hint.version) {
            return false;
        }
        config.era_hint = Some(hint.clone());
        true
    }

    /// Learns from `event`, reported by a connection to `origin`: a `Connected` that a request
    /// proved (not taken from a hint) becomes the origin's hint. Other events teach nothing.
    pub fn learn(&mut self, origin: &str, event: &Event) {
        let Event::Connected {
            era,
            version,
            from_hint: false,
            ..
        } = event
        else {
            return;
        };
        if !self.by_origin.contains_key(origin) && self.by_origin.len() >= MAX_ERA_HINTS {
            self.by_origin.pop_first();
        }
        self.by_origin.insert(
            origin.to_owned(),
            EraHint {
                era: *era,
                version: version.clone(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MODERN_VERSION;

    fn connected(era: Era, version: &str, from_hint: bool) -> Event {
        Event::Connected {
            era,
            version: version.to_owned(),
            server_info: None,
            from_hint,
            capabilities: None,
            instructions: None,
        }
    }

    #[test]
    fn only_a_proven_negotiation_teaches_and_only_offered_versions_are_offered() {
        let mut hints = EraHints::new();
        let origin = "http://127.0.0.1:1";
        hints.learn(origin, &connected(Era::Modern, MODERN_VERSION, true));
        assert!(hints.is_empty(), "a hint taken from a hint teaches nothing");
        hints.learn(origin, &Event::Closed);
        assert!(hints.is_empty());
        hints.learn(origin, &connected(Era::Legacy, "2025-06-18", false));
        assert_eq!(hints.get(origin).map(|h| h.era), Some(Era::Legacy));

        let mut config = Config::new("http://127.0.0.1:1/mcp").unwrap();
        assert!(hints.offer(&mut config));
        assert_eq!(config.era_hint.as_ref().unwrap().version, "2025-06-18");
        // A configuration with its own hint keeps it.
        assert!(!hints.offer(&mut config));
        // A configuration that no longer offers the version gets no hint.
        let mut narrow = Config::new("http://127.0.0.1:1/mcp").unwrap();
        narrow.legacy_versions = vec!["2025-03-26".to_owned()];
        assert!(!hints.offer(&mut narrow));
        assert!(narrow.era_hint.is_none());
        // Another origin gets nothing.
        let mut other = Config::new("http://127.0.0.1:2/mcp").unwrap();
        assert!(!hints.offer(&mut other));
    }

    #[test]
    fn hints_are_bounded() {
        let mut hints = EraHints::new();
        for i in 0..MAX_ERA_HINTS + 5 {
            hints.learn(
                &format!("http://h{i:05}"),
                &connected(Era::Modern, MODERN_VERSION, false),
            );
        }
        assert_eq!(hints.len(), MAX_ERA_HINTS);
        assert!(
            hints.get("http://h00000").is_none(),
            "the first in order went"
        );
        assert!(hints
            .get(&format!("http://h{:05}", MAX_ERA_HINTS + 4))
            .is_some());
    }

    #[test]
    fn one_event_completes_each_operation() {
        let failed = |operation| Event::Failed {
            operation,
            error: Error::Closed,
        };
        // The failure of an interrupted call is not the close's completion.
        assert!(!failed(Operation::CallTool).completes(Operation::Close));
        assert!(Event::Closed.completes(Operation::Close));
        assert!(failed(Operation::CallTool).completes(Operation::CallTool));
        // A re-negotiation's `Connected` does not end a listing.
        let c = connected(Era::Modern, MODERN_VERSION, false);
        assert!(!c.completes(Operation::ListTools));
        assert!(c.completes(Operation::Connect));
        assert!(matches!(
            c.completion(Operation::ListTools),
            Err(Event::Connected { .. })
        ));
        assert!(matches!(
            failed(Operation::ListTools).completion(Operation::ListTools),
            Ok(Err(Error::Closed))
        ));
        assert!(matches!(
            Event::Closed.completion(Operation::Close),
            Ok(Ok(Completion::Closed))
        ));
        let progress = Event::Progress {
            progress: 1.0,
            total: None,
            message: None,
        };
        for op in [
            Operation::Connect,
            Operation::ListTools,
            Operation::CallTool,
            Operation::Close,
        ] {
            assert!(!progress.completes(op));
        }
    }
}
