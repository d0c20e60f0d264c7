//! What can go wrong with a task, typed.
use crate::prelude::*;

use crate::budget::BudgetExceeded;
use crate::error::{ErrorKind, RpcError};

use super::TaskStatus;

/// Bytes kept of a server-chosen string quoted in a [`TaskError`] (a status, a method, a key).
pub const MAX_QUOTED: usize = 64;

/// A task broke the rules of SEP-2663, ran out of one of its budgets, or is unknown to the
/// server.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// A task budget ran out (the id's length, polls, update rounds, the task's time).
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// A task id that is empty or holds a control character (C0, DEL or C1).
    #[error("invalid task id: {reason}")]
    InvalidId {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A `status` this client does not know: "`working` | `input_required` | `completed` |
    /// `cancelled` | `failed`" are the only ones.
    #[error("unknown task status {status:?}")]
    UnknownStatus {
        /// The status received (truncated to [`MAX_QUOTED`] bytes).
        status: String,
    },
    /// A task that had reached a terminal status reported another one.
    #[error("the task's terminal status {from} changed to {to}")]
    TerminalChanged {
        /// The terminal status seen first.
        from: TaskStatus,
        /// The status reported later.
        to: TaskStatus,
    },
    /// An answer about another task than the one asked about.
    #[error("the answer is about another task")]
    OtherTask,
    /// A `CreateTaskResult` (`resultType: "task"`) in answer to a request that cannot create a
    /// task: "A client that receives `CreateTaskResult` in response to an unsupported request
    /// type MUST interpret this as an invalid response to the request."
    #[error("a task was created in answer to {method}, which cannot create one")]
    UnsupportedRequest {
        /// The request's method (truncated to [`MAX_QUOTED`] bytes).
        method: String,
    },
    /// A `CreateTaskResult` in answer to a request that did not declare the extension: "A server
    /// MUST NOT return `CreateTaskResult` to a client that did not include the extension
    /// capability on its request".
    #[error("a task was created although the request did not declare the tasks extension")]
    NotDeclared,
    /// A `resultType` where the task's answer must have another one (`tasks/get`, `tasks/update`
    /// and `tasks/cancel` answer with `"complete"`).
    #[error("unexpected resultType {result_type:?} in answer to {method}")]
    WrongResultType {
        /// The method answered.
        method: &'static str,
        /// The `resultType` received (truncated to [`MAX_QUOTED`] bytes).
        result_type: String,
    },
    /// A member the task's status requires is absent or not an object (`result` for
    /// `completed`, `error` for `failed`, `inputRequests` for `input_required`).
    #[error("a {status} task without its {member}")]
    MissingMember {
        /// The status.
        status: TaskStatus,
        /// The missing member.
        member: &'static str,
    },
    /// The answer is not a task object (malformed JSON, a member of the wrong type, a duplicate
    /// member, a `ttlMs` or `pollIntervalMs` that is not a non-negative integer).
    #[error("malformed task: {reason}")]
    Malformed {
        /// serde_json's description (truncated).
        reason: String,
    },
    /// `inputRequests` that break the bookkeeping's rules: a key too long, too many keys, an
    /// entry that is not an object.
    #[error("unusable input requests: {reason}")]
    InputRequests {
        /// What is wrong.
        reason: &'static str,
    },
    /// The embedder answered an input request key that is not outstanding (never asked, no
    /// longer asked, or already answered): "Each key MUST correspond to a currently-outstanding
    /// inputRequest key."
    #[error("input response for a key that is not outstanding: {key:?}")]
    NotOutstanding {
        /// The key (truncated to [`MAX_QUOTED`] bytes).
        key: String,
    },
    /// The server does not know the task, or it expired: JSON-RPC `-32602` to `tasks/get`,
    /// `tasks/update` or `tasks/cancel` ("Invalid or nonexistent `taskId`: `-32602`"). Terminal:
    /// polling again cannot help.
    #[error("the server does not know the task (or it expired): {0}")]
    UnknownTask(RpcError),
    /// A 2025-11-25 tool whose `execution.taskSupport` is `"required"`: "clients MUST invoke the
    /// tool as a task. Servers MUST return a `-32601` (Method not found) error if a client does
    /// not attempt to do so." This client does not speak the 2025-11-25 experimental tasks
    /// (superseded by the `io.modelcontextprotocol/tasks` extension), so it refuses such a call
    /// before sending it, in a legacy session whose server declared `tasks.requests.tools.call`
    /// (without it `taskSupport` does not count; see docs/tasks.md).
    #[error("tool {tool:?} requires the 2025-11-25 experimental tasks, which this client does not speak")]
    LegacyTaskRequired {
        /// The tool's name (truncated to [`MAX_QUOTED`] bytes).
        tool: String,
    },
    /// The task ended `cancelled`: "The request was cancelled before completion." Terminal: the
    /// call has no result.
    #[error("the task was cancelled{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Cancelled {
        /// The task's last `statusMessage`, if any (cut and made inert).
        message: Option<String>,
    },
    /// The stream of a `tools/call` that declared the extension broke after the request may
    /// have reached the server and before its answer: a task may have been created whose id
    /// never arrived. The call is not re-sent ("a second `tools/call` would start a second
    /// task"); the embedder decides whether to call again.
    #[error("the tools/call answer was lost after it was sent; not re-sent, since it may have created a task")]
    CreationLost,
    /// A [`TaskHandle`](super::TaskHandle) this connection cannot resume: another server,
    /// another principal, another era, another format version, or past its deadline.
    #[error("the task handle cannot be resumed here: {0}")]
    Handle(#[from] super::HandleError),
    /// The task's `ttlMs` has elapsed since it was created without a terminal status ("the
    /// client MAY consider the task to no longer be usable").
    #[error("the task outlived its ttlMs of {ttl_ms} ms")]
    Expired {
        /// The last `ttlMs` the server reported.
        ttl_ms: u64,
    },
}

impl TaskError {
    /// The kind of the failure: an exceeded budget fails the connection, as every budget does;
    /// everything else is an answer that cannot be used.
    pub fn kind(&self) -> ErrorKind {
        match self {
            TaskError::Budget(_) | TaskError::Expired { .. } => ErrorKind::ConnectionFailed,
            _ => ErrorKind::ServerAnswered,
        }
    }
}

impl From<TaskError> for crate::Error {
    fn from(e: TaskError) -> crate::Error {
        match e {
            TaskError::Budget(b) => crate::Error::Budget(b),
            other => crate::Error::Task(other),
        }
    }
}
