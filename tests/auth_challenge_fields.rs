//! The `WWW-Authenticate` fields of a 401 or 403 reach the authorization whole: every field, in
//! order, never cut; the Bearer challenge is found wherever it is; past the documented cap
//! ([`MAX_CHALLENGE_BYTES`] together) the answer is refused with a typed error instead of being
//! cut. Fed whole and one byte at a time.

mod support;

use mcp_sansio::auth::{AuthError, ChallengeError, MAX_CHALLENGE_BYTES};
use mcp_sansio::internals::auth::bearer_challenge;
use mcp_sansio::{Error, Event};
use support::*;

fn response(status: u16, fields: &[String]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\n");
    for f in fields {
        out.push_str(&format!("WWW-Authenticate: {f}\r\n"));
    }
    out.push_str("content-length: 0\r\n\r\n");
    out.into_bytes()
}

fn error_for(resp: &[u8], split: Split) -> Error {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", split);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, resp);
    match h.single_event() {
        Event::Failed { error, .. } => error,
        other => panic!("expected Failed, got {other:?}"),
    }
}

const SPLITS: [Split; 2] = [Split::Whole, Split::Bytes];

#[test]
fn every_field_is_read_and_the_bearer_challenge_found_in_the_second() {
    let fields = [
        r#"Basic realm="legacy""#.to_owned(),
        r#"Bearer resource_metadata="https://mcp.example/prm", scope="read write""#.to_owned(),
    ];
    for split in SPLITS {
        let e = error_for(&response(401, &fields), split);
        let Error::Authentication {
            status: 401,
            challenge: Some(c),
        } = &e
        else {
            panic!("{e:?}");
        };
        let bearer = bearer_challenge([c.as_bytes()])
            .unwrap()
            .expect("a Bearer challenge");
        assert_eq!(
            bearer.resource_metadata.as_deref(),
            Some("https://mcp.example/prm")
        );
        assert_eq!(bearer.scope, ["read", "write"]);
    }
}

#[test]
fn a_long_challenge_is_never_cut() {
    // 60 scope tokens of 40 bytes: about 2.5 KB, past the old 1,024-byte cut, inside the cap
    // (and within the 64 scopes read).
    let scopes: Vec<String> = (0..60)
        .map(|i| format!("https://mcp.example/scopes/read-write-{i:03}"))
        .collect();
    let field = format!(
        r#"Bearer error="insufficient_scope", scope="{}", resource_metadata="https://mcp.example/prm""#,
        scopes.join(" ")
    );
    assert!(field.len() > 1024 && field.len() < MAX_CHALLENGE_BYTES);
    for split in SPLITS {
        let e = error_for(&response(403, std::slice::from_ref(&field)), split);
        let Error::Authentication {
            status: 403,
            challenge: Some(c),
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!(c, &field);
        let bearer = bearer_challenge([c.as_bytes()]).unwrap().unwrap();
        assert_eq!(bearer.scope, scopes);
        assert_eq!(
            bearer.resource_metadata.as_deref(),
            Some("https://mcp.example/prm")
        );
    }
}

#[test]
fn past_the_cap_the_answer_is_refused_not_cut() {
    let big = format!(r#"Bearer realm="{}""#, "r".repeat(MAX_CHALLENGE_BYTES));
    // One field past the cap, and several fields that are only past it together.
    let third = format!(r#"Bearer realm="{}""#, "r".repeat(MAX_CHALLENGE_BYTES / 3));
    for fields in [
        vec![big],
        vec![third.clone(), third.clone(), third.clone(), third],
    ] {
        for split in SPLITS {
            let e = error_for(&response(401, &fields), split);
            assert_eq!(
                e,
                Error::Auth(AuthError::Challenge(ChallengeError::TooLong {
                    limit: MAX_CHALLENGE_BYTES
                })),
                "{split:?}"
            );
        }
    }
}
