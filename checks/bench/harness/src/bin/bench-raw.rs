//! The floor, not a client: `bench-raw URL WORK N PAR REPS ERA` does a work item's requests on
//! one keep-alive socket with hand-written modern requests and reads each response by its
//! Content-Length, finding the next cursor with a byte search. No JSON parsing, no validation, no
//! budgets, sequential only; JSON responses only. Same output line as the contenders.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Sends one request and returns the response body.
fn exchange(sock: &mut TcpStream, buf: &mut Vec<u8>, method: &str, params: &str) -> Vec<u8> {
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"{method}\",\"params\":{{{params}\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}}}}"
    );
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: {method}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(req.as_bytes()).expect("write");
    let mut chunk = vec![0u8; 64 * 1024];
    let (head, len) = loop {
        if let Some(end) = find(buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .expect("content-length")
                .trim()
                .parse()
                .expect("length");
            break (end + 4, len);
        }
        let n = sock.read(&mut chunk).expect("read");
        assert!(n > 0, "eof");
        buf.extend_from_slice(&chunk[..n]);
    };
    while buf.len() < head + len {
        let n = sock.read(&mut chunk).expect("read");
        assert!(n > 0, "eof");
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head..head + len].to_vec();
    buf.drain(..head + len);
    body
}

fn work_item(addr: &str, work: &str) -> usize {
    let mut sock = TcpStream::connect(addr).expect("connect");
    sock.set_nodelay(true).expect("nodelay");
    let mut buf = Vec::new();
    if work == "list" {
        let mut params = String::new();
        let mut pages = 0;
        loop {
            let body = exchange(&mut sock, &mut buf, "tools/list", &params);
            pages += 1;
            let Some(at) = find(&body, b"\"nextCursor\":\"") else {
                break pages;
            };
            let rest = &body[at + 14..];
            let end = rest.iter().position(|b| *b == b'"').expect("cursor end");
            params = format!("\"cursor\":\"{}\",", String::from_utf8_lossy(&rest[..end]));
        }
    } else {
        let params = format!("\"name\":\"{work}\",\"arguments\":{{\"text\":\"hello\"}},");
        exchange(&mut sock, &mut buf, "tools/call", &params).len()
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let url = &a[1];
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("authority")
        .to_owned();
    let work = a[2].clone();
    let n: usize = a[3].parse().expect("N");
    let reps: usize = a[5].parse().expect("REPS");
    let mut check = work_item(&addr, &work);
    let mut ms = Vec::new();
    for _ in 0..reps {
        let start = Instant::now();
        for _ in 0..n {
            check = work_item(&addr, &work);
        }
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    println!("{{\"ms\":{ms:?},\"check\":{check}}}");
}
