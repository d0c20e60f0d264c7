//! Scope selection (MCP authorization, "Scope Selection Strategy", and SEP-2207 for
//! `offline_access`).
//!
//! - The first authorization asks for the challenge's `scope`; without one, the protected
//!   resource's `scopes_supported`; without those, no `scope` parameter at all.
//! - `offline_access` is added only when the authorization server lists it in its
//!   `scopes_supported` (and something else is asked for); it is never asked for otherwise.
//! - A step-up (403 `insufficient_scope`) asks for the union of the scopes asked for before and
//!   the challenge's, in that order, without duplicates.
use crate::prelude::*;

/// The most scope tokens kept from any one source.
pub const MAX_SCOPES: usize = 64;
/// The longest scope token kept.
pub const MAX_SCOPE_LEN: usize = 256;

/// The scope that asks for a refresh token.
pub const OFFLINE_ACCESS: &str = "offline_access";

/// Whether `s` is a scope token (RFC 6749 §3.3: `%x21 / %x23-5B / %x5D-7E`, at least one).
pub fn is_scope_token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_SCOPE_LEN
        && s.bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// Splits a space-separated scope string into its tokens, dropping what is not a scope token and
/// duplicates, keeping at most [`MAX_SCOPES`].
pub fn split_scopes(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in s.split(' ') {
        push_unique(&mut out, t);
    }
    out
}

/// Keeps the scope tokens of a metadata list (as `split_scopes` does for a string).
pub fn clean_scopes(list: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for t in list {
        push_unique(&mut out, t);
    }
    out
}

fn push_unique(out: &mut Vec<String>, t: &str) {
    if out.len() < MAX_SCOPES && is_scope_token(t) && !out.iter().any(|o| o == t) {
        out.push(t.to_owned());
    }
}

/// The scopes of a first authorization: the challenge's, else the resource's
/// `scopes_supported`, else none; plus `offline_access` when the authorization server offers it
/// and something else is asked for.
pub fn select_scopes(
    challenge: &[String],
    resource_supported: Option<&[String]>,
    server_supported: Option<&[String]>,
) -> Vec<String> {
    let mut out = if !challenge.is_empty() {
        clean_scopes(challenge)
    } else {
        resource_supported.map(clean_scopes).unwrap_or_default()
    };
    add_offline_access(&mut out, server_supported);
    out
}

/// The scopes of a step-up: the union of `previous` and `challenge`, `previous` first, plus
/// `offline_access` as in `select_scopes`.
pub fn step_up_scopes(
    previous: &[String],
    challenge: &[String],
    server_supported: Option<&[String]>,
) -> Vec<String> {
    let mut out = clean_scopes(previous);
    for t in challenge {
        push_unique(&mut out, t);
    }
    add_offline_access(&mut out, server_supported);
    out
}

fn add_offline_access(out: &mut Vec<String>, server_supported: Option<&[String]>) {
    let offered = server_supported.is_some_and(|s| s.iter().any(|t| t == OFFLINE_ACCESS));
    if !offered {
        out.retain(|t| t != OFFLINE_ACCESS);
    } else if !out.is_empty() {
        push_unique(out, OFFLINE_ACCESS);
    }
}

/// The scopes joined by single spaces, as the `scope` parameter carries them.
pub fn join_scopes(scopes: &[String]) -> String {
    scopes.join(" ")
}
