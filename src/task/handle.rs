//! [`TaskHandle`]: what an embedder persists so that polling can resume in another session,
//! process or executor ("Clients SHOULD persist task IDs to durable storage so that polling can
//! resume after a crash or restart").
use crate::prelude::*;

use sha2::{Digest as _, Sha256};

use crate::config::{Config, Era};
use crate::context::AuthContext;

use super::{Task, TaskError, TaskId};

/// The version of the handle format [`TaskHandle::to_bytes`] writes and
/// [`TaskHandle::from_bytes`] reads; a handle of another version is refused
/// ([`HandleError::ForeignVersion`], or [`HandleError::TokenBound`] for version 1).
///
/// Version 2 binds a handle to the principal ([`AuthContext::principal`]: the grant, so a
/// refreshed token keeps it); version 1 bound it to the credential ([`AuthContext::of`]: the
/// access token). The two digests mean different things, so a version 1 handle is never read as
/// a version 2 one.
pub const HANDLE_VERSION: u8 = 2;

/// The format version that bound a handle to the access token ([`HandleError::TokenBound`]).
pub const TOKEN_BOUND_HANDLE_VERSION: u8 = 1;

/// The most bytes a handle may have; a longer input is refused unread.
pub const MAX_HANDLE_BYTES: usize = 4096;

/// The most bytes of the server URL a handle holds.
pub const MAX_HANDLE_URL: usize = 2048;

/// The most bytes of a task id a handle holds (the configured
/// [`Budgets::task_id_bytes`](crate::Budgets::task_id_bytes) applies too, when the handle is
/// made).
const MAX_HANDLE_ID: usize = 1024;

/// The most bytes of the protocol version a handle holds.
const MAX_HANDLE_PROTOCOL: usize = 32;

const MAGIC: &[u8; 8] = b"MCPTASK\0";
const CHECK: usize = 8;

/// Why a handle was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandleError {
    /// More than [`MAX_HANDLE_BYTES`] bytes.
    #[error("a task handle of {len} bytes, more than {max}")]
    Oversize {
        /// The bytes given.
        len: usize,
        /// [`MAX_HANDLE_BYTES`].
        max: usize,
    },
    /// The bytes do not start as a task handle does.
    #[error("not a task handle")]
    NotAHandle,
    /// A handle of a format version this client does not read.
    #[error("a task handle of format version {found}; this client reads version {HANDLE_VERSION}")]
    ForeignVersion {
        /// The version found.
        found: u8,
    },
    /// A handle of format version 1 ([`TOKEN_BOUND_HANDLE_VERSION`]), bound to the access token
    /// it was made under rather than to the principal: this client cannot tell whose it is, so
    /// it does not resume it. Its task can still be polled by a client of that version, with
    /// that token.
    #[error(
        "a task handle of format version {found}, bound to the access token it was made under; \
         this client reads version {HANDLE_VERSION}, bound to the principal, and cannot resume it"
    )]
    TokenBound {
        /// The version found ([`TOKEN_BOUND_HANDLE_VERSION`]).
        found: u8,
    },
    /// The bytes end before the handle does.
    #[error("the task handle is truncated")]
    Truncated,
    /// Bytes after the handle's end.
    #[error("bytes after the end of the task handle")]
    TrailingBytes,
    /// The handle's check digest does not match its contents.
    #[error("the task handle is corrupt (its check digest does not match)")]
    Corrupt,
    /// A field holds a value no handle can hold.
    #[error("invalid task handle: {what}")]
    Invalid {
        /// Which field.
        what: &'static str,
    },
    /// A value too large to keep in a handle (the server URL, the task id or the version).
    #[error("a task handle cannot hold {what} that long")]
    TooLong {
        /// Which value.
        what: &'static str,
    },
    /// The handle belongs to another principal ([`AuthContext::principal`]: another grant, or
    /// without a grant another credential) than the current one: "Servers MUST perform
    /// authentication and authorization checks on each task-related request"; a client does not
    /// present one principal's task under another's credential.
    #[error("the task handle belongs to another authorization context")]
    OtherContext,
    /// The handle belongs to another server (endpoint URL) than the connection's.
    #[error("the task handle belongs to another server")]
    OtherServer,
}

/// A durable reference to one task: the server (its normalised endpoint URL), the task id, the
/// principal it was created for ([`AuthContext::principal`], its digest: the grant, so a token
/// refreshed while the task runs keeps the handle; without a grant, the credential), the era and protocol version spoken, and the
/// task's deadlines on the embedder's wall clock (milliseconds since the Unix epoch: the core
/// reads no clock, and an [`Instant`](crate::Instant) means nothing in another process), and the
/// digests of the input-request keys already answered ([`record_answers`](Self::record_answers)).
///
/// [`to_bytes`](Self::to_bytes) writes it in a small versioned binary format of at most
/// [`MAX_HANDLE_BYTES`] bytes with a check digest; [`from_bytes`](Self::from_bytes) reads it
/// strictly. It holds no credential. The task id may be a bearer secret to the server ("Servers
/// MAY use task IDs as bearer tokens"): store handles as such (its `Debug` shows a prefix only).
#[derive(Clone, PartialEq, Eq)]
pub struct TaskHandle {
    server: String,
    id: TaskId,
    context: [u8; 32],
    era: Era,
    version: String,
    created_unix_ms: u64,
    deadline_unix_ms: u64,
    ttl_ms: Option<u64>,
    answered: Vec<[u8; 8]>,
}

impl core::fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskHandle")
            .field("server", &crate::auth::redact::url(&self.server))
            .field("id", &self.id)
            .field("era", &self.era)
            .field("version", &self.version)
            .field("created_unix_ms", &self.created_unix_ms)
            .field("deadline_unix_ms", &self.deadline_unix_ms)
            .field("ttl_ms", &self.ttl_ms)
            .field("answered", &self.answered.len())
            .finish_non_exhaustive()
    }
}

fn server_of(config: &Config) -> String {
    format!("{}{}", config.endpoint.origin(), config.endpoint.target())
}

impl TaskHandle {
    /// The handle of `task`, created at `now_unix_ms` on a connection with `config` that speaks
    /// `version` of `era`: its deadline is [`Budgets::task_time`](crate::Budgets::task_time)
    /// later. A URL, id or version too long for a handle is [`HandleError::TooLong`].
    pub fn new(
        config: &Config,
        era: Era,
        version: &str,
        task: &Task,
        now_unix_ms: u64,
    ) -> Result<TaskHandle, HandleError> {
        let server = server_of(config);
        if server.len() > MAX_HANDLE_URL {
            return Err(HandleError::TooLong {
                what: "a server URL",
            });
        }
        if task.id.as_str().len() > MAX_HANDLE_ID {
            return Err(HandleError::TooLong { what: "a task id" });
        }
        if version.len() > MAX_HANDLE_PROTOCOL {
            return Err(HandleError::TooLong {
                what: "a protocol version",
            });
        }
        let task_ms = u64::try_from(config.budgets.task_time.as_millis()).unwrap_or(u64::MAX);
        Ok(TaskHandle {
            server,
            id: task.id.clone(),
            context: *AuthContext::principal(config).digest(),
            era,
            version: version.to_owned(),
            created_unix_ms: now_unix_ms,
            deadline_unix_ms: now_unix_ms.saturating_add(task_ms),
            ttl_ms: task.ttl_ms,
            answered: Vec::new(),
        })
    }

    /// The task's id.
    pub fn id(&self) -> &TaskId {
        &self.id
    }

    /// The server's endpoint URL, normalised (origin, path and query).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The era spoken when the task was created.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol version spoken when the task was created.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// When the task was created, in milliseconds since the Unix epoch on the embedder's clock.
    pub fn created_unix_ms(&self) -> u64 {
        self.created_unix_ms
    }

    /// When the task's time budget ends, in milliseconds since the Unix epoch.
    pub fn deadline_unix_ms(&self) -> u64 {
        self.deadline_unix_ms
    }

    /// The last `ttlMs` the server reported (`None`: unlimited).
    pub fn ttl_ms(&self) -> Option<u64> {
        self.ttl_ms
    }

    /// Records a newer `ttlMs` ("This value MAY change over the lifetime of a task").
    pub fn set_ttl_ms(&mut self, ttl_ms: Option<u64>) {
        self.ttl_ms = ttl_ms;
    }

    /// Records the input-request keys `book` has answered (their digests, at most
    /// [`MAX_INPUT_KEYS`](super::MAX_INPUT_KEYS)), so that a task resumed from this handle
    /// ([`InputBook::resumed`](super::InputBook::resumed)) never answers one again: persist the
    /// handle again after each `tasks/update`.
    pub fn record_answers(&mut self, book: &super::InputBook) {
        self.answered = book
            .answered_digests()
            .into_iter()
            .take(super::MAX_INPUT_KEYS)
            .collect();
    }

    /// The digests of the answered keys recorded.
    pub(crate) fn answered(&self) -> &[[u8; 8]] {
        &self.answered
    }

    /// Whether `now_unix_ms` is past the task's own deadline or past `ttlMs` after its creation
    /// (the TTL as a backstop): [`Budget::TaskTime`](crate::Budget::TaskTime) exceeded, or
    /// [`TaskError::Expired`].
    pub fn check_time(&self, now_unix_ms: u64, config: &Config) -> Result<(), TaskError> {
        if now_unix_ms >= self.deadline_unix_ms {
            return Err(TaskError::Budget(
                config.budgets.exceeded(crate::Budget::TaskTime),
            ));
        }
        if let Some(ttl) = self.ttl_ms {
            if now_unix_ms >= self.created_unix_ms.saturating_add(ttl) {
                return Err(TaskError::Expired { ttl_ms: ttl });
            }
        }
        Ok(())
    }

    /// Refuses the handle unless it belongs to `principal` (an [`AuthContext::principal`]).
    pub fn check_context(&self, principal: &AuthContext) -> Result<(), HandleError> {
        if &self.context == principal.digest() {
            Ok(())
        } else {
            Err(HandleError::OtherContext)
        }
    }

    /// Refuses the handle unless it belongs to the server of `config` and to its principal
    /// ([`AuthContext::principal`]: with a grant, any token of that grant): what a resumption
    /// checks first.
    pub fn check(&self, config: &Config) -> Result<(), HandleError> {
        if self.server != server_of(config) {
            return Err(HandleError::OtherServer);
        }
        self.check_context(&AuthContext::principal(config))
    }

    /// This handle bound to the server and principal of `config` instead of its
    /// own, everything else kept (the task id, era, version, times, answered keys). For a
    /// recording: a transcript holds the handle rebound to the stand-in configuration its
    /// replay runs with (a stand-in token, redacted query values), so that the replay's
    /// resumption passes [`check`](Self::check) as the recorded one did, and the transcript
    /// holds neither the real URL's secret query values nor a digest of the real credential.
    /// Never a way to move a task to another context: the server checks its own authorization
    /// on every task request. A URL too long for a handle is [`HandleError::TooLong`].
    pub fn rebound(&self, config: &Config) -> Result<TaskHandle, HandleError> {
        let server = server_of(config);
        if server.len() > MAX_HANDLE_URL {
            return Err(HandleError::TooLong {
                what: "a server URL",
            });
        }
        Ok(TaskHandle {
            server,
            context: *AuthContext::principal(config).digest(),
            ..self.clone()
        })
    }

    /// The handle's bytes: the format of [`HANDLE_VERSION`], at most [`MAX_HANDLE_BYTES`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + self.server.len() + self.id.as_str().len());
        out.extend_from_slice(MAGIC);
        out.push(HANDLE_VERSION);
        put_str16(&mut out, &self.server);
        put_str16(&mut out, self.id.as_str());
        out.extend_from_slice(&self.context);
        out.push(match self.era {
            Era::Modern => 0,
            Era::Legacy => 1,
        });
        // At most MAX_HANDLE_PROTOCOL bytes (checked when made and when read).
        out.push(u8::try_from(self.version.len()).unwrap_or(u8::MAX));
        out.extend_from_slice(self.version.as_bytes());
        out.extend_from_slice(&self.created_unix_ms.to_be_bytes());
        out.extend_from_slice(&self.deadline_unix_ms.to_be_bytes());
        match self.ttl_ms {
            None => out.push(0),
            Some(t) => {
                out.push(1);
                out.extend_from_slice(&t.to_be_bytes());
            }
        }
        // At most MAX_INPUT_KEYS (checked when recorded and when read).
        out.push(u8::try_from(self.answered.len()).unwrap_or(u8::MAX));
        for d in &self.answered {
            out.extend_from_slice(d);
        }
        let check = Sha256::digest(&out);
        out.extend_from_slice(&check[..CHECK]);
        out
    }

    /// Reads a handle strictly: more than [`MAX_HANDLE_BYTES`], another format version, bytes
    /// that end early or go on after the end, a check digest that does not match, or a field no
    /// handle holds is a [`HandleError`]; never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<TaskHandle, HandleError> {
        if bytes.len() > MAX_HANDLE_BYTES {
            return Err(HandleError::Oversize {
                len: bytes.len(),
                max: MAX_HANDLE_BYTES,
            });
        }
        let head = bytes.len().min(MAGIC.len());
        if bytes[..head] != MAGIC[..head] {
            return Err(HandleError::NotAHandle);
        }
        let mut r = Reader { b: bytes, at: head };
        if head < MAGIC.len() {
            return Err(HandleError::Truncated);
        }
        let version = r.u8()?;
        if version == TOKEN_BOUND_HANDLE_VERSION {
            return Err(HandleError::TokenBound { found: version });
        }
        if version != HANDLE_VERSION {
            return Err(HandleError::ForeignVersion { found: version });
        }
        let server = r.str16()?;
        let id = r.str16()?;
        let context: [u8; 32] = r.take(32)?.try_into().map_err(|_| HandleError::Truncated)?;
        let era = r.u8()?;
        let protocol_len = r.u8()?;
        let protocol = r.take(usize::from(protocol_len))?;
        let created = r.u64()?;
        let deadline = r.u64()?;
        let ttl = match r.u8()? {
            0 => None,
            1 => Some(r.u64()?),
            _ => return Err(HandleError::Invalid { what: "ttl flag" }),
        };
        let count = usize::from(r.u8()?);
        let mut answered = Vec::with_capacity(count.min(super::MAX_INPUT_KEYS));
        for _ in 0..count {
            let d: [u8; 8] = r.take(8)?.try_into().map_err(|_| HandleError::Truncated)?;
            answered.push(d);
        }
        let end = r.at;
        let check = r.take(CHECK)?;
        if r.at != bytes.len() {
            return Err(HandleError::TrailingBytes);
        }
        if Sha256::digest(&bytes[..end])[..CHECK] != *check {
            return Err(HandleError::Corrupt);
        }
        let text = |b: &[u8], what| {
            core::str::from_utf8(b)
                .map(str::to_owned)
                .map_err(|_| HandleError::Invalid { what })
        };
        let server = text(server, "server URL")?;
        if server.len() > MAX_HANDLE_URL || crate::Endpoint::parse(&server).is_err() {
            return Err(HandleError::Invalid { what: "server URL" });
        }
        let id = TaskId::parse(&text(id, "task id")?, MAX_HANDLE_ID)
            .map_err(|_| HandleError::Invalid { what: "task id" })?;
        let era = match era {
            0 => Era::Modern,
            1 => Era::Legacy,
            _ => return Err(HandleError::Invalid { what: "era" }),
        };
        let version = text(protocol, "protocol version")?;
        if version.len() > MAX_HANDLE_PROTOCOL || version.chars().any(char::is_control) {
            return Err(HandleError::Invalid {
                what: "protocol version",
            });
        }
        if answered.len() > super::MAX_INPUT_KEYS {
            return Err(HandleError::Invalid {
                what: "answered keys",
            });
        }
        Ok(TaskHandle {
            server,
            id,
            context,
            era,
            version,
            created_unix_ms: created,
            deadline_unix_ms: deadline,
            ttl_ms: ttl,
            answered,
        })
    }
}

/// Writes `s` with a 16-bit length first (the callers bound it far below 65 535).
fn put_str16(out: &mut Vec<u8>, s: &str) {
    let len = u16::try_from(s.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&s.as_bytes()[..usize::from(len).min(s.len())]);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], HandleError> {
        let end = self.at.checked_add(n).ok_or(HandleError::Truncated)?;
        let s = self.b.get(self.at..end).ok_or(HandleError::Truncated)?;
        self.at = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, HandleError> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64, HandleError> {
        let b: [u8; 8] = self
            .take(8)?
            .try_into()
            .map_err(|_| HandleError::Truncated)?;
        Ok(u64::from_be_bytes(b))
    }

    fn str16(&mut self) -> Result<&'a [u8], HandleError> {
        let b: [u8; 2] = self
            .take(2)?
            .try_into()
            .map_err(|_| HandleError::Truncated)?;
        self.take(usize::from(u16::from_be_bytes(b)))
    }
}
