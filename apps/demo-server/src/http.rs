//! HTTP/1.1 over tokio: accepting, reading requests, writing JSON and event-stream answers.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::mcp::{HttpRequest, Reply, Server};
use crate::Counters;

/// Longest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Longest request body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// Most headers in a request.
const MAX_HEADERS: usize = 64;

/// Accepts connections until `stopped` fires.
pub(crate) async fn serve(
    listener: TcpListener,
    server: Arc<Server>,
    counters: Arc<Counters>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    counters.accepted.fetch_add(1, Ordering::Relaxed);
                    counters.open.fetch_add(1, Ordering::Relaxed);
                    let (server, counters) = (server.clone(), counters.clone());
                    tokio::spawn(async move {
                        let _ = stream.set_nodelay(true);
                        let _ = connection(stream, &server, &counters).await;
                        counters.open.fetch_sub(1, Ordering::Relaxed);
                    });
                }
                // Out of descriptors or similar: wait a little and go on.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
}

/// What the connection does after an answer.
#[derive(PartialEq, Eq)]
enum After {
    KeepAlive,
    Close,
}

/// Serves one connection's requests, one after the other.
async fn connection(
    mut stream: TcpStream,
    server: &Server,
    counters: &Counters,
) -> std::io::Result<()> {
    // An idle connection holds no buffer: it is allocated when bytes arrive.
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let (head_len, method, headers, keep_alive, body_len) = loop {
            if !buf.is_empty() {
                match parse_head(&buf) {
                    Ok(Some(h)) => break h,
                    Ok(None) if buf.len() > MAX_HEAD => {
                        return simple(&mut stream, 431, "request head too large").await;
                    }
                    Ok(None) => {}
                    Err(why) => return simple(&mut stream, 400, why).await,
                }
            }
            if buf.is_empty() {
                stream.readable().await?;
                buf.reserve(4096);
            } else if buf.capacity() - buf.len() < 1024 {
                buf.reserve(buf.len());
            }
            if stream.read_buf(&mut buf).await? == 0 {
                return Ok(());
            }
        };
        let Some(body_len) = body_len else {
            return simple(&mut stream, 411, "a Content-Length is required").await;
        };
        if body_len > MAX_BODY {
            return simple(&mut stream, 413, "request body too large").await;
        }
        let total = head_len + body_len;
        if buf.len() < total {
            buf.reserve(total - buf.len());
        }
        while buf.len() < total {
            if stream.read_buf(&mut buf).await? == 0 {
                return Ok(());
            }
        }
        let request = HttpRequest {
            method: &method,
            headers,
            body: &buf[head_len..total],
        };
        let reply = server.handle(&request);
        counters.requests.fetch_add(1, Ordering::Relaxed);
        let after = if keep_alive && server.options.keep_alive {
            After::KeepAlive
        } else {
            After::Close
        };
        let streamed = matches!(reply, Reply::Stream { .. });
        if let Err(e) = write_reply(&mut stream, reply, &after).await {
            if streamed {
                // The client closed an event stream before its end: a cancellation.
                counters.streams_cancelled.fetch_add(1, Ordering::Relaxed);
            }
            return Err(e);
        }
        buf.drain(..total);
        if buf.is_empty() {
            buf = Vec::new();
        }
        if after == After::Close {
            let _ = stream.shutdown().await;
            return Ok(());
        }
    }
}

type Head = (usize, String, Vec<(String, String)>, bool, Option<usize>);

/// Parses a complete request head: its length, method, lower-cased headers, whether the
/// connection stays open, and the body length (`None` when the body is chunked).
fn parse_head(buf: &[u8]) -> Result<Option<Head>, &'static str> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err("malformed request"),
    };
    let method = req.method.unwrap_or("").to_owned();
    let mut keep_alive = req.version == Some(1);
    let mut body_len = Some(0);
    let mut out = Vec::with_capacity(req.headers.len());
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        let value = String::from_utf8_lossy(h.value).into_owned();
        match name.as_str() {
            "content-length" => {
                body_len = Some(value.trim().parse().map_err(|_| "bad Content-Length")?);
            }
            "transfer-encoding" => body_len = None,
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.split(',').any(|t| t.trim() == "close") {
                    keep_alive = false;
                } else if v.split(',').any(|t| t.trim() == "keep-alive") {
                    keep_alive = true;
                }
            }
            _ => {}
        }
        out.push((name, value));
    }
    Ok(Some((n, method, out, keep_alive, body_len)))
}

/// Answers with a plain-text error and closes.
async fn simple(stream: &mut TcpStream, status: u16, text: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        reason(status),
        text.len()
    );
    stream.write_all(head.as_bytes()).await?;
    let _ = stream.shutdown().await;
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Status",
    }
}

fn head(
    status: u16,
    content_type: Option<&str>,
    headers: &[(String, String)],
    after: &After,
) -> String {
    let mut h = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    if let Some(ct) = content_type {
        h.push_str("content-type: ");
        h.push_str(ct);
        h.push_str("\r\n");
    }
    for (k, v) in headers {
        h.push_str(k);
        h.push_str(": ");
        h.push_str(v);
        h.push_str("\r\n");
    }
    if *after == After::Close {
        h.push_str("connection: close\r\n");
    }
    h
}

async fn write_reply(stream: &mut TcpStream, reply: Reply, after: &After) -> std::io::Result<()> {
    match reply {
        Reply::Empty { status, headers } => {
            let mut h = head(status, None, &headers, after);
            h.push_str("content-length: 0\r\n\r\n");
            stream.write_all(h.as_bytes()).await
        }
        Reply::Json {
            status,
            headers,
            body,
        } => write_json(stream, status, &headers, &body, after).await,
        Reply::Later { wait, body } => {
            tokio::time::sleep(wait).await;
            write_json(stream, 200, &[], &body, after).await
        }
        Reply::Stream {
            headers,
            progress,
            wait,
            last,
        } => {
            let mut h = head(200, Some("text/event-stream"), &headers, after);
            h.push_str("cache-control: no-cache\r\nx-accel-buffering: no\r\ntransfer-encoding: chunked\r\n\r\n");
            stream.write_all(h.as_bytes()).await?;
            if let Some((token, steps, delay)) = progress {
                for step in 1..=steps {
                    tokio::time::sleep(delay).await;
                    let note = json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
                        "progressToken": token, "progress": step, "total": steps,
                        "message": format!("step {step} of {steps}")}});
                    write_event(stream, note.to_string().as_bytes()).await?;
                }
            }
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            write_event(stream, &last).await?;
            stream.write_all(b"0\r\n\r\n").await
        }
    }
}

async fn write_json(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
    after: &After,
) -> std::io::Result<()> {
    let mut h = head(status, Some("application/json"), headers, after);
    h.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    if body.len() <= 64 * 1024 {
        let mut all = h.into_bytes();
        all.extend_from_slice(body);
        stream.write_all(&all).await
    } else {
        stream.write_all(h.as_bytes()).await?;
        stream.write_all(body).await
    }
}

/// Writes one SSE `message` event as one chunk.
async fn write_event(stream: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    let event_len = "event: message\ndata: ".len() + data.len() + 2;
    let mut chunk = Vec::with_capacity(event_len + 16);
    chunk.extend_from_slice(format!("{event_len:x}\r\nevent: message\ndata: ").as_bytes());
    chunk.extend_from_slice(data);
    chunk.extend_from_slice(b"\n\n\r\n");
    stream.write_all(&chunk).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_with_their_body_length_and_keep_alive() {
        let (n, m, h, ka, len) =
            parse_head(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
                .unwrap()
                .unwrap();
        assert_eq!((n, m.as_str(), ka, len), (50, "POST", true, Some(5)));
        assert_eq!(h[0], ("host".to_owned(), "x".to_owned()));
        let (_, _, _, ka, _) = parse_head(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!ka);
        let (_, _, _, ka, len) = parse_head(b"GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert!(!ka);
        assert_eq!(len, Some(0));
        assert!(parse_head(b"POST / HTTP/1.1\r\nHost:").unwrap().is_none());
        assert!(parse_head(b"\x01\x02 nonsense\r\n\r\n").is_err());
    }
}
