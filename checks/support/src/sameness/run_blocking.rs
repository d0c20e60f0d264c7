//! The sameness table's acts through the blocking adapter.

use std::sync::Arc;

use mcp_sansio_blocking::Client;

use crate::sameness::{called, describe, listed, policy, Act, Done, Memory, Runner, Scenario};

/// Runs scenarios through `mcp_sansio_blocking`.
pub struct Blocking;

impl Runner for Blocking {
    fn name(&self) -> &'static str {
        "blocking"
    }

    fn run(&self, s: &Scenario, url: &str, port: u16, sink: Arc<Memory>) -> Vec<String> {
        let client = Client::builder()
            .policy(policy(&s.client))
            .record_to(sink)
            .build();
        let mut session = None;
        let mut out = Vec::new();
        for act in s.acts {
            let line = match act {
                Act::Connect => match client.connect((s.config)(url)) {
                    Ok(c) => {
                        let info = c.server_info().map(|i| i.name.clone());
                        let line =
                            describe(Done::Connected(c.era(), c.version(), info.as_deref()), port);
                        session = Some(c);
                        line
                    }
                    Err(e) => describe(Done::Failed(&e), port),
                },
                Act::List => match session.as_mut().map(|c| c.list_tools()) {
                    Some(Ok(c)) => describe(listed(&c), port),
                    Some(Err(e)) => describe(Done::Failed(&e), port),
                    None => break,
                },
                Act::Call => match session
                    .as_mut()
                    .map(|c| c.call_tool("echo", br#"{"text":"hi"}"#))
                {
                    Some(Ok(r)) => describe(called(&r), port),
                    Some(Err(e)) => describe(Done::Failed(&e), port),
                    None => break,
                },
                Act::Close => match session.take().map(|c| c.close()) {
                    Some(Ok(())) => describe(Done::Closed, port),
                    Some(Err(e)) => describe(Done::Failed(&e), port),
                    None => break,
                },
            };
            out.push(line);
        }
        out
    }
}
