//! [`AuthEvent`]: what an [`Authorizer`] tells its caller.
use super::*;

/// What an [`Authorizer`] tells its caller.
///
/// Its `Debug` output redacts the secret parameters of the user agent's URL (`state`, the
/// code challenge…, [`redact::url`](crate::auth::redact::url)); the pending authorization
/// redacts its own.
#[derive(Clone, PartialEq, Eq)]
pub enum AuthEvent {
    /// Open `url` in a user agent; its redirect's query goes to [`Authorizer::handle_callback`].
    /// `pending` can be persisted and given back with [`Authorizer::resume`].
    OpenUserAgent {
        /// The authorization request URL.
        url: String,
        /// The state needed to finish.
        pending: Box<PendingAuthorization>,
    },
    /// Tokens were obtained; [`Authorizer::bearer`] gives the access token. Retry the operation.
    Authorized {
        /// The issuer that issued them.
        issuer: String,
        /// The granted scopes.
        scopes: Vec<String>,
    },
    /// The authorization failed.
    Failed(AuthError),
}

impl core::fmt::Debug for AuthEvent {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AuthEvent::OpenUserAgent { url, pending } => f
                .debug_struct("OpenUserAgent")
                .field("url", &crate::auth::redact::url(url))
                .field("pending", pending)
                .finish(),
            AuthEvent::Authorized { issuer, scopes } => f
                .debug_struct("Authorized")
                .field("issuer", issuer)
                .field("scopes", scopes)
                .finish(),
            AuthEvent::Failed(e) => f.debug_tuple("Failed").field(e).finish(),
        }
    }
}
