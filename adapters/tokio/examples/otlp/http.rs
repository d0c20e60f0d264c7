//! A small blocking HTTP/1.1 client for the OTLP/HTTP exporters (`opentelemetry-http`'s
//! `HttpClient`): one `POST` per export on a fresh TCP socket, `http://` collectors only, the
//! response read to its end (at most 64 KiB) within a deadline. It keeps the example free of a
//! general-purpose HTTP client; an application would rather enable `opentelemetry-otlp`'s
//! `reqwest-blocking-client` (or `reqwest-client`) feature.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// The longest a collector may take to answer one export.
const DEADLINE: Duration = Duration::from_secs(10);
/// The most of a collector's answer read.
const MAX_RESPONSE: u64 = 64 * 1024;

/// Sends each export as one `POST` on a fresh socket.
#[derive(Debug, Default, Clone, Copy)]
pub struct StdHttpClient;

#[async_trait::async_trait]
impl HttpClient for StdHttpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri();
        if uri.scheme_str() != Some("http") {
            return Err("only http:// collectors".into());
        }
        let host = uri.host().ok_or("no host")?;
        let port = uri.port_u16().unwrap_or(80);
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let mut socket = TcpStream::connect((host, port))?;
        socket.set_read_timeout(Some(DEADLINE))?;
        socket.set_write_timeout(Some(DEADLINE))?;
        let mut head = format!(
            "{} {path} HTTP/1.1\r\nhost: {host}:{port}\r\nconnection: close\r\ncontent-length: {}\r\n",
            request.method(),
            request.body().len()
        );
        for (name, value) in request.headers() {
            if name != "content-length" && name != "host" && name != "connection" {
                head.push_str(&format!("{name}: {}\r\n", value.to_str()?));
            }
        }
        head.push_str("\r\n");
        socket.write_all(head.as_bytes())?;
        socket.write_all(request.body())?;
        let mut answer = Vec::new();
        socket.take(MAX_RESPONSE).read_to_end(&mut answer)?;
        let status_line = answer
            .split(|b| *b == b'\n')
            .next()
            .and_then(|l| std::str::from_utf8(l).ok())
            .ok_or("no status line")?;
        let status: u16 = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or("bad status line")?;
        let body = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(Vec::new(), |at| answer[at + 4..].to_vec());
        Ok(Response::builder().status(status).body(Bytes::from(body))?)
    }
}
