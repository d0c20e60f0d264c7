//! A call observer both adapters' loopback tests give a legacy server's call.

use mcp_sansio_net::CallObserver;

/// Answers a legacy server's own requests: every elicitation takes its schema's defaults
/// ([`mcp_sansio::elicitation_defaults`]); the test fails on any other request.
pub struct Defaults;

impl CallObserver for Defaults {
    fn server_request(
        &mut self,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> Option<Vec<u8>> {
        assert_eq!(method, "elicitation/create");
        let params: serde_json::Value = serde_json::from_str(params?.get()).ok()?;
        let content = mcp_sansio::elicitation_defaults(&params["requestedSchema"].to_string())?;
        Some(format!(r#"{{"action":"accept","content":{content}}}"#).into_bytes())
    }
}
