//! The wire-neutral boundary of the authorizer: requests out (method, URL, headers, body) and
//! responses in (status, headers, body), which an adapter maps onto its HTTP client.
use crate::prelude::*;

use crate::auth::error::Purpose;
use crate::endpoint::Endpoint;

/// Identifies one request of an [`Authorizer`](crate::auth::Authorizer); its response must carry
/// the same id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AuthRequestId(pub u64);

/// The HTTP method of an [`AuthRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    /// GET (metadata).
    Get,
    /// POST (registration, token).
    Post,
}

impl HttpMethod {
    /// `GET` or `POST`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
        }
    }
}

/// A request for the adapter to send, wire-neutral. Its URL has passed the
/// [`UrlPolicy`](crate::auth::UrlPolicy); the adapter dials it through its address guard, never
/// follows a redirect, and reads at most [`AuthRequest::max_response_bytes`] of body. `Debug`
/// hides the body and `Authorization`.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthRequest {
    /// Its id, for [`Authorizer::handle_response`](crate::auth::Authorizer::handle_response).
    pub id: AuthRequestId,
    /// What it is for.
    pub purpose: Purpose,
    /// The method.
    pub method: HttpMethod,
    /// The absolute URL.
    pub url: String,
    /// The URL, parsed (host, port, request target, origin).
    pub endpoint: Endpoint,
    /// Header fields (never a Bearer token).
    pub headers: Vec<(String, String)>,
    /// The body (empty for GET).
    pub body: Vec<u8>,
    /// The most body bytes to read; more is an error
    /// ([`AuthBudget::BodyBytes`](crate::auth::AuthBudget::BodyBytes)).
    pub max_response_bytes: usize,
}

impl AuthRequest {
    /// The request as text for a log or transcript, secrets redacted
    /// ([`redact`](crate::auth::redact)): method and URL, headers, then the body (form or JSON
    /// with secret values replaced; any other body by its length).
    pub fn redacted_text(&self) -> String {
        use crate::auth::redact;
        let mut out = format!("{} {}\n", self.method.as_str(), redact::url(&self.url));
        for (n, v) in &self.headers {
            let v = redact::header(n, v.as_bytes());
            out.push_str(&format!("{n}: {}\n", String::from_utf8_lossy(&v)));
        }
        if !self.body.is_empty() {
            let content_type = self
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.as_str());
            let body = redact::body(content_type, &self.body);
            out.push('\n');
            out.push_str(&String::from_utf8_lossy(&body));
        }
        out
    }
}

impl core::fmt::Debug for AuthRequest {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let headers = crate::auth::redact::debug_headers(&self.headers);
        f.debug_struct("AuthRequest")
            .field("id", &self.id)
            .field("purpose", &self.purpose)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// The adapter's answer to an [`AuthRequest`].
///
/// Its `Debug` output shows the body's length only (a token response's body holds the tokens)
/// and redacts secret header values ([`redact::header`](crate::auth::redact::header)).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthResponse {
    /// The HTTP status.
    pub status: u16,
    /// Header fields, names as received.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, at most [`AuthRequest::max_response_bytes`].
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
