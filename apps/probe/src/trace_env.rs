//! The parent trace context of a run, from OpenTelemetry's environment carrier
//! (`specification/context/env-carriers.md`): `TRACEPARENT`, `TRACESTATE`, `BAGGAGE`, the W3C
//! header names in upper case. Every request of the run carries it in `params._meta`, so a job
//! runner can chain a probe run into its trace.
//!
//! A malformed value is ignored with a warning on stderr, never a usage error: the carrier is
//! read with a `TextMapPropagator`'s `Extract` ("A `TextMapPropagator` SHOULD be used alongside
//! its normal `Get`, `Set`, `Extract`, and `Inject` functionality"), and `Extract` "MUST NOT
//! throw an exception" and MUST NOT store a value it cannot parse (`api-propagators.md`): the
//! run goes on without that value. A malformed `TRACEPARENT` drops the whole context; a
//! malformed `TRACESTATE` or `BAGGAGE` drops only itself (W3C Trace Context §3.3: a vendor that
//! fails to parse `tracestate` "MUST NOT attempt to parse `traceparent` again" nor discard it).
//! The warning names the variable and what is wrong, never the value.

use mcp_sansio::trace_context::{check_baggage, check_tracestate};
use mcp_sansio::TraceContext;

/// The variables read, in order.
pub const VARS: [&str; 3] = ["TRACEPARENT", "TRACESTATE", "BAGGAGE"];

/// The trace context `get` (an environment) holds, and the warnings about values ignored.
pub fn from_env(get: impl Fn(&str) -> Option<String>) -> (Option<TraceContext>, Vec<String>) {
    let mut warnings = Vec::new();
    let Some(traceparent) = get("TRACEPARENT").filter(|v| !v.is_empty()) else {
        for var in &VARS[1..] {
            if get(var).is_some_and(|v| !v.is_empty()) {
                warnings.push(format!("{var} ignored: TRACEPARENT is not set"));
            }
        }
        return (None, warnings);
    };
    let mut state = get("TRACESTATE").filter(|v| !v.is_empty());
    if let Some(Err(e)) = state.as_deref().map(check_tracestate) {
        warnings.push(format!("TRACESTATE ignored: {e}"));
        state = None;
    }
    let mut baggage = get("BAGGAGE").filter(|v| !v.is_empty());
    if let Some(Err(e)) = baggage.as_deref().map(check_baggage) {
        warnings.push(format!("BAGGAGE ignored: {e}"));
        baggage = None;
    }
    match TraceContext::new(&traceparent, state.as_deref(), baggage.as_deref()) {
        Ok(t) => (Some(t), warnings),
        Err(e) => {
            warnings.push(format!(
                "TRACEPARENT ignored (and the trace context with it): {e}"
            ));
            (None, warnings)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn all_three_are_read() {
        let (t, w) = from_env(env(&[
            ("TRACEPARENT", TP),
            ("TRACESTATE", "rojo=1"),
            ("BAGGAGE", "k=v"),
        ]));
        let t = t.unwrap();
        assert_eq!(t.traceparent(), TP);
        assert_eq!(t.tracestate(), Some("rojo=1"));
        assert_eq!(t.baggage(), Some("k=v"));
        assert!(w.is_empty());
    }

    #[test]
    fn a_malformed_value_is_ignored_with_a_warning_that_hides_it() {
        let (t, w) = from_env(env(&[("TRACEPARENT", "00-SECRET"), ("BAGGAGE", "k=v")]));
        assert!(t.is_none());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("TRACEPARENT ignored"), "{w:?}");
        assert!(!w[0].contains("SECRET"), "{w:?}");

        let (t, w) = from_env(env(&[
            ("TRACEPARENT", TP),
            ("TRACESTATE", "Bad=1"),
            ("BAGGAGE", "k=a b"),
        ]));
        let t = t.unwrap();
        assert_eq!(t.traceparent(), TP);
        assert_eq!((t.tracestate(), t.baggage()), (None, None));
        assert_eq!(w.len(), 2, "{w:?}");

        let (t, w) = from_env(env(&[("BAGGAGE", "k=v")]));
        assert!(t.is_none());
        assert_eq!(w, ["BAGGAGE ignored: TRACEPARENT is not set"]);
    }
}
