//! The JSON summaries of authorization events.

use mcp_sansio::auth::redact;
use mcp_sansio::auth::{AuthError, AuthEvent};
use serde_json::{json, Value};

/// The JSON summary of an authorization event, secrets redacted:
/// `{"open_user_agent":{"url":…}}`, `{"authorized":{"issuer":…,"scopes":[…]}}` or
/// `{"failed":{"error":…}}`.
pub fn auth_event_summary(event: &AuthEvent) -> Value {
    match event {
        AuthEvent::OpenUserAgent { url, .. } => {
            json!({"open_user_agent": {"url": redact::url(url)}})
        }
        AuthEvent::Authorized { issuer, scopes } => {
            json!({"authorized": {"issuer": issuer, "scopes": scopes}})
        }
        AuthEvent::Failed(e) => json!({"failed": {"error": e.to_string()}}),
    }
}

pub(super) fn refused_summary(e: &AuthError) -> Value {
    json!({"refused": {"error": e.to_string()}})
}
