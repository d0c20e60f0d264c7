//! The sameness table's acts through the tokio adapter, on a current-thread runtime.

use std::sync::Arc;

use mcp_sansio_tokio::Client;

use crate::sameness::{called, describe, listed, policy, Act, Done, Memory, Runner, Scenario};

/// Runs scenarios through `mcp_sansio_tokio`.
pub struct Tokio;

impl Runner for Tokio {
    fn name(&self) -> &'static str {
        "tokio"
    }

    fn run(&self, s: &Scenario, url: &str, port: u16, sink: Arc<Memory>) -> Vec<String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let client = Client::builder()
                .policy(policy(&s.client))
                .record_to(sink)
                .build();
            let mut session = None;
            let mut out = Vec::new();
            for act in s.acts {
                let line = match act {
                    Act::Connect => match client.connect((s.config)(url)).await {
                        Ok(c) => {
                            let info = c.server_info().map(|i| i.name.clone());
                            let line = describe(
                                Done::Connected(c.era(), c.version(), info.as_deref()),
                                port,
                            );
                            session = Some(c);
                            line
                        }
                        Err(e) => describe(Done::Failed(&e), port),
                    },
                    Act::List => match session.as_mut() {
                        Some(c) => match c.list_tools().await {
                            Ok(c) => describe(listed(&c), port),
                            Err(e) => describe(Done::Failed(&e), port),
                        },
                        None => break,
                    },
                    Act::Call => match session.as_mut() {
                        Some(c) => match c.call_tool("echo", br#"{"text":"hi"}"#).await {
                            Ok(r) => describe(called(&r), port),
                            Err(e) => describe(Done::Failed(&e), port),
                        },
                        None => break,
                    },
                    Act::Close => match session.take() {
                        Some(c) => match c.close().await {
                            Ok(()) => describe(Done::Closed, port),
                            Err(e) => describe(Done::Failed(&e), port),
                        },
                        None => break,
                    },
                };
                out.push(line);
            }
            out
        })
    }
}
