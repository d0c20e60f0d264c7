//! The boundary of the authorizer: requests out (a [`crate::wire::Request`] with its id, purpose
//! and URL) and responses in (status, headers, body), which an adapter carries over its socket.
use crate::prelude::*;

use crate::auth::error::Purpose;
use crate::endpoint::Endpoint;
use crate::wire::Request;

/// Identifies one request of an [`Authorizer`](crate::auth::Authorizer); its response must carry
/// the same id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AuthRequestId(pub u64);

/// One request of an [`Authorizer`](crate::auth::Authorizer) to send: the [`Request`] itself
/// (the one request type every exchange of this crate uses, [`crate::wire`]) with what routes
/// it and its answer.
///
/// Its URL has passed the [`UrlPolicy`](crate::auth::UrlPolicy); the adapter dials
/// [`AuthExchange::endpoint`] through its address guard, never follows a redirect, and reads at
/// most [`AuthExchange::max_response_bytes`] of body. `Debug` hides the body, the secrets of
/// the URL's query and `Authorization` (and every other secret header).
#[derive(Clone, PartialEq, Eq)]
pub struct AuthExchange {
    /// Its id, for [`Authorizer::handle_response`](crate::auth::Authorizer::handle_response).
    pub id: AuthRequestId,
    /// What it is for.
    pub purpose: Purpose,
    /// The absolute URL, as the metadata (or configuration) named it.
    pub url: String,
    /// The URL, parsed: where to dial (scheme, host, port); its authority and request target
    /// are the request's.
    pub endpoint: Endpoint,
    /// The request: method, authority, path, header fields (never a Bearer token) and body
    /// (empty for `GET`).
    pub request: Request,
    /// The most body bytes to read; more is an error
    /// ([`AuthBudget::BodyBytes`](crate::auth::AuthBudget::BodyBytes)).
    pub max_response_bytes: usize,
}

impl AuthExchange {
    /// The request as text for a log or transcript, secrets redacted
    /// ([`redact`](crate::auth::redact)): method and URL, headers, then the body (form or JSON
    /// with secret values replaced; any other body by its length).
    pub fn redacted_text(&self) -> String {
        use crate::auth::redact;
        let req = &self.request;
        let mut out = format!("{} {}\n", req.method.as_str(), redact::url(&self.url));
        for (n, v) in &req.headers {
            let v = redact::header(n, v.as_bytes());
            out.push_str(&format!("{n}: {}\n", String::from_utf8_lossy(&v)));
        }
        if !req.body.is_empty() {
            let content_type = req
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.as_str());
            let body = redact::body(content_type, &req.body);
            out.push('\n');
            out.push_str(&String::from_utf8_lossy(&body));
        }
        out
    }
}

impl core::fmt::Debug for AuthExchange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AuthExchange")
            .field("id", &self.id)
            .field("purpose", &self.purpose)
            .field("url", &crate::auth::redact::url(&self.url))
            .field("request", &self.request)
            .finish()
    }
}

/// The adapter's answer to an [`AuthExchange`].
///
/// Its `Debug` output shows the body's length only (a token response's body holds the tokens)
/// and redacts secret header values ([`redact::header`](crate::auth::redact::header)).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthResponse {
    /// The HTTP status.
    pub status: u16,
    /// Header fields, names as received.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, at most [`AuthExchange::max_response_bytes`].
    pub body: Vec<u8>,
}

impl core::fmt::Debug for AuthResponse {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AuthResponse")
            .field("status", &self.status)
            .field(
                "headers",
                &crate::auth::redact::debug_headers(&self.headers),
            )
            .field("body_len", &self.body.len())
            .finish()
    }
}

impl AuthResponse {
    /// A response with `status` and `body` and no headers.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        AuthResponse {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }
}
