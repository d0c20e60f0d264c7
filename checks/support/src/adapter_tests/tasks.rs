//! What the adapters' task tests (SEP-2663, against the demo server's `slow_count`) share: the
//! configuration with tasks on, the call observer that persists a task's handle bytes, and the
//! resume and cancel tests both adapters declare with [`crate::task_resume_tests!`].

use std::time::Duration;

use mcp_sansio::task::TaskHandle;
use mcp_sansio::Config;
use mcp_sansio_net::CallObserver;

/// A configuration for `url` with tasks and the input hook on, and a poll floor of 50 ms (the
/// demo server asks for 100 ms between polls; the floor is ours).
pub fn config(url: &str) -> Config {
    let mut config = Config::new(url).unwrap().with_tasks(true);
    config.input_hook = true;
    config.budgets.task_poll_floor = Duration::from_millis(50);
    config
}

/// The answer to a task's input request (`requests`, keyed by request): its first request
/// accepted (`accept`) or declined, with empty content; `None` if `requests` is not a JSON
/// object with a key.
pub fn answer_input(requests: &serde_json::value::RawValue, accept: bool) -> Option<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_str(requests.get()).ok()?;
    let key = v.as_object()?.keys().next()?.clone();
    let action = if accept { "accept" } else { "decline" };
    Some(format!(r#"{{"{key}":{{"action":"{action}","content":{{}}}}}}"#).into_bytes())
}

/// Persists the task's handle bytes (`TaskHandle::to_bytes`) as a durable store would, and
/// answers the task's input request with `accept` (`None`: declines, which ends the call and
/// leaves the task running on the server).
#[derive(Default)]
pub struct Persist {
    /// The handle's bytes, once the handle reached the observer.
    pub bytes: Option<Vec<u8>>,
    /// How the input request is answered; `None`: no answer.
    pub accept: Option<bool>,
}

impl CallObserver for Persist {
    fn task_handle(&mut self, handle: &TaskHandle) {
        self.bytes = Some(handle.to_bytes());
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        answer_input(requests, self.accept?)
    }
}

/// Declares the task tests of an adapter (a task of the demo server's `slow_count` resumed and
/// cancelled from its persisted handle by a second client; another authorization context
/// refused; a resume recorded, with and without a token). In scope: the adapter's `Client` and
/// `AddressPolicy`, `DemoServer` and `Options` of the demo server, `TaskHandle`,
/// `HandleError` and `TaskError` of `mcp_sansio::task`, `ContentBlock` and `Error` of
/// `mcp_sansio`, and this module's [`config`] and [`Persist`]. `#[$test]` is the test
/// attribute, `async` is present when the adapter's operations are futures, `[$($wait)*]` is
/// what waits for an operation (`.await`, or nothing).
#[macro_export]
macro_rules! task_resume_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        fn loopback_client() -> Client {
            Client::builder()
                .policy(AddressPolicy::strict().allow_loopback(true))
                .build()
        }

        /// Starts `slow_count` through a first client whose work item then ends (it declines the
        /// task's input request, so its call fails, and the client is dropped): the persisted
        /// handle bytes. "Clients SHOULD persist task IDs to durable storage so that polling can
        /// resume after a crash or restart."
        $($async)? fn started_task(server: &DemoServer) -> Vec<u8> {
            let client = loopback_client();
            let mut session = client.connect(config(&server.url()))$($wait)*.unwrap();
            let mut persist = Persist::default();
            let failed = session.call_tool_with("slow_count", br#"{"to":4}"#, &mut persist)$($wait)*;
            assert!(
                failed.is_err(),
                "a declined input ends the call: {failed:?}"
            );
            drop(session);
            drop(client);
            persist.bytes.expect("the handle reached the observer")
        }

        /// A second `Client` (its own pool and session) resumes the task from the persisted bytes
        /// and gets the tool's result; the server made one task: the tool ran once ("Clients SHOULD
        /// persist task IDs to durable storage so that polling can resume after a crash or
        /// restart").
        #[$test]
        $($async)? fn a_second_client_resumes_the_task_from_its_persisted_handle() {
            let server = DemoServer::start(Options::default()).unwrap();
            let bytes = started_task(&server)$($wait)*;
            let handle = TaskHandle::from_bytes(&bytes).unwrap();
            let client = loopback_client();
            let mut session = client.connect(config(&server.url()))$($wait)*.unwrap();
            let mut persist = Persist {
                accept: Some(true),
                ..Persist::default()
            };
            let result = session.resume_task_with(&handle, &mut persist)$($wait)*.unwrap();
            assert!(!result.is_error);
            assert!(
                matches!(&result.content[..], [ContentBlock::Text { text, .. }] if text == "1 2 3 4"),
                "{:?}",
                result.content
            );
            assert_eq!(server.tasks_created(), 1, "the tool ran once");
            session.close()$($wait)*.unwrap();
            server.shutdown();
        }

        /// `Session::cancel_task` from a second client: "Cancellation is cooperative and eventually
        /// consistent", so the client polls after `tasks/cancel` until the task reports
        /// `cancelled`.
        #[$test]
        $($async)? fn a_second_client_cancels_the_task_to_cancelled() {
            let server = DemoServer::start(Options::default()).unwrap();
            let bytes = started_task(&server)$($wait)*;
            let handle = TaskHandle::from_bytes(&bytes).unwrap();
            let client = loopback_client();
            let mut session = client.connect(config(&server.url()))$($wait)*.unwrap();
            let ended = session.cancel_task(&handle)$($wait)*;
            assert!(
                matches!(ended, Err(Error::Task(TaskError::Cancelled { .. }))),
                "{ended:?}"
            );
            // The server agrees: a later resume finds the task cancelled.
            let again = session.resume_task(&handle)$($wait)*;
            assert!(
                matches!(again, Err(Error::Task(TaskError::Cancelled { .. }))),
                "{again:?}"
            );
            assert_eq!(server.tasks_created(), 1);
            session.close()$($wait)*.unwrap();
            server.shutdown();
        }

        /// A handle made under one credential is refused under another, before any request about
        /// the task ("Servers MUST perform authentication and authorization checks on each
        /// task-related request"; the client does not present one context's task under another's
        /// credential).
        #[$test]
        $($async)? fn a_handle_of_another_authorization_context_is_refused() {
            let server = DemoServer::start(Options::default()).unwrap();
            let bytes = started_task(&server)$($wait)*;
            let handle = TaskHandle::from_bytes(&bytes).unwrap();
            let client = loopback_client();
            let mut other = config(&server.url());
            other.bearer_token = "another-credential".to_owned();
            let mut session = client.connect(other)$($wait)*.unwrap();
            let served = server.stats().requests_served;
            for cancel in [false, true] {
                let refused = if cancel {
                    session.cancel_task(&handle)$($wait)*
                } else {
                    session.resume_task(&handle)$($wait)*
                };
                assert!(
                    matches!(
                        refused,
                        Err(Error::Task(TaskError::Handle(HandleError::OtherContext)))
                    ),
                    "{refused:?}"
                );
            }
            assert_eq!(server.stats().requests_served, served, "nothing was sent");
            session.close()$($wait)*.unwrap();
            server.shutdown();
        }

        /// A resume from a persisted handle in a recording session is recorded (`op resume`) and
        /// its transcript replays to the same result.
        #[$test]
        $($async)? fn a_recorded_resume_replays() {
            use $crate::adapter_tests::recording::{recording_client, replays, Memory};
            let server = DemoServer::start(Options::default()).unwrap();
            let bytes = started_task(&server)$($wait)*;
            let handle = TaskHandle::from_bytes(&bytes).unwrap();
            let sink = std::sync::Arc::new(Memory::default());
            let client: Client = recording_client(sink.clone());
            let mut session = client.connect(config(&server.url()))$($wait)*.unwrap();
            let mut persist = Persist {
                accept: Some(true),
                ..Persist::default()
            };
            let result = session.resume_task_with(&handle, &mut persist)$($wait)*.unwrap();
            assert!(!result.is_error);
            session.close()$($wait)*.unwrap();
            server.shutdown();
            let (text, t) = replays(&sink);
            assert!(text.contains(" op resume "), "{text}");
            let outcome = t.outcome();
            let finished = outcome
                .iter()
                .find_map(|e| e.get("call_finished"))
                .unwrap_or_else(|| panic!("{outcome:?}"));
            assert_eq!(finished["content"][0]["text"], "1 2 3 4");
        }

        /// A resume in a recording session with a bearer token is recorded (`op resume`) with
        /// the handle rebound to the replay's stand-in token: the transcript holds neither the
        /// token nor the handle of its context, and replays to the same result, whole and one
        /// byte at a time.
        #[$test]
        $($async)? fn a_recording_session_with_a_token_records_a_resume_that_replays() {
            use $crate::adapter_tests::recording::{recording_client, replays, Memory};
            const TOKEN: &str = "tok-task-s3cr3t";
            let server = DemoServer::start(Options {
                bearer_token: Some(TOKEN.into()),
                ..Options::default()
            })
            .unwrap();
            let mut config = config(&server.url());
            config.bearer_token = TOKEN.into();
            let client = loopback_client();
            let mut session = client.connect(config.clone())$($wait)*.unwrap();
            let mut persist = Persist::default();
            let failed = session.call_tool_with("slow_count", br#"{"to":4}"#, &mut persist)$($wait)*;
            assert!(failed.is_err(), "a declined input ends the call: {failed:?}");
            drop(session);
            let handle = TaskHandle::from_bytes(&persist.bytes.unwrap()).unwrap();
            let sink = std::sync::Arc::new(Memory::default());
            let client: Client = recording_client(sink.clone());
            let mut session = client.connect(config.clone())$($wait)*.unwrap();
            let mut persist = Persist {
                accept: Some(true),
                ..Persist::default()
            };
            let result = session.resume_task_with(&handle, &mut persist)$($wait)*.unwrap();
            assert!(!result.is_error);
            session.close()$($wait)*.unwrap();
            server.shutdown();
            let (text, t) = replays(&sink);
            assert!(text.contains(" op resume "), "{text}");
            assert!(!text.contains(TOKEN));
            let recorded = $crate::adapter_tests::tasks::recorded_handle(&t);
            assert_eq!(recorded.id(), handle.id());
            assert!(recorded.check(&config).is_err(), "rebound away from the real token");
            assert!(recorded.check(&t.config.to_config().unwrap()).is_ok());
            let outcome = t.outcome();
            let finished = outcome
                .iter()
                .find_map(|e| e.get("call_finished"))
                .unwrap_or_else(|| panic!("{outcome:?}"));
            assert_eq!(finished["content"][0]["text"], "1 2 3 4");
        }
    };
}

/// The handle of the first `op resume` (or `resume_cancel`, `resume_get`) of `t`, read.
pub fn recorded_handle(t: &mcp_sansio_transcript::Transcript) -> TaskHandle {
    use mcp_sansio_transcript::{Record, RecordedOperation};
    let bytes = t
        .entries
        .iter()
        .find_map(|e| match &e.record {
            Record::Operation(
                RecordedOperation::ResumeTask { handle, .. }
                | RecordedOperation::GetTask { handle },
            ) => Some(handle.0.clone()),
            _ => None,
        })
        .expect("a recorded resume");
    TaskHandle::from_bytes(&bytes).expect("a recorded handle reads")
}
