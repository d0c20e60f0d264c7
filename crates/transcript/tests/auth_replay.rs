//! Replays every transcript in `tests/transcripts/auth/`: one per conformance auth scenario and
//! version, recorded by running the conformance client against the official suite with
//! `MCP_CONFORMANCE_RECORD` (see docs/conformance.md).
//!
//! - `*.auth.transcript` (authorization transcripts) drive a fresh `Authorizer` with the
//!   recorded answers: the same requests (after redaction) in the same order and the same
//!   events; the replay's own recording, through its text, replays the same again.
//! - `*.session.transcript*` (the MCP sessions of the same runs) replay against a fresh
//!   `Connection`, as recorded and in every other split (one byte at a time included).
//! - No fixture holds a secret: the values the suite's servers hand out are absent, and every
//!   credential-shaped value is redacted.

use std::path::{Path, PathBuf};

use mcp_sansio_transcript::{
    replay, replay_auth, AuthTranscript, Split, Transcript, AUTH_MAGIC, MAGIC,
};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts/auth")
}

fn fixtures() -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .expect("tests/transcripts/auth exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".transcript"))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).expect("readable transcript");
            (name, text)
        })
        .collect()
}

fn auth_fixtures() -> Vec<(String, AuthTranscript)> {
    fixtures()
        .into_iter()
        .filter(|(_, text)| text.starts_with(AUTH_MAGIC))
        .map(|(name, text)| {
            let t = AuthTranscript::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, t)
        })
        .collect()
}

#[test]
fn there_is_one_authorization_transcript_per_conformance_auth_scenario() {
    let all = auth_fixtures();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    // The scenarios the client passes, at least, each with its authorization recorded.
    for scenario in [
        "auth_basic-cimd.2026-07-28",
        "auth_metadata-default.2026-07-28",
        "auth_scope-step-up.2026-07-28",
        "auth_token-endpoint-auth-basic.2026-07-28",
        "auth_pre-registration.2026-07-28",
        "auth_basic-cimd.2025-11-25",
    ] {
        let want = format!("{scenario}.auth.transcript");
        assert!(names.contains(&want.as_str()), "{want} missing: {names:?}");
    }
    assert!(all.len() >= 30, "{} authorization transcripts", all.len());
}

#[test]
fn every_authorization_transcript_replays() {
    let mut failures = Vec::new();
    let all = auth_fixtures();
    assert!(!all.is_empty());
    for (name, t) in &all {
        let result = replay_auth(t)
            .map_err(|e| e.to_string())
            .and_then(|r| r.check(t).map_err(|e| e.to_string()));
        if let Err(e) = result {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}

#[test]
fn authorizations_that_succeeded_end_with_a_token_on_replay() {
    let mut authorized = 0;
    for (name, t) in auth_fixtures() {
        let r = replay_auth(&t).unwrap();
        let said_authorized = r.events.iter().any(|e| e.get("authorized").is_some());
        assert_eq!(r.has_bearer, said_authorized, "{name}");
        authorized += usize::from(said_authorized);
    }
    assert!(authorized >= 10, "{authorized} authorized");
}

#[test]
fn recordings_of_authorization_replays_replay_the_same() {
    for (name, t) in auth_fixtures() {
        let first = replay_auth(&t).unwrap();
        let text = first.recording.to_text();
        let again = AuthTranscript::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(again, first.recording, "{name}: text round trip");
        let second = replay_auth(&again).unwrap();
        second
            .check(&again)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        second.check(&t).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn every_session_transcript_replays_whole_and_byte_by_byte() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, text) in fixtures() {
        if !text.starts_with(MAGIC) || text.starts_with(AUTH_MAGIC) {
            continue;
        }
        count += 1;
        let t = Transcript::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for split in std::iter::once(Split::Recorded).chain(Split::OTHERS) {
            let result = replay(&t, split)
                .map_err(|e| e.to_string())
                .and_then(|got| got.check(&t).map_err(|e| e.to_string()));
            if let Err(e) = result {
                failures.push(format!("{name} ({split:?}): {e}"));
            }
        }
    }
    assert!(count >= 30, "{count} session transcripts");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The secrets the suite's servers hand out or are configured with.
const KNOWN_SECRETS: &[&str] = &[
    "test-token",
    "test-client-secret",
    "conformance-test-secret",
    "pre-registered-secret",
    "conformance-test-xaa-secret",
];

/// The parameter and member names whose values must be redacted wherever they appear.
const SECRET_FIELDS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "code_verifier",
    "registration_access_token",
];

/// After `text[at..]`: whether it is a redaction marker (or JSON `null`: no value).
fn redacted_at(text: &str, at: usize) -> bool {
    let rest = &text[at..];
    if rest.starts_with("null") {
        return true;
    }
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    rest.starts_with("<redacted>") || rest.starts_with("<pending-state>")
}

#[test]
fn no_fixture_holds_a_secret() {
    let all = fixtures();
    assert!(!all.is_empty());
    for (name, text) in &all {
        for s in KNOWN_SECRETS {
            assert!(!text.contains(s), "{name} holds {s:?}");
        }
        for scheme in ["Bearer ", "Basic "] {
            for (i, _) in text.match_indices(scheme) {
                // Only in header values: `Authorization: Bearer …`.
                if text[..i].ends_with("Authorization: ") {
                    assert!(
                        redacted_at(text, i + scheme.len()),
                        "{name}: {scheme}at {i}"
                    );
                }
            }
        }
        let is_auth = text.starts_with(AUTH_MAGIC);
        for field in SECRET_FIELDS {
            for pattern in [format!("{field}="), format!("\"{field}\":")] {
                for (i, _) in text.match_indices(&pattern) {
                    assert!(
                        redacted_at(text, i + pattern.len()),
                        "{name}: {pattern} at {i}"
                    );
                }
            }
        }
        if is_auth {
            // Codes and states of authorization URLs, callbacks and token requests.
            for pattern in ["&code=", "?code=", "&state=", "?state=", "&code_challenge="] {
                for (i, _) in text.match_indices(pattern) {
                    assert!(
                        redacted_at(text, i + pattern.len()),
                        "{name}: {pattern} at {i}"
                    );
                }
            }
            for line in text.lines().filter(|l| l.contains(" callback ")) {
                for pair in line.rsplit(' ').next().unwrap().split('&') {
                    if let Some(v) = pair
                        .strip_prefix("code=")
                        .or_else(|| pair.strip_prefix("state="))
                    {
                        assert!(v.starts_with('<'), "{name}: {line}");
                    }
                }
            }
        }
    }
}
