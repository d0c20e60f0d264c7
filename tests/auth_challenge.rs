//! The `WWW-Authenticate` parser: a table of good and bad values, several lines, every split of a
//! list across lines, and a property test (no panic, bounded output).

use mcp_sansio::auth::MAX_CHALLENGE_BYTES;
use mcp_sansio::auth::{parse_challenges, BearerErrorCode, Challenge, ChallengeError};
use mcp_sansio::internals::auth::bearer_challenge;
use mcp_sansio::internals::auth::{MAX_CHALLENGES, MAX_PARAMS};
use proptest::prelude::*;

fn parse(v: &str) -> Result<Vec<Challenge>, ChallengeError> {
    parse_challenges([v.as_bytes()])
}

fn ch(scheme: &str, params: &[(&str, &str)]) -> Challenge {
    Challenge {
        scheme: scheme.into(),
        token68: None,
        params: params
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

fn t68(scheme: &str, token: &str) -> Challenge {
    Challenge {
        scheme: scheme.into(),
        token68: Some(token.into()),
        params: vec![],
    }
}

#[test]
fn good_values() {
    let table: Vec<(&str, Vec<Challenge>)> = vec![
        ("Bearer", vec![ch("Bearer", &[])]),
        (
            r#"Bearer resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", scope="a b""#,
            vec![ch(
                "Bearer",
                &[
                    (
                        "resource_metadata",
                        "https://r.example/.well-known/oauth-protected-resource/mcp",
                    ),
                    ("scope", "a b"),
                ],
            )],
        ),
        (
            r#"bearer Error=insufficient_scope ,SCOPE = "x""#,
            vec![ch(
                "bearer",
                &[("error", "insufficient_scope"), ("scope", "x")],
            )],
        ),
        (
            r#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
            vec![
                ch(
                    "Newauth",
                    &[
                        ("realm", "apps"),
                        ("type", "1"),
                        ("title", r#"Login to "apps""#),
                    ],
                ),
                ch("Basic", &[("realm", "simple")]),
            ],
        ),
        (
            "Negotiate abc+/9==, Bearer",
            vec![t68("Negotiate", "abc+/9=="), ch("Bearer", &[])],
        ),
        ("Basic, Bearer", vec![ch("Basic", &[]), ch("Bearer", &[])]),
        (" , ,Bearer ,, ", vec![ch("Bearer", &[])]),
        ("Token abc", vec![t68("Token", "abc")]),
        (
            r#"Bearer realm="a\\b\"c""#,
            vec![ch("Bearer", &[("realm", r#"a\b"c"#)])],
        ),
        ("Bearer realm=\"\"", vec![ch("Bearer", &[("realm", "")])]),
        ("", vec![]),
    ];
    for (value, want) in table {
        assert_eq!(parse(value).as_ref(), Ok(&want), "{value:?}");
    }
}

#[test]
fn bad_values() {
    let syntax = |v: &str| matches!(parse(v), Err(ChallengeError::Syntax { .. }));
    for v in [
        "=x",
        "realm=x",
        "Bearer realm= x y",
        r#"Bearer realm="unterminated"#,
        "Bearer realm=\"a\u{1}b\"",
        "Bearer realm=x y",
        "Bearer realm=\"x\"y",
        "Bearer abc==, x=y",
        "Bearer \"x\"",
        "Bearer realm=x,,@",
        "Bear(er",
    ] {
        assert!(syntax(v), "{v:?} gave {:?}", parse(v));
    }
    assert_eq!(
        parse("Bearer scope=a, scope=b"),
        Err(ChallengeError::DuplicateParam {
            name: "scope".into()
        })
    );
    assert_eq!(
        parse("Bearer Scope=a, SCOPE=b"),
        Err(ChallengeError::DuplicateParam {
            name: "scope".into()
        })
    );
}

#[test]
fn bounds_are_typed_errors() {
    let long = format!("Bearer realm=\"{}\"", "a".repeat(MAX_CHALLENGE_BYTES));
    assert_eq!(
        parse(&long),
        Err(ChallengeError::TooLong {
            limit: MAX_CHALLENGE_BYTES
        })
    );
    let many = vec!["Basic"; MAX_CHALLENGES + 1].join(", ");
    assert_eq!(
        parse(&many),
        Err(ChallengeError::TooManyChallenges {
            limit: MAX_CHALLENGES
        })
    );
    let params: Vec<String> = (0..=MAX_PARAMS).map(|i| format!("p{i}=v")).collect();
    assert_eq!(
        parse(&format!("Bearer {}", params.join(", "))),
        Err(ChallengeError::TooManyParams { limit: MAX_PARAMS })
    );
    // The byte bound counts all lines together.
    let half = format!("Basic realm=\"{}\"", "a".repeat(MAX_CHALLENGE_BYTES / 2));
    assert!(matches!(
        parse_challenges([half.as_bytes(), half.as_bytes()]),
        Err(ChallengeError::TooLong { .. })
    ));
}

#[test]
fn several_lines_and_every_split_give_the_same_challenges() {
    let whole = r#"Basic realm="simple", Bearer resource_metadata="https://r.example/prm", scope="a b", error="insufficient_scope", Negotiate abc=="#;
    let want = parse(whole).expect("whole");
    assert_eq!(want.len(), 3);
    // Split the list at every comma that separates elements: as separate field lines, the
    // challenges and their parameters are the same (RFC 9110 §5.3).
    let commas: Vec<usize> = whole
        .char_indices()
        .filter(|(i, c)| *c == ',' && whole[..*i].matches('"').count() % 2 == 0)
        .map(|(i, _)| i)
        .collect();
    assert!(commas.len() >= 4);
    for &i in &commas {
        let (a, b) = (&whole[..i], &whole[i + 1..]);
        let got = parse_challenges([a.as_bytes(), b.as_bytes()]).expect("split");
        assert_eq!(got, want, "split at {i}");
    }
    // `realm=` alone is a token68 (it may end in `=`), not a parameter without a value.
    assert_eq!(parse("Bearer realm="), Ok(vec![t68("Bearer", "realm=")]));
    let bearer = bearer_challenge([whole.as_bytes()])
        .expect("ok")
        .expect("bearer");
    assert_eq!(
        bearer.resource_metadata.as_deref(),
        Some("https://r.example/prm")
    );
    assert_eq!(bearer.scope, vec!["a".to_owned(), "b".to_owned()]);
    assert_eq!(bearer.error, Some(BearerErrorCode::InsufficientScope));
}

#[test]
fn bearer_parameters() {
    let b = bearer_challenge([
        b"Basic realm=x".as_slice(),
        b"Bearer error=\"invalid_token\", error_description=\"expired\"".as_slice(),
    ])
    .expect("ok")
    .expect("bearer");
    assert_eq!(b.error, Some(BearerErrorCode::InvalidToken));
    assert_eq!(b.error_description.as_deref(), Some("expired"));
    assert!(b.scope.is_empty());
    assert_eq!(bearer_challenge([b"Basic realm=x".as_slice()]), Ok(None));
    let other = bearer_challenge([b"Bearer error=weird".as_slice()])
        .expect("ok")
        .expect("b");
    assert_eq!(other.error, Some(BearerErrorCode::Other("weird".into())));
}

proptest! {
    #[test]
    fn any_bytes_parse_or_fail_without_panic(lines in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 0..4)) {
        let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        if let Ok(cs) = parse_challenges(refs) {
            prop_assert!(cs.len() <= MAX_CHALLENGES);
            for c in &cs {
                prop_assert!(c.params.len() <= MAX_PARAMS);
                prop_assert!(!c.scheme.is_empty());
            }
        }
    }

    #[test]
    fn grammar_shaped_input_never_panics(s in r#"[ ,=a-zA-Z0-9"\\/+._~-]{0,120}"#) {
        let _ = parse(&s);
    }

    #[test]
    fn generated_challenges_round_trip(
        scheme in "[A-Za-z][A-Za-z0-9-]{0,8}",
        params in prop::collection::btree_map("[a-z_]{1,10}", r#"[ -~]{0,20}"#, 0..5),
    ) {
        let rendered: Vec<String> = params.iter().map(|(n, v)| {
            let escaped = v.replace('\\', "\\\\").replace('"', "\\\"");
            format!("{n}=\"{escaped}\"")
        }).collect();
        let text = if rendered.is_empty() { scheme.clone() } else { format!("{scheme} {}", rendered.join(", ")) };
        let got = parse(&text).expect("well-formed");
        prop_assert_eq!(got.len(), 1);
        prop_assert_eq!(&got[0].scheme, &scheme);
        let want: Vec<(String, String)> = params.into_iter().collect();
        prop_assert_eq!(&got[0].params, &want);
    }
}
