//! The authorization context of a connection, and the one builder of the keys of everything a
//! client stores for it.
//!
//! What a client keeps between connections (a cached catalog, an era hint, the tokens of an
//! authorization, task handles, tool pins) belongs to one server and to one
//! authorization context: SEP-2549 says caches "MUST NOT be shared across authorization
//! contexts", and a token obtained by one grant is not another's. Every such entry is stored
//! under [`store_key`] of (what the entry is for, the resource, the context), and nothing else
//! builds a key:
//!
//! - the **use** ([`StoreUse`]): a catalog also depends on what the request declared (the
//!   protocol versions offered and the client capabilities), so [`StoreUse::catalog`] carries a
//!   digest of them;
//! - the **resource**: the server's URL normalised as [`Endpoint`] does (scheme and host case,
//!   the default port), path and query kept: two paths of one gateway origin are two resources;
//! - the **context** ([`AuthContext`]): the credential presented (none, a bearer token, a
//!   DPoP-bound token and the thumbprint of its key) and, where an authorization obtained it,
//!   the grant's identity ([`GrantIdentity`]: kind, issuer, client).
//!
//! A key is a use name and a SHA-256 digest: it never holds a credential, nor the URL (a URL's
//! path or query may itself be a secret).
//!
//! # Two contexts: the credential and the principal
//!
//! A context is computed one of two ways, and each use takes the one that fits how long the entry
//! lives:
//!
//! - [`AuthContext::of`], **the credential**: the token presented (with its DPoP key's
//!   thumbprint) and the grant. The catalog cache and era hints are keyed by it. They are
//!   answers a server gave to one credential; when a token is refreshed, the next lookup misses
//!   and one listing or negotiation fills the entry again: a miss, nothing more. What a token's
//!   scope let a server answer is never offered under another token.
//! - [`AuthContext::principal`], **the principal**: who the session acts for, which outlives
//!   its tokens. Task handles ([`TaskHandle`](crate::task::TaskHandle), their binding and
//!   [`StoreUse::TaskHandle`] keys) and tool pins ([`StoreUse::ToolPins`]) are keyed by it. A
//!   task may run for an hour and an access token commonly lives an hour or less: a handle
//!   bound to the token would die with it, and pins keyed by the token would start over (trust
//!   on first use again) at every refresh, which is no defence.
//!
//!   With a grant ([`Config::grant`] is `Some` and a credential is presented: the tokens of an
//!   authorization of ours, refreshed under one token key, `auth::token_key(server, grant)`),
//!   the principal is the grant's identity alone: every token of that grant, before and after a
//!   refresh, is one principal, as the token store already treats it. The DPoP key's thumbprint
//!   is **not** part of it: DPoP binds each token to a key to prove possession, it does not say
//!   who the token is for. When the key of a DPoP grant is rotated, the tokens are obtained
//!   again bound to the new key, under the same grant: handles and pins carry over. (The
//!   server still checks every task request under its own authorization.) A grant's identity
//!   names the client (kind, issuer, client), not an end user: an embedder acting for several
//!   users through one client configuration keeps their stores apart, as it must for their
//!   tokens already.
//!
//!   Without a grant (a bearer token or DPoP binding the embedder supplies), the client cannot
//!   tell a refresh from another principal's token: the principal is the credential itself,
//!   [`AuthContext::of`]. Without a credential, the principal is anonymous (a grant with no
//!   token yet presents nothing, so nothing binds to it).

use crate::prelude::*;

use sha2::{Digest as _, Sha256};

use crate::auth::Grant;
use crate::config::Config;
use crate::endpoint::Endpoint;

/// The kind of grant that obtained a credential ([`Grant`], without its secrets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum GrantKind {
    /// The authorization code grant through a user agent.
    AuthorizationCode,
    /// The client credentials grant.
    ClientCredentials,
    /// The JWT bearer grant with an assertion the embedder supplies.
    JwtBearer,
    /// Enterprise-managed authorization (an identity assertion grant).
    EnterpriseManaged,
}

impl GrantKind {
    /// The kind's stable name, e.g. `client_credentials`.
    pub const fn as_str(self) -> &'static str {
        match self {
            GrantKind::AuthorizationCode => "authorization_code",
            GrantKind::ClientCredentials => "client_credentials",
            GrantKind::JwtBearer => "jwt_bearer",
            GrantKind::EnterpriseManaged => "enterprise_managed",
        }
    }
}

impl From<&Grant> for GrantKind {
    fn from(grant: &Grant) -> GrantKind {
        match grant {
            Grant::AuthorizationCode => GrantKind::AuthorizationCode,
            Grant::ClientCredentials { .. } => GrantKind::ClientCredentials,
            Grant::JwtBearer { .. } => GrantKind::JwtBearer,
            Grant::EnterpriseManaged { .. } => GrantKind::EnterpriseManaged,
        }
    }
}

/// Who obtained a credential, as its authorization is configured: the grant's kind, the
/// authorization server it is pinned to (empty: whichever the resource names) and the client's
/// identity there (the client ID of a grant without a user agent; for the authorization code
/// grant, the client's metadata document URL, else its name). No secret.
///
/// An authorizing session sets it on the [`Config`] it presents a token with
/// ([`Config::grant`]); an embedder that brings its own token leaves it `None`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GrantIdentity {
    /// The grant's kind.
    pub kind: GrantKind,
    /// The authorization server (issuer) the grant is pinned to; empty when not pinned.
    pub issuer: String,
    /// The client's identity at the authorization server.
    pub client_id: String,
}

/// The credential a connection presents, as [`AuthContext::new`] takes it.
#[derive(Clone, Copy, Debug)]
pub enum Credential<'a> {
    /// None: anonymous (also the context of a token store, whose tokens are what it keeps).
    None,
    /// `Authorization: Bearer` with this token.
    Bearer(&'a str),
    /// `Authorization: DPoP` with this token, bound to the key of this JWK SHA-256 thumbprint
    /// (RFC 7638).
    Dpop {
        /// The access token.
        token: &'a str,
        /// The key's thumbprint (RFC 7638, SHA-256).
        key_thumbprint: &'a str,
    },
}

/// An authorization context: a SHA-256 digest of the credential a connection presents and of
/// the grant that obtained it (see [`store_key`]). Two contexts are equal exactly
/// when their digests are; the digest is all it holds (its `Debug` shows a prefix of it).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AuthContext {
    digest: [u8; 32],
}

impl core::fmt::Debug for AuthContext {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut short = String::new();
        push_hex(&mut short, &self.digest[..6]);
        f.debug_tuple("AuthContext").field(&short).finish()
    }
}

/// Feeds `field` to `h` with its length first, so that no two sequences of fields hash alike
/// by moving a boundary.
pub(crate) fn field(h: &mut Sha256, field: &[u8]) {
    h.update((field.len() as u64).to_be_bytes());
    h.update(field);
}

/// Appends `bytes` to `out` in lowercase hexadecimal.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
}

impl AuthContext {
    /// The context of `credential`, obtained by `grant` (if an authorization did).
    pub fn new(credential: Credential<'_>, grant: Option<&GrantIdentity>) -> AuthContext {
        let mut h = Sha256::new();
        field(&mut h, b"mcp-sansio auth context 1");
        match credential {
            Credential::None => field(&mut h, b"none"),
            Credential::Bearer(token) => {
                field(&mut h, b"bearer");
                field(&mut h, token.as_bytes());
            }
            Credential::Dpop {
                token,
                key_thumbprint,
            } => {
                field(&mut h, b"dpop");
                field(&mut h, token.as_bytes());
                field(&mut h, key_thumbprint.as_bytes());
            }
        }
        match grant {
            None => field(&mut h, b"no grant"),
            Some(g) => {
                field(&mut h, b"grant");
                field(&mut h, g.kind.as_str().as_bytes());
                field(&mut h, g.issuer.as_bytes());
                field(&mut h, g.client_id.as_bytes());
            }
        }
        AuthContext {
            digest: h.finalize().into(),
        }
    }

    /// The principal a connection with `config` acts for: with a grant ([`Config::grant`]) and
    /// a credential, the grant's identity (kind, issuer, client), whatever the token and
    /// whatever its DPoP key (DPoP proves possession of a token, it does not say whose it is),
    /// so that every token of one grant, before and after a refresh or a key rotation, is one
    /// principal; without a grant, the credential itself ([`AuthContext::of`]: a refresh cannot
    /// be told from another principal's token); without a credential, anonymous
    /// (`AuthContext::new(Credential::None, None)`).
    ///
    /// What outlives a token is keyed by it: the binding of a
    /// [`TaskHandle`](crate::task::TaskHandle), the [`StoreUse::TaskHandle`] and
    /// [`StoreUse::ToolPins`] keys. The catalog cache and era hints keep [`AuthContext::of`]:
    /// they are answers to one credential, and a refreshed token costs them one miss. A grant's
    /// principal is digested apart from every [`AuthContext::new`] context, so it never equals
    /// the context of a credential.
    pub fn principal(config: &Config) -> AuthContext {
        let presents = config.dpop.is_some() || !config.bearer_token.is_empty();
        match (&config.grant, presents) {
            (_, false) => AuthContext::new(Credential::None, None),
            (None, true) => AuthContext::of(config),
            (Some(g), true) => {
                let mut h = Sha256::new();
                field(&mut h, b"mcp-sansio principal 1");
                field(&mut h, b"grant");
                field(&mut h, g.kind.as_str().as_bytes());
                field(&mut h, g.issuer.as_bytes());
                field(&mut h, g.client_id.as_bytes());
                AuthContext {
                    digest: h.finalize().into(),
                }
            }
        }
    }

    /// The digest this context is (for a [`TaskHandle`](crate::task::TaskHandle) to carry).
    pub(crate) const fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    /// The context of a connection with `config`: its DPoP binding (token and key thumbprint)
    /// if it has one, else its bearer token (an empty one is no credential), with
    /// [`Config::grant`]. A DPoP key that gives no public JWK is known by its algorithm and
    /// key ID instead (it cannot make proofs anyway).
    pub fn of(config: &Config) -> AuthContext {
        let grant = config.grant.as_ref();
        if let Some(binding) = &config.dpop {
            let signer = &binding.key.0;
            let thumbprint = signer
                .public_jwk()
                .and_then(|jwk| crate::auth::dpop::jwk_thumbprint(&jwk))
                .unwrap_or_else(|| {
                    format!(
                        "no-jwk:{}:{}",
                        signer.algorithm().as_str(),
                        signer.key_id().unwrap_or("")
                    )
                });
            return AuthContext::new(
                Credential::Dpop {
                    token: &binding.access_token,
                    key_thumbprint: &thumbprint,
                },
                grant,
            );
        }
        if config.bearer_token.is_empty() {
            AuthContext::new(Credential::None, grant)
        } else {
            AuthContext::new(Credential::Bearer(&config.bearer_token), grant)
        }
    }
}

/// What a stored entry is for: the first part of its [`store_key`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreUse {
    /// A cached `tools/list` answer; `request` is a digest of what the answer depends on
    /// besides the resource and the context ([`StoreUse::catalog`]).
    Catalog {
        /// The digest of the request's declarations.
        request: [u8; 32],
    },
    /// An era hint (the era and version a negotiation found).
    EraHint,
    /// The tokens an authorization obtained.
    Tokens,
    /// The [`TaskHandle`](crate::task::TaskHandle) of one task; `task` is a digest of its id
    /// ([`StoreUse::task_handle`]). Keyed by the principal ([`AuthContext::principal`]).
    TaskHandle {
        /// The digest of the task id.
        task: [u8; 32],
    },
    /// The tool pins of a server in a context ([`ToolPins`](crate::pin::ToolPins)). Keyed by the
    /// principal ([`AuthContext::principal`]).
    ToolPins,
}

impl StoreUse {
    /// The catalog use for connections with `config`: a digest of the modern and legacy
    /// versions it offers and of the client capabilities it declares, on which a server's
    /// listing may depend.
    pub fn catalog(config: &Config) -> StoreUse {
        let mut h = Sha256::new();
        for list in [&config.modern_versions, &config.legacy_versions] {
            h.update((list.len() as u64).to_be_bytes());
            for v in list {
                field(&mut h, v.as_bytes());
            }
        }
        field(&mut h, config.client_capabilities.as_bytes());
        StoreUse::Catalog {
            request: h.finalize().into(),
        }
    }

    /// The use for the handle of the task `task_id`: a digest of the id, so that every task of a
    /// server and context has its own entry and the key does not show the id (a server may treat
    /// task ids as bearer secrets).
    pub fn task_handle(task_id: &str) -> StoreUse {
        let mut h = Sha256::new();
        field(&mut h, b"task id");
        field(&mut h, task_id.as_bytes());
        StoreUse::TaskHandle {
            task: h.finalize().into(),
        }
    }

    /// The use's stable name, the readable start of its keys.
    pub const fn name(&self) -> &'static str {
        match self {
            StoreUse::Catalog { .. } => "catalog",
            StoreUse::EraHint => "era",
            StoreUse::Tokens => "tokens",
            StoreUse::TaskHandle { .. } => "task",
            StoreUse::ToolPins => "pins",
        }
    }
}

/// The key of the entry for `store_use` of `resource` in `context`: `<use name>:` then 64 hex
/// digits of a SHA-256 digest of the use (with its data), the resource (normalised origin,
/// path and query) and the context. It holds no credential and no URL (a URL's path or query
/// may itself be a secret).
///
/// The one builder of the keys of everything a client stores between connections (a cached
/// catalog, an era hint, the tokens of an authorization, task handles, tool pins):
/// SEP-2549 says caches "MUST NOT be shared across authorization contexts", and a token one
/// grant obtained is not another's. So every entry belongs to
///
/// - one **use** ([`StoreUse`]); a catalog also depends on what its request declared (the
///   protocol versions offered, the client capabilities), which [`StoreUse::catalog`] digests;
/// - one **resource**: the server's URL normalised as [`Endpoint`] does (scheme and host case,
///   the default port), path and query kept: two paths of one gateway origin are two resources;
/// - one **context** ([`AuthContext`]): the credential presented (none, a bearer token, a
///   DPoP-bound token and its key's thumbprint) and, where an authorization obtained it, the
///   grant's identity ([`GrantIdentity`]: kind, issuer, client): [`AuthContext::of`] for a
///   catalog and an era hint; for a task handle and tool pins, the principal
///   ([`AuthContext::principal`]: the grant, so a refreshed token keeps them).
pub fn store_key(store_use: StoreUse, resource: &Endpoint, context: &AuthContext) -> String {
    let mut h = Sha256::new();
    field(&mut h, b"mcp-sansio store key 1");
    field(&mut h, store_use.name().as_bytes());
    match &store_use {
        StoreUse::Catalog { request } => field(&mut h, request),
        StoreUse::TaskHandle { task } => field(&mut h, task),
        StoreUse::EraHint | StoreUse::Tokens | StoreUse::ToolPins => {}
    }
    field(&mut h, resource.origin().as_bytes());
    field(&mut h, resource.target().as_bytes());
    field(&mut h, &context.digest);
    let digest: [u8; 32] = h.finalize().into();
    let mut key = String::with_capacity(store_use.name().len() + 65);
    key.push_str(store_use.name());
    key.push(':');
    push_hex(&mut key, &digest);
    key
}
