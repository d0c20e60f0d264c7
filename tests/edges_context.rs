//! The authorization context's `Debug`: what a log may show of a context is a short prefix of
//! its digest, never the credential; and that prefix still tells two contexts apart.

use mcp_sansio::{AuthContext, Credential, GrantIdentity, GrantKind};

const TOKEN: &str = "secret-token-7f3a";

/// The text inside `AuthContext("…")`, checked to be the documented shape: a prefix of the
/// SHA-256 digest in lowercase hex, 6 bytes (12 digits), nothing else.
fn shown(c: &AuthContext) -> String {
    let debug = format!("{c:?}");
    let inner = debug
        .strip_prefix("AuthContext(\"")
        .and_then(|s| s.strip_suffix("\")"))
        .unwrap_or_else(|| panic!("not AuthContext(\"…\"): {debug:?}"));
    assert_eq!(inner.len(), 12, "{debug}");
    assert!(
        inner
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{debug}"
    );
    inner.to_owned()
}

/// `AuthContext`'s `Debug` "shows a prefix of" the digest (its doc): a 12-digit lowercase hex
/// prefix, the same for equal contexts, different for contexts that differ in the credential
/// or the grant, and never the token itself.
#[test]
fn debug_shows_a_digest_prefix_not_the_credential() {
    let machine = GrantIdentity {
        kind: GrantKind::ClientCredentials,
        issuer: "https://as.example".to_owned(),
        client_id: "cid".to_owned(),
    };
    let contexts = [
        AuthContext::new(Credential::None, None),
        AuthContext::new(Credential::Bearer(TOKEN), None),
        AuthContext::new(Credential::Bearer(TOKEN), Some(&machine)),
        AuthContext::new(
            Credential::Dpop {
                token: TOKEN,
                key_thumbprint: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I",
            },
            None,
        ),
    ];
    let prefixes: Vec<String> = contexts.iter().map(shown).collect();
    for (i, p) in prefixes.iter().enumerate() {
        for q in &prefixes[i + 1..] {
            assert_ne!(p, q, "two contexts show alike");
        }
        assert!(!format!("{:?}", contexts[i]).contains("secret"));
    }
    assert_eq!(
        shown(&AuthContext::new(Credential::Bearer(TOKEN), None)),
        prefixes[1]
    );
}
