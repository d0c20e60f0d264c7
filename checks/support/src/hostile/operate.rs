//! The operation of a hostile scenario through an adapter's public API, shared by both adapters'
//! `tests/hostile_sockets.rs`: each brings this module (as `operate`) into scope next to `hostile`
//! and `adapter_run`, and declares `operate` and the test with [`crate::hostile_socket_test!`],
//! giving only how its runtime waits for an operation.
#![allow(dead_code)]

use mcp_sansio_net::CallObserver;

use super::Input;

/// Answers input requests as the scenario says (a call's own, and a task's).
pub struct Answer(pub Input);

impl CallObserver for Answer {
    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        self.0.answer(requests.get())
    }
}

/// Parallel scenarios: most of them wait on a deadline, few use the CPU.
pub const WORKERS: usize = 12;

/// Declares, for an adapter whose `Client` and `fn run(s: &Scenario, counted: bool) -> Run` are in
/// scope, `fn operate(s: &Scenario, port: u16) -> (Outcome, Duration)` and the tests that play
/// the catalogue with `run` (its task scenarios in a test of their own): `async` is present when its operations are futures and
/// `[$($wait)*]` is what waits for an operation (`.await`, or nothing).
#[macro_export]
macro_rules! hostile_socket_test {
    ($($async:ident)? [$($wait:tt)*]) => {
        #[test]
        fn hostile_catalogue_over_sockets() {
            adapter_run::play_catalogue(operate::WORKERS, run);
        }

        #[test]
        fn hostile_task_scenarios_over_sockets() {
            adapter_run::play_tasks(operate::WORKERS, run);
        }

        /// The operation of `s` through the adapter's public API, with the time it took.
        $($async)? fn operate(s: &Scenario, port: u16) -> (Outcome, Duration) {
            let client = Client::builder()
                .policy(AddressPolicy::strict().allow_loopback(true))
                .h2_prior_knowledge(s.over_http2)
                .era_hints(false)
                .build();
            let config = config_for(s, port);
            let started = Instant::now();
            let connected = client.connect(config)$($wait)*;
            // A scenario played over HTTP/2 is spoken over HTTP/2.
            let connected = match connected {
                Ok(session) if s.over_http2 && session.http_version() != "HTTP/2" => {
                    return (
                        Outcome::SetupFailed(mcp_sansio::Error::Misuse {
                            reason: "the session did not speak HTTP/2",
                        }),
                        started.elapsed(),
                    );
                }
                other => other,
            };
            if s.op == Op::Connect {
                let took = started.elapsed();
                return match connected {
                    Ok(session) => {
                        drop(session);
                        (Outcome::Connected, took)
                    }
                    Err(e) => (Outcome::Failed(e), took),
                };
            }
            let mut session = match connected {
                Ok(session) => session,
                Err(e) => return (Outcome::SetupFailed(e), started.elapsed()),
            };
            let started = Instant::now();
            let outcome = match s.op {
                Op::List => match session.list_tools()$($wait)* {
                    Ok(c) => Outcome::Listed {
                        tools: c.tools.len(),
                        refused: c.refused_count(),
                    },
                    Err(e) => Outcome::Failed(e),
                },
                Op::Call(args) => {
                    let mut answer = Answer(input_answer(s));
                    match session.call_tool_with("t", args.as_bytes(), &mut answer)$($wait)* {
                        Ok(r) => Outcome::Called {
                            blocks: r.content.len(),
                            unknown: r.dropped_unknown,
                            invalid: r.dropped_invalid,
                        },
                        Err(e) => Outcome::Failed(e),
                    }
                }
                Op::Close => {
                    let closed = session.close()$($wait)*;
                    let took = started.elapsed();
                    return match closed {
                        Ok(()) => (Outcome::Closed, took),
                        Err(e) => (Outcome::Failed(e), took),
                    };
                }
                Op::Connect => unreachable!(),
            };
            let took = started.elapsed();
            drop(session);
            drop(client);
            (outcome, took)
        }
    };
}
