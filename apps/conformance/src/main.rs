//! `mcp-conformance-client`: the client that the MCP conformance suite
//! (`@modelcontextprotocol/conformance`) drives.
//!
//! The suite starts a scenario's mock server and runs this binary with the server's URL as the
//! last argument and the scenario in the environment:
//!
//! - `MCP_CONFORMANCE_SCENARIO`: the scenario's name;
//! - `MCP_CONFORMANCE_PROTOCOL_VERSION`: the revision to speak (`2025-11-25`, `2026-07-28`…);
//!   absent means the client negotiates with its defaults;
//! - `MCP_CONFORMANCE_CONTEXT`: a JSON object with data some scenarios need (e.g. `toolCalls`).
//!
//! With `MCP_CONFORMANCE_RECORD=DIR` (not set by the suite), an `auth/*` scenario is recorded in
//! `DIR`: its authorization as `<stem>.auth.transcript` and its MCP sessions as
//! `<stem>.session.transcript` (later sessions `….transcript.N`), `<stem>` being the scenario
//! name with `/` replaced by `_`, a dot and the version (see `docs/conformance.md`).
//!
//! Every flow goes through the public API of `mcp-sansio-tokio`, configured as an embedder
//! would: loopback allowed (the mock servers listen on `localhost`), everything else at the
//! defaults. The exit status is 0 when the flow ran to its end; the suite judges the rest from
//! what it saw on the wire.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod answers;
mod auth;

use std::process::ExitCode;

use mcp_sansio::Config;
use mcp_sansio::{LEGACY_VERSIONS, MODERN_VERSION};
use mcp_sansio_net::AddressPolicy;
use std::sync::Arc;

use mcp_sansio_tokio::{AuthSession, CallObserver, Client, TranscriptFile};
use serde_json::Value;

/// What the suite asked for.
struct Scenario {
    /// The scenario's name (empty when not given).
    name: String,
    /// The revision to speak, if the suite said.
    version: Option<String>,
    /// The scenario context (`{}` when not given).
    context: Value,
    /// The server's URL, used exactly as given.
    url: String,
}

impl Scenario {
    fn from_env() -> Result<Scenario, String> {
        let url = std::env::args()
            .skip(1)
            .last()
            .ok_or("usage: mcp-conformance-client [ARGS…] SERVER_URL")?;
        let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
        let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
            .ok()
            .filter(|v| !v.is_empty());
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(c) if !c.trim().is_empty() => serde_json::from_str(&c)
                .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
            _ => Value::Object(Default::default()),
        };
        Ok(Scenario {
            name,
            version,
            context,
            url,
        })
    }
}

/// Where to record `scenario` (`MCP_CONFORMANCE_RECORD`): the file stem in `dir`, for `auth/*`
/// scenarios only.
fn record_stem(dir: Option<&str>, scenario: &Scenario) -> Option<std::path::PathBuf> {
    let dir = dir.filter(|d| !d.is_empty())?;
    if !scenario.name.starts_with("auth/") {
        return None;
    }
    let name = scenario.name.replace(['/', '\\'], "_");
    let version = scenario.version.as_deref().unwrap_or("default");
    Some(std::path::Path::new(dir).join(format!("{name}.{version}")))
}

/// The sink of one recorded file, `stem` + `suffix`.
fn record_file(stem: &std::path::Path, suffix: &str) -> Result<Arc<TranscriptFile>, String> {
    let mut path = stem.as_os_str().to_owned();
    path.push(suffix);
    TranscriptFile::create(&path)
        .map(Arc::new)
        .map_err(|e| format!("MCP_CONFORMANCE_RECORD: {}: {e}", path.to_string_lossy()))
}

/// The configuration for `scenario`: the requested revision only, when one is given.
fn config_for(scenario: &Scenario) -> Result<Config, String> {
    let mut config = Config::new(&scenario.url).map_err(|e| format!("{}: {e}", scenario.url))?;
    config.client_info = mcp_sansio::ClientInfo {
        name: "mcp-conformance-client".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    if let Some(v) = &scenario.version {
        versions_for(&mut config, v)?;
    }
    // Input requests of multi-round-trip calls (2026-07-28) and a legacy server's own requests
    // (2025-11-25 and before) are answered by the observer; the capabilities declared match
    // what it answers. The handshake-only scenarios of older revisions declare none.
    let answers_requests = !config.modern_versions.is_empty()
        || config.legacy_versions.first().map(String::as_str) == Some("2025-11-25");
    if answers_requests {
        config.input_hook = true;
        config.client_capabilities =
            r#"{"elicitation":{"form":{}},"sampling":{},"roots":{}}"#.into();
    }
    Ok(config)
}

/// Restricts `config` to revision `v`: a modern revision alone, or a legacy one and the legacy
/// revisions before it.
fn versions_for(config: &mut Config, v: &str) -> Result<(), String> {
    if v >= MODERN_VERSION {
        config.modern_versions = vec![v.to_owned()];
        config.legacy_versions = Vec::new();
        return Ok(());
    }
    let Some(at) = LEGACY_VERSIONS.iter().position(|l| *l == v) else {
        return Err(format!(
            "protocol version {v:?} is not spoken by this client"
        ));
    };
    config.modern_versions = Vec::new();
    config.legacy_versions = LEGACY_VERSIONS[at..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect();
    Ok(())
}

/// Answers input requests and logs progress.
struct Observer;

impl CallObserver for Observer {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        eprintln!(
            "  progress {progress} / {total:?} {}",
            message.unwrap_or("")
        );
    }

    fn server_request(
        &mut self,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> Option<Vec<u8>> {
        eprintln!(
            "  server request {method}: {}",
            params.map_or("", |p| p.get())
        );
        let answer = answers::server_request(method, params.map(|p| p.get()));
        match &answer {
            Some(a) => eprintln!("  answering: {}", String::from_utf8_lossy(a)),
            None => eprintln!("  refusing"),
        }
        answer
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        eprintln!("  input requested: {}", requests.get());
        let answer = answers::input_responses(requests.get());
        match &answer {
            Some(a) => eprintln!("  answering: {}", String::from_utf8_lossy(a)),
            None => eprintln!("  declining"),
        }
        answer
    }
}

/// A failure of the flow, for the exit status and stderr.
fn failed(step: &str, e: &mcp_sansio_tokio::auth::AuthSessionError) -> String {
    format!("{step} failed: {e} ({})", e.kind())
}

async fn call(session: &mut AuthSession, name: &str, arguments: &[u8]) -> Result<(), String> {
    eprintln!("calling {name} {}", String::from_utf8_lossy(arguments));
    let result = session
        .call_tool_with(name, arguments, &mut Observer)
        .await
        .map_err(|e| failed(&format!("tools/call {name}"), &e))?;
    eprintln!(
        "  {} block(s), is_error={}",
        result.content.len(),
        result.is_error
    );
    Ok(())
}

/// The calls a scenario makes after listing, as (tool name, JSON arguments).
fn planned_calls(scenario: &Scenario, catalog: &mcp_sansio::Catalog) -> Vec<(String, Vec<u8>)> {
    match scenario.name.as_str() {
        // Listing is the whole flow: the suite checks the requests and what is not fetched.
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => Vec::new(),
        // The focal tool's inputSchema goes back verbatim to the echo tool.
        "json-schema-2020-12-preservation" => catalog
            .tools
            .iter()
            .find(|t| t.name() == "json_schema_2020_12_tool")
            .map(|t| {
                let args = format!(r#"{{"schema":{}}}"#, t.input_schema());
                vec![("json_schema_echo".to_owned(), args.into_bytes())]
            })
            .unwrap_or_default(),
        // The context names the calls and their arguments.
        _ if scenario.context.get("toolCalls").is_some() => scenario.context["toolCalls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let name = c.get("name")?.as_str()?.to_owned();
                let args = c
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Default::default()));
                Some((name, serde_json::to_vec(&args).ok()?))
            })
            .collect(),
        // Otherwise every usable tool is called once, in server order.
        _ => catalog
            .tools
            .iter()
            .map(|t| {
                (
                    t.name().to_owned(),
                    answers::sample_arguments(t.input_schema()),
                )
            })
            .collect(),
    }
}

async fn run(scenario: Scenario) -> Result<(), String> {
    let config = config_for(&scenario)?;
    eprintln!(
        "scenario {:?} at {} (version {:?})",
        scenario.name, scenario.url, scenario.version
    );
    let policy = AddressPolicy::strict().allow_loopback(true);
    let record = std::env::var("MCP_CONFORMANCE_RECORD").ok();
    let stem = record_stem(record.as_deref(), &scenario);
    let mut builder = Client::builder().policy(policy);
    let mut authorization =
        auth::authorization(&scenario.name, &scenario.url, &scenario.context, policy)?;
    if let Some(stem) = &stem {
        let comment = format!(
            "conformance scenario {} (version {})",
            scenario.name,
            scenario.version.as_deref().unwrap_or("default")
        );
        builder = builder.record_to(record_file(stem, ".session.transcript")?);
        authorization =
            authorization.record_to(record_file(stem, ".auth.transcript")?, 1, &comment);
    }
    let client = builder.build();
    let mut session = AuthSession::connect(&client, config, authorization)
        .await
        .map_err(|e| failed("connect", &e))?;
    eprintln!(
        "connected: {} ({})",
        session.session().version(),
        session.session().era()
    );
    let catalog = session
        .list_tools()
        .await
        .map_err(|e| failed("tools/list", &e))?;
    eprintln!("listed {} tool(s):", catalog.tools.len());
    for t in &catalog.tools {
        eprintln!("  {}", t.name());
    }
    for r in &catalog.refused {
        eprintln!("  refused #{} {:?}: {}", r.index, r.name, r.reason);
    }
    for (name, arguments) in planned_calls(&scenario, &catalog) {
        call(&mut session, &name, &arguments).await?;
    }
    session.close().await.map_err(|e| failed("close", &e))?;
    eprintln!("closed");
    Ok(())
}

fn main() -> ExitCode {
    let scenario = match Scenario::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mcp-conformance-client: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-conformance-client: no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-conformance-client: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str, version: Option<&str>) -> Scenario {
        Scenario {
            name: name.into(),
            version: version.map(Into::into),
            context: Value::Object(Default::default()),
            url: "http://localhost:1/mcp".into(),
        }
    }

    #[test]
    fn a_dated_legacy_version_means_the_handshake_only() {
        let c = config_for(&scenario("initialize", Some("2025-06-18"))).unwrap();
        assert!(c.modern_versions.is_empty());
        assert_eq!(
            c.legacy_versions,
            ["2025-06-18", "2025-03-26", "2024-11-05"]
        );
        assert!(!c.input_hook);
    }

    #[test]
    fn the_modern_version_means_no_fallback_and_the_input_hook() {
        let c = config_for(&scenario("tools_call", Some("2026-07-28"))).unwrap();
        assert_eq!(c.modern_versions, ["2026-07-28"]);
        assert!(c.legacy_versions.is_empty());
        assert!(c.input_hook);
        assert!(config_for(&scenario("x", Some("2023-01-01"))).is_err());
    }

    #[test]
    fn only_auth_scenarios_are_recorded_and_their_names_make_file_stems() {
        let s = scenario("auth/basic-cimd", Some("2026-07-28"));
        assert_eq!(
            record_stem(Some("/tmp/r"), &s).unwrap(),
            std::path::Path::new("/tmp/r/auth_basic-cimd.2026-07-28")
        );
        assert_eq!(record_stem(None, &s), None);
        assert_eq!(record_stem(Some(""), &s), None);
        let plain = scenario("tools_call", Some("2026-07-28"));
        assert_eq!(record_stem(Some("/tmp/r"), &plain), None);
        let no_version = scenario("auth/x", None);
        assert!(record_stem(Some("d"), &no_version)
            .unwrap()
            .ends_with("auth_x.default"));
    }

    #[test]
    fn context_tool_calls_are_made_verbatim() {
        let mut s = scenario("http-custom-headers", Some("2026-07-28"));
        s.context =
            serde_json::json!({"toolCalls":[{"name":"t","arguments":{"region":"us","n":null}}]});
        let calls = planned_calls(&s, &Default::default());
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].0, "t");
        assert_eq!(calls[0].1, br#"{"n":null,"region":"us"}"#.to_vec());
    }
}
