//! The trace context's limits at their edges, through the public API (mutation testing,
//! `docs/mutants.md`): each bound accepted at its value and refused one past it, the oracles
//! from W3C Trace Context (§3.2 `traceparent`, §3.3 `tracestate`) and W3C Baggage (§3.3), the
//! values built here to the length each bound names.

use mcp_sansio::{TraceContext, TraceContextError};

/// W3C Trace Context §3.2.2.1's example.
const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn tracestate(s: &str) -> Result<TraceContext, TraceContextError> {
    TraceContext::new(TP, Some(s), None)
}

fn baggage(s: &str) -> Result<TraceContext, TraceContextError> {
    TraceContext::new(TP, None, Some(s))
}

/// Two valid list members whose whole `tracestate` is `len` characters: `a=` and 256 value
/// characters (the longest value, §3.3.1.3), `,`, `b=` and the rest.
fn tracestate_of(len: usize) -> String {
    let first = format!("a={}", "x".repeat(256));
    let rest = len - first.len() - ",b=".len();
    let s = format!("{first},b={}", "y".repeat(rest));
    assert_eq!(s.len(), len);
    s
}

/// The client sends at most 512 characters of `tracestate` (§3.3.1.5: "Vendors SHOULD
/// propagate at least 512 characters of a combined header"; `MAX_TRACESTATE_LEN`): a value of
/// exactly 512 valid characters is accepted and kept, 513 are refused as too long, not for
/// their grammar (each member is valid).
#[test]
fn a_tracestate_of_512_characters_is_accepted_513_refused() {
    let at = tracestate_of(512);
    assert_eq!(tracestate(&at).unwrap().tracestate(), Some(at.as_str()));
    let over = tracestate_of(513);
    assert_eq!(
        tracestate(&over).unwrap_err(),
        TraceContextError::Tracestate {
            reason: "longer than 512 characters"
        }
    );
    // The same 513 characters as two lists of valid members are each accepted: only the length
    // refused them.
    let (a, b) = over.split_once(',').unwrap();
    assert!(tracestate(a).is_ok() && tracestate(b).is_ok());
}

/// W3C Baggage §3.3.1: "a maximum of 8192 bytes" (`MAX_BAGGAGE_LEN`): one member `k=` and a
/// value of 8190 baggage octets (8192 bytes) is accepted, one octet more is refused as too long.
#[test]
fn a_baggage_of_8192_bytes_is_accepted_8193_refused() {
    let at = format!("k={}", "v".repeat(8190));
    assert_eq!(at.len(), 8192);
    assert_eq!(baggage(&at).unwrap().baggage(), Some(at.as_str()));
    let over = format!("k={}", "v".repeat(8191));
    assert_eq!(
        baggage(&over).unwrap_err(),
        TraceContextError::Baggage {
            reason: "longer than 8192 bytes"
        }
    );
}

/// Every accessor gives back its part of the values given (by construction: the example's
/// trace id is characters 3..35 of §3.2.2.1's example, the parent id 36..52); an empty
/// `tracestate` or `baggage` is absent.
#[test]
fn each_accessor_gives_back_its_value() {
    let t = TraceContext::new(TP, Some("rojo=00f067aa0ba902b7"), Some("userId=alice")).unwrap();
    assert_eq!(t.traceparent(), TP);
    assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(t.parent_id(), "00f067aa0ba902b7");
    assert_eq!(t.tracestate(), Some("rojo=00f067aa0ba902b7"));
    assert_eq!(t.baggage(), Some("userId=alice"));
    let bare = TraceContext::new(TP, Some(""), Some("")).unwrap();
    assert_eq!(bare.tracestate(), None);
    assert_eq!(bare.baggage(), None);
}

/// The Debug form names the `traceparent` (an identifier, logged by every tracer) and only
/// whether `tracestate` and `baggage` are present: their values are an embedder's data.
#[test]
fn debug_shows_the_traceparent_and_hides_the_other_values() {
    let t = TraceContext::new(TP, Some("vendor=s3cr3t-state"), Some("user=s3cr3t-bag")).unwrap();
    let d = format!("{t:?}");
    assert!(d.starts_with("TraceContext"), "{d}");
    assert!(d.contains(TP), "{d}");
    assert!(d.contains("tracestate: true"), "{d}");
    assert!(d.contains("baggage: true"), "{d}");
    assert!(!d.contains("s3cr3t"), "{d}");
    let bare = format!("{:?}", TraceContext::new(TP, None, None).unwrap());
    assert!(
        bare.contains("tracestate: false") && bare.contains("baggage: false"),
        "{bare}"
    );
}
