//! The sameness table's acts through an async runtime of the shared network code (tokio, smol).

use std::sync::Arc;

use mcp_sansio_net::{AsyncNet, Client};

use crate::sameness::{called, describe, listed, policy, Act, Done, Memory, Scenario};

/// Runs the acts of `s` through a client on `R`; one [`describe`]d line per act run.
pub async fn acts<R: AsyncNet>(
    s: &Scenario,
    url: &str,
    port: u16,
    sink: Arc<Memory>,
) -> Vec<String> {
    let client = Client::<R>::builder()
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
                    let line =
                        describe(Done::Connected(c.era(), c.version(), info.as_deref()), port);
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
}
