//! What the session driver's tests over an in-memory [`Io`] share: a client whose sessions have
//! no sockets of their own, the JSON-RPC method and id of each request the driver starts, and
//! the bytes of a JSON answer.
#![allow(dead_code)]

use std::sync::Arc;

use mcp_sansio::{ExchangeId, Transmit, TransportError};
use mcp_sansio_net::{BuildClient, Io, Shared};

/// A client whose sockets are `()`: its sessions' exchanges go to the test's [`Io`].
pub struct TestClient(pub Arc<Shared<()>>);

impl BuildClient for TestClient {
    type Socket = ();
    fn from_shared(shared: Arc<Shared<()>>) -> Self {
        TestClient(shared)
    }
}

/// The JSON-RPC method and id of the HTTP/1.1 `request` the driver started; for a request
/// without a JSON body (a `GET`, a `DELETE`) its HTTP method and 0.
pub fn method_and_id(request: &[u8]) -> (String, u64) {
    let text = String::from_utf8_lossy(request);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(v) => (
            v["method"].as_str().unwrap_or("?").to_owned(),
            v["id"].as_u64().unwrap_or(0),
        ),
        Err(_) => (text.split(' ').next().unwrap_or("?").to_owned(), 0),
    }
}

/// Requests started and not yet answered: (exchange, [`method_and_id`]).
#[derive(Default)]
pub struct Waiting(pub Vec<(ExchangeId, String, u64)>);

impl Io for Waiting {
    fn start(&mut self, t: Transmit, request: Vec<u8>) -> Result<(), TransportError> {
        let (method, id) = method_and_id(&request);
        self.0.push((t.exchange, method, id));
        Ok(())
    }
    fn read_on(&mut self, _: ExchangeId) {}
    fn finish(&mut self, _: ExchangeId, _: bool) {}
    fn abandon(&mut self, _: ExchangeId) {}
}

/// An HTTP/1.1 response of `status` with a JSON `body` and `headers` (each line ending in
/// CRLF), delimited by its length.
pub fn json(status: u16, headers: &str, body: &str) -> Vec<u8> {
    response(status, "application/json", headers, body)
}

/// An HTTP/1.1 response of `status` with a `body` of `content_type` and `headers` (each line
/// ending in CRLF), delimited by its length.
pub fn response(status: u16, content_type: &str, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n{headers}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
