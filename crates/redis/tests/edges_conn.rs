//! The bounded link at the edges of its limits (`scripts/mutants.sh redis-conn`): the reply
//! reader takes replies of exactly its byte bound and refuses one byte more (RESP 2, redis.io's
//! "RESP protocol spec": `:<n>\r\n`, `$<len>\r\n<data>\r\n`); a store URL's parts read back,
//! and its password is never shown.

use mcp_sansio_redis::conn::{parse_replies, LinkError, Target};
use redis::Value;

/// A reply of exactly `max` bytes is read; under a bound one byte smaller it is too large,
/// whatever the split of the bytes between the replies.
#[test]
fn replies_of_exactly_the_bound_are_read_one_byte_more_is_too_large() {
    // `:5\r\n` is 4 bytes, `$3\r\nabc\r\n` 9: 13 in all.
    let two = b":5\r\n$3\r\nabc\r\n";
    assert_eq!(
        parse_replies(two, 2, two.len()).unwrap(),
        [Value::Int(5), Value::BulkString(b"abc".to_vec())]
    );
    assert!(matches!(
        parse_replies(two, 2, two.len() - 1),
        Err(LinkError::TooLarge(12))
    ));
    // A bulk string of 1000 bytes: its 1009-byte reply is read under a bound of 1009, not 1008.
    let mut bulk = b"$1000\r\n".to_vec();
    bulk.extend_from_slice(&[b'v'; 1000]);
    bulk.extend_from_slice(b"\r\n");
    assert_eq!(bulk.len(), 1009);
    assert_eq!(
        parse_replies(&bulk, 1, 1009).unwrap(),
        [Value::BulkString(vec![b'v'; 1000])]
    );
    assert!(matches!(
        parse_replies(&bulk, 1, 1008),
        Err(LinkError::TooLarge(1008))
    ));
}

/// One reply asked for and two sent: the reader takes the first only; none asked, none read.
#[test]
fn the_reader_reads_as_many_replies_as_asked() {
    assert_eq!(
        parse_replies(b":1\r\n:2\r\n", 1, 64).unwrap(),
        [Value::Int(1)]
    );
    assert_eq!(parse_replies(b":1\r\n", 0, 64).unwrap(), []);
}

/// The parts of a store URL: `rediss://` and `valkeys://` are TLS, `redis://` and `valkey://`
/// are not; the authority is `host:port` (6379 when the URL has none).
#[test]
fn a_store_url_reads_back_its_authority_and_whether_it_is_tls() {
    let plain = Target::parse("redis://127.0.0.1:7001/").unwrap();
    assert!(!plain.tls());
    assert_eq!(plain.authority(), "127.0.0.1:7001");
    let tls = Target::parse("rediss://cache.example:7002/3").unwrap();
    assert!(tls.tls());
    assert_eq!(tls.authority(), "cache.example:7002");
    assert!(Target::parse("valkeys://cache.example/").unwrap().tls());
    let valkey = Target::parse("valkey://cache.example/").unwrap();
    assert!(!valkey.tls());
    assert_eq!(valkey.authority(), "cache.example:6379");
    assert!(Target::parse("http://cache.example/").is_err());
}

/// A target's `Debug` shows where the store is and hides the password (not its length, not a
/// byte of it).
#[test]
fn a_targets_debug_shows_the_host_and_hides_the_password() {
    let t = Target::parse("redis://fleet:s3cr3t-pa55@cache.example:7003/2").unwrap();
    let shown = format!("{t:?}");
    assert!(shown.contains("cache.example"), "{shown}");
    assert!(shown.contains("7003"), "{shown}");
    assert!(shown.contains("fleet"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
    assert!(!shown.contains("s3cr3t"), "{shown}");
}

/// A reused link that fails after part of a reply arrived is a failure of the operation: the
/// store may have run the commands, so they are not sent again on a new link (only a link that
/// fails before any byte of a reply is dialled again). The fake Redis answers the first `PING`,
/// then half of the second's reply, and closes.
#[test]
fn a_reused_link_that_fails_mid_reply_is_not_dialled_again() {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for (i, conn) in listener.incoming().enumerate() {
            let Ok(mut conn) = conn else { return };
            count.fetch_add(1, Ordering::SeqCst);
            if i > 0 {
                // A second link: answer it whole, so a redial would succeed.
                let mut buf = [0u8; 256];
                let _ = conn.read(&mut buf);
                let _ = conn.write_all(b"+PONG\r\n");
                continue;
            }
            let mut buf = [0u8; 256];
            let _ = conn.read(&mut buf);
            conn.write_all(b"+PONG\r\n").unwrap();
            let _ = conn.read(&mut buf);
            conn.write_all(b"+PO").unwrap();
            drop(conn);
        }
    });
    let mut options = mcp_sansio_redis::Options::default();
    options.backoff_min = Duration::from_secs(3600);
    options.backoff_max = Duration::from_secs(3600);
    let store =
        mcp_sansio_redis::RedisStore::with_options(&format!("redis://127.0.0.1:{port}/"), options)
            .unwrap();
    store.ping().expect("the first PING");
    assert!(store.ping().is_err(), "half a reply, then closed");
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "no second link");
}

/// A link's bounds are the ones it was given; it is in a backoff only after a failure, and
/// then every call fails at once with `Backoff` (no dial).
#[test]
fn a_backend_keeps_its_limits_and_backs_off_only_after_a_failure() {
    use mcp_sansio_redis::conn::{Backend, Limits};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            count.fetch_add(1, Ordering::SeqCst);
            drop(conn);
        }
    });
    let limits = Limits {
        op_timeout: Duration::from_millis(2500),
        backoff_min: Duration::from_secs(3600),
        backoff_max: Duration::from_secs(7200),
        max_idle: 3,
    };
    let target = Target::parse(&format!("redis://127.0.0.1:{port}/")).unwrap();
    let backend = Backend::new(target, limits, None);
    let kept = backend.limits();
    assert_eq!(kept.op_timeout, Duration::from_millis(2500));
    assert_eq!(kept.backoff_min, Duration::from_secs(3600));
    assert_eq!(kept.backoff_max, Duration::from_secs(7200));
    assert_eq!(kept.max_idle, 3);
    assert!(!backend.backing_off(), "no failure yet");
    assert!(backend.call(&[redis::cmd("PING")], 64).is_err());
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    assert!(backend.backing_off(), "after a failure");
    assert!(matches!(
        backend.call(&[redis::cmd("PING")], 64),
        Err(LinkError::Backoff(_))
    ));
    assert!(backend.backing_off());
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "no dial in the backoff");
}

/// The pause doubles with each failure in a row: 1 s after the first, 2 s after the second
/// (the next call, at once, is told nearly 2 s are left; halved, it would be 0.5 s).
#[test]
fn the_pause_doubles_with_each_failure_in_a_row() {
    use mcp_sansio_redis::conn::{Backend, Limits};
    use std::net::TcpListener;
    use std::time::Duration;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            drop(conn);
        }
    });
    let limits = Limits {
        op_timeout: Duration::from_secs(5),
        backoff_min: Duration::from_secs(1),
        backoff_max: Duration::from_secs(60),
        max_idle: 1,
    };
    let target = Target::parse(&format!("redis://127.0.0.1:{port}/")).unwrap();
    let backend = Backend::new(target, limits, None);
    let ping = || backend.call(&[redis::cmd("PING")], 64);
    assert!(matches!(ping(), Err(LinkError::Io(_))));
    match ping() {
        Err(LinkError::Backoff(left)) => assert!(left <= Duration::from_secs(1), "{left:?}"),
        other => panic!("not in the first pause: {other:?}"),
    }
    std::thread::sleep(Duration::from_millis(1100));
    // The second pause starts within the next call; what is left of it when asked is 2 s less
    // the time since that call began (bounded here by the clock, so a stalled machine cannot
    // make a doubled pause look like a single one).
    let before = std::time::Instant::now();
    assert!(matches!(ping(), Err(LinkError::Io(_))), "dialled again");
    let answer = ping();
    let elapsed = before.elapsed();
    match answer {
        Err(LinkError::Backoff(left)) => assert!(
            left + elapsed >= Duration::from_secs(2) && left <= Duration::from_secs(2),
            "{left:?} left, {elapsed:?} since the failing call began"
        ),
        other => panic!("not in the second pause: {other:?}"),
    }
}

/// At most `max_idle` links are kept for reuse: with 1, two calls at once dial two links, and
/// the next two calls at once reuse one and dial one (3 dials). The fake Redis answers a
/// `PING` only once two are waiting, so the two calls of a round always overlap.
#[test]
fn at_most_max_idle_links_are_kept() {
    use mcp_sansio_redis::conn::{Backend, Limits};
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dials = Arc::new(AtomicUsize::new(0));
    let count = dials.clone();
    let pair = Arc::new(Barrier::new(2));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let pair = pair.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                let mut got = Vec::new();
                loop {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                    if got.ends_with(b"PING\r\n") {
                        got.clear();
                        pair.wait();
                        if conn.write_all(b"+PONG\r\n").is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    let limits = Limits {
        op_timeout: Duration::from_secs(10),
        backoff_min: Duration::from_millis(1),
        backoff_max: Duration::from_millis(1),
        max_idle: 1,
    };
    let target = Target::parse(&format!("redis://127.0.0.1:{port}/")).unwrap();
    let backend = Backend::new(target, limits, None);
    let round = || {
        std::thread::scope(|s| {
            let calls: Vec<_> = (0..2)
                .map(|_| s.spawn(|| backend.call(&[redis::cmd("PING")], 64)))
                .collect();
            for c in calls {
                assert_eq!(
                    c.join().unwrap().unwrap(),
                    [redis::Value::SimpleString("PONG".into())]
                );
            }
        });
    };
    round();
    assert_eq!(dials.load(Ordering::SeqCst), 2);
    round();
    assert_eq!(
        dials.load(Ordering::SeqCst),
        3,
        "one link kept, one dialled"
    );
}

/// A connection refused (nothing listens on the port) is a socket failure, not a deadline: the
/// store answered at once.
#[test]
fn a_refused_connection_is_a_socket_failure_not_a_deadline() {
    use mcp_sansio_redis::conn::{Backend, Limits};
    use std::net::TcpListener;

    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let target = Target::parse(&format!("redis://127.0.0.1:{port}/")).unwrap();
    let backend = Backend::new(target, Limits::default(), None);
    match backend.call(&[redis::cmd("PING")], 64) {
        Err(LinkError::Io(e)) => {
            assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}")
        }
        other => panic!("not a refused connection: {other:?}"),
    }
}

/// A link's `Debug` shows its target and bounds, and hides the target's password.
#[test]
fn a_backends_debug_shows_its_target_and_limits_and_no_password() {
    use mcp_sansio_redis::conn::{Backend, Limits};
    let target = Target::parse("redis://fleet:pa55-s3cret@127.0.0.1:7004/").unwrap();
    let shown = format!("{:?}", Backend::new(target, Limits::default(), None));
    assert!(shown.contains("127.0.0.1"), "{shown}");
    assert!(shown.contains("op_timeout: 250ms"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
    assert!(!shown.contains("s3cret"), "{shown}");
}

/// A TLS 1.3 record that carries no reply: application data with no content, only its content
/// type and `pad` bytes of zero padding (RFC 8446, 5.4), sealed with AES-128-GCM under `key`
/// and `iv` as the record numbered `seq` (5.3: the nonce is `iv` XOR the number).
fn padding_record(key: &ring::aead::LessSafeKey, iv: &[u8], seq: u64, pad: usize) -> Vec<u8> {
    use ring::aead::{Aad, Nonce};
    let mut inner = vec![0u8; 1 + pad];
    inner[0] = 0x17;
    let len = u16::try_from(inner.len() + 16).unwrap().to_be_bytes();
    let header = [0x17, 0x03, 0x03, len[0], len[1]];
    let mut nonce: [u8; 12] = iv.try_into().unwrap();
    for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
        *n ^= s;
    }
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(header),
        &mut inner,
    )
    .unwrap();
    let mut record = header.to_vec();
    record.extend_from_slice(&inner);
    record
}

/// A reused TLS link whose store sends records that carry no reply (here 128 KB of padding)
/// fails the operation on its byte bound, and is not dialled again: no byte of a reply came,
/// but the bound, like the deadline, is the operation's, so a second link would only spend it
/// again. The fake Redis (TLS 1.3, AES-128-GCM) answers the first `PING` of its first link,
/// then answers the second with padding records sealed under the link's own keys; any later
/// link is answered `+PONG`, so a redial would succeed.
#[test]
fn a_reused_tls_link_flooded_with_records_without_a_reply_is_not_dialled_again() {
    use mcp_sansio_redis::conn::{Backend, Limits};
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ck.cert.der().clone()).unwrap();
    let mut trust = (*mcp_sansio_net::client_config_with_roots(roots)).clone();
    trust.alpn_protocols.clear();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        ck.key_pair.serialize_der(),
    ));
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites = vec![rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256];
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![ck.cert.der().clone()], key)
        .unwrap();
    server.enable_secret_extraction = true;
    let server = Arc::new(server);

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for (i, conn) in listener.incoming().enumerate() {
            let Ok(mut tcp) = conn else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let server = server.clone();
            std::thread::spawn(move || {
                tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut tls = rustls::ServerConnection::new(server).unwrap();
                while tls.is_handshaking() {
                    if tls.complete_io(&mut tcp).is_err() {
                        return;
                    }
                }
                // The command, whatever it is.
                let mut buf = [0u8; 4096];
                loop {
                    match tls.reader().read(&mut buf) {
                        Ok(n) if n > 0 => break,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            if tls.read_tls(&mut tcp).unwrap_or(0) == 0
                                || tls.process_new_packets().is_err()
                            {
                                return;
                            }
                        }
                        _ => return,
                    }
                }
                tls.writer().write_all(b"+PONG\r\n").unwrap();
                while tls.wants_write() {
                    if tls.write_tls(&mut tcp).is_err() {
                        return;
                    }
                }
                if i > 0 {
                    std::thread::sleep(Duration::from_secs(10));
                    return;
                }
                let secrets = tls.dangerous_extract_secrets().unwrap();
                let (seq, rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv }) = secrets.tx
                else {
                    panic!("not AES-128-GCM")
                };
                let key = ring::aead::LessSafeKey::new(
                    ring::aead::UnboundKey::new(&ring::aead::AES_128_GCM, key.as_ref()).unwrap(),
                );
                // The second command's record (not read: the keys are spent on the padding).
                if tcp.read(&mut buf).unwrap_or(0) == 0 {
                    return;
                }
                for n in 0..8 {
                    let record = padding_record(&key, iv.as_ref(), seq + n, 16_000);
                    if tcp.write_all(&record).is_err() {
                        return;
                    }
                }
                let _ = tcp.read(&mut buf);
            });
        }
    });
    let limits = Limits {
        // Far beyond the time the flood takes: the byte bound is reached first.
        op_timeout: Duration::from_secs(5),
        backoff_min: Duration::from_secs(3600),
        backoff_max: Duration::from_secs(3600),
        max_idle: 1,
    };
    let target = Target::parse(&format!("rediss://127.0.0.1:{port}/")).unwrap();
    let backend = Backend::new(target, limits, Some(Arc::new(trust)));
    let ping = || backend.call(&[redis::cmd("PING")], 64);
    assert!(ping().is_ok(), "the first PING");
    match ping() {
        // Twice 64 bytes and 64 KiB read off the socket, and not a byte of a reply.
        Err(LinkError::TooLarge(64)) => {}
        other => panic!("not the byte bound: {other:?}"),
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "no second link");
}

/// A connect that does not complete within the operation's deadline is a deadline, not a
/// socket failure. The fake store listens with a backlog of 0 and never accepts: once one
/// connection fills its queue, Linux drops the SYN of every other, so their connect waits.
#[cfg(target_os = "linux")]
#[test]
fn a_connect_that_times_out_is_a_deadline_not_a_socket_failure() {
    use mcp_sansio_redis::conn::{Backend, Limits};
    use std::net::{SocketAddr, TcpStream};
    use std::time::{Duration, Instant};

    let listener =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    listener.bind(&any.into()).unwrap();
    listener.listen(0).unwrap();
    let addr = listener.local_addr().unwrap().as_socket().unwrap();
    let _queued = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    let limits = Limits {
        op_timeout: Duration::from_millis(300),
        backoff_min: Duration::from_secs(3600),
        backoff_max: Duration::from_secs(3600),
        max_idle: 1,
    };
    let target = Target::parse(&format!("redis://{addr}/")).unwrap();
    let backend = Backend::new(target, limits, None);
    let start = Instant::now();
    let result = backend.call(&[redis::cmd("PING")], 64);
    let took = start.elapsed();
    match result {
        Err(LinkError::Deadline(t)) => assert_eq!(t, Duration::from_millis(300)),
        other => panic!("not a deadline after {took:?}: {other:?}"),
    }
    assert!(took >= Duration::from_millis(250), "{took:?}");
}
