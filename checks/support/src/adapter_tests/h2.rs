//! The HTTP/2 tests of both adapters, against the in-test HTTP/2 server on 127.0.0.1
//! ([`crate::h2_server`], the core's own frame codec and HPACK): ALPN `h2` over TLS, h2c with prior
//! knowledge, the switch that forces HTTP/1.1, one socket shared by every session of a client, and
//! recorded HTTP/2 sessions (checked with `recording.rs`). An adapter's `tests/h2.rs` brings this
//! module (as `h2`) and its [`h2_server`] and [`recording`] modules into scope, and declares the
//! tests with [`crate::h2_tests!`], giving only how its runtime drives a session and runs sessions
//! side by side.
#![allow(dead_code)]

pub use super::recording;
pub use crate::h2_server;

use std::sync::Arc;

use mcp_sansio_net::{AddressPolicy, BuildClient, ClientBuilder};

/// A server configuration presenting a self-signed certificate for 127.0.0.1 (which the client
/// trusts as a root), offering `alpn`, and that certificate.
pub fn tls_server(
    alpn: &[&[u8]],
) -> (
    rustls::pki_types::CertificateDer<'static>,
    Arc<rustls::ServerConfig>,
) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let der = cert.der().clone();
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key.into())
        .unwrap();
    server.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    (der, Arc::new(server))
}

/// The builder of a client of either adapter that allows loopback addresses.
/// A modern configuration for `url` with a DPoP-bound token (`dpop-token`) and a fresh ES256
/// key, and the key's public point.
pub fn dpop_config(url: &str) -> (mcp_sansio::Config, Vec<u8>) {
    use mcp_sansio::auth::{DpopBinding, DpopKey};
    let key = mcp_sansio_net::auth::KeySigner::generate_es256().unwrap();
    let public = key.public_key();
    let binding = DpopBinding::new("dpop-token", DpopKey(Arc::new(key)), "h2-test-seed");
    (h2_server::config(url).with_dpop(binding), public)
}

/// The RFC 9449 checks of the DPoP proof of a `POST` to `url` (no query) with `dpop-token`,
/// its signature verified with ring on `public`, its `iat` within a minute of now on the wall
/// clock; its `nonce` claim.
pub fn check_dpop(
    r: &h2_server::h2server::SeenRequest,
    public: &[u8],
    url: &str,
) -> Option<String> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    assert_eq!(r.header("authorization"), Some("DPoP dpop-token"));
    let proof = r.header("dpop").expect("a DPoP proof on every request");
    let parts: Vec<&str> = proof.split('.').collect();
    assert_eq!(parts.len(), 3);
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, public)
        .verify(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &b64.decode(parts[2]).unwrap(),
        )
        .expect("the proof verifies");
    let header: serde_json::Value = serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["typ"], "dpop+jwt");
    let c: serde_json::Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(c["htm"], "POST");
    assert_eq!(c["htu"], url);
    let ath = ring::digest::digest(&ring::digest::SHA256, b"dpop-token");
    assert_eq!(c["ath"].as_str(), Some(b64.encode(ath.as_ref()).as_str()));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        c["iat"].as_u64().unwrap().abs_diff(now) <= 60,
        "iat {} now {now}",
        c["iat"]
    );
    c["nonce"].as_str().map(str::to_owned)
}

pub fn loopback<C: BuildClient>() -> ClientBuilder<C> {
    ClientBuilder::<C>::new().policy(AddressPolicy::strict().allow_loopback(true))
}

/// A TLS server offering `h2` and `http/1.1` that behaves as `b`, a client of either adapter
/// trusting it, and the endpoint's URL.
pub fn tls_setup<C: BuildClient>(b: h2_server::Behaviour) -> (h2_server::Server, C, String) {
    let (ca, server_config) = tls_server(&[b"h2", b"http/1.1"]);
    let server = h2_server::Server::start_with(Some(server_config), b);
    let client = loopback::<C>().add_root_certificates([ca]).build();
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    (server, client, url)
}

/// Declares the HTTP/2 tests of an adapter whose `Client` is in scope, with this module's
/// `h2_server` and `recording` modules: `#[$test]` is its test attribute and
/// `#[$threaded]` the one of tests whose sessions run side by side while the test waits on the
/// server; `async` is present when its operations are futures; `[$($wait)*]` is what waits for
/// an operation (`.await`, or nothing); `$spawn($($task)* { .. })` runs a block beside the test
/// and `$($joined)*` waits for it, giving a `Result`; `$sleep` pauses (waited with
/// `$($wait)*`).
#[macro_export]
macro_rules! h2_tests {
    (
        #[$test:meta] #[$threaded:meta] $($async:ident)? [$($wait:tt)*]
        spawn: $spawn:path, [$($task:tt)*], joined: [$($joined:tt)*],
        sleep: $sleep:path
    ) => {
        #[$test]
        $($async)? fn alpn_h2_runs_every_exchange_as_a_stream_of_one_socket() {
            let (server, client, url) =
                h2::tls_setup::<Client>(h2_server::Behaviour::default());
            let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/2");
            let catalog = session.list_tools()$($wait)*.unwrap();
            assert_eq!(catalog.tools.len(), 1);
            let called = session.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert!(!called.is_error);
            assert_eq!(called.content.len(), 1);
            session.close()$($wait)*.unwrap();
            assert_eq!(server.methods(), ["tools/list", "tools/call"]);
            assert_eq!(server.accepted.load(Ordering::SeqCst), 1, "one socket");
            let requests = server.requests.lock().unwrap();
            let first = &requests[0];
            assert_eq!(first.header(":scheme"), Some("https"));
            assert_eq!(first.header(":method"), Some("POST"));
            assert_eq!(first.header(":path"), Some("/mcp"));
            let authority = format!("127.0.0.1:{}", server.port);
            assert_eq!(first.header(":authority"), Some(authority.as_str()));
            assert_eq!(first.header("host"), None, "no Host over HTTP/2");
            assert_ne!(requests[0].stream, requests[1].stream);
        }

        #[$test]
        $($async)? fn dpop_proofs_go_on_every_stream_and_a_nonce_challenge_is_retried_once() {
            let (server, client, url) = h2::tls_setup::<Client>(h2_server::Behaviour {
                dpop_nonce: true,
                ..Default::default()
            });
            let (config, public) = h2::dpop_config(&url);
            let mut session = client.connect(config)$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/2");
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert!(!session.call_tool("echo", b"{}")$($wait)*.unwrap().is_error);
            session.close()$($wait)*.unwrap();
            assert_eq!(server.methods(), ["tools/list", "tools/list", "tools/call"]);
            let requests = server.requests.lock().unwrap();
            let nonces: Vec<Option<String>> = requests
                .iter()
                .map(|r| h2::check_dpop(r, &public, &url))
                .collect();
            let nonce = Some(h2_server::DPOP_NONCE.to_owned());
            assert_eq!(nonces, [None, nonce.clone(), nonce]);
        }

        #[$test]
        $($async)? fn h2c_with_prior_knowledge_only_when_asked_and_http1_only_wins() {
            let server = h2_server::Server::start(None);
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            let client: Client = h2::loopback().h2_prior_knowledge(true).build();
            let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/2");
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            session.close()$($wait)*.unwrap();
            let scheme = server.requests.lock().unwrap()[0]
                .header(":scheme")
                .map(str::to_owned);
            assert_eq!(scheme.as_deref(), Some("http"));

            // Forcing HTTP/1.1 wins over prior knowledge: the HTTP/2 server cannot read the
            // request.
            let forced: Client = h2::loopback()
                .h2_prior_knowledge(true)
                .http1_only(true)
                .build();
            let mut cfg = h2_server::config(&url);
            cfg.budgets.request_time = Duration::from_secs(2);
            cfg.budgets.list_time = Duration::from_secs(2);
            let mut session = forced.connect(cfg)$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/1.1");
            assert!(session.list_tools()$($wait)*.is_err());
            assert_eq!(
                server.methods(),
                ["tools/list"],
                "no HTTP/2 request the second time"
            );
        }

        #[$test]
        $($async)? fn forcing_http1_offers_no_h2_in_the_tls_handshake() {
            // A server that speaks h2 only refuses a handshake that does not offer it.
            let (ca, server_config) = h2::tls_server(&[b"h2"]);
            let server = h2_server::Server::start(Some(server_config));
            let url = format!("https://127.0.0.1:{}/mcp", server.port);
            let client: Client = h2::loopback()
                .add_root_certificates([ca.clone()])
                .http1_only(true)
                .build();
            let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/1.1");
            match session.list_tools()$($wait)*.unwrap_err() {
                mcp_sansio::Error::Transport(t) => {
                    assert_eq!(t.kind, mcp_sansio::TransportErrorKind::Tls, "{t}")
                }
                other => panic!("expected a TLS failure, got {other:?}"),
            }
            assert!(server.methods().is_empty());

            // The same server through a default client: HTTP/2.
            let client: Client = h2::loopback().add_root_certificates([ca]).build();
            let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/2");
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
        }

        #[$test]
        $($async)? fn a_server_that_chooses_http1_keeps_http1_on_the_socket_already_dialled() {
            let (ca, server_config) = h2::tls_server(&[b"http/1.1"]);
            let server = h2_server::Server::start(Some(server_config));
            let url = format!("https://127.0.0.1:{}/mcp", server.port);
            let client: Client = h2::loopback().add_root_certificates([ca]).build();
            let session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/1.1");
            // The modern hint connects without a request: the socket dialled to learn the
            // protocol waits in the pool for the first exchange.
            assert_eq!(client.idle_sockets(), 1);
            assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
            assert_eq!(client.h2_connections(), 0);
            drop(session);
        }

        /// MCP 2026-07-28, Streamable HTTP (changelog item 9, SEP-2575): "A broken response
        /// stream loses the in-flight request; clients MUST re-issue it as a new request with
        /// a new request ID." The server begins the call's answer and then resets its stream
        /// (RST_STREAM) or closes the connection, over TLS (ALPN h2) and h2c: the call is
        /// re-issued with a new id (on the same socket after a reset, on a fresh one after the
        /// connection's loss) and answered.
        #[$test]
        $($async)? fn a_call_whose_stream_breaks_mid_answer_is_reissued_with_a_new_id() {
            for (reset, tls) in [(true, true), (true, false), (false, true), (false, false)] {
                let b = h2_server::Behaviour {
                    reset_first_call: reset,
                    drop_first_call: !reset,
                    ..h2_server::Behaviour::default()
                };
                let (server, client, url) = if tls {
                    h2::tls_setup::<Client>(b)
                } else {
                    let server = h2_server::Server::start_with(None, b);
                    let url = format!("http://127.0.0.1:{}/mcp", server.port);
                    let client: Client = h2::loopback().h2_prior_knowledge(true).build();
                    (server, client, url)
                };
                let tag = format!("reset {reset}, TLS {tls}");
                let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
                assert_eq!(session.http_version(), "HTTP/2", "{tag}");
                let called = session.call_tool("echo", b"{}")$($wait)*.unwrap();
                assert!(!called.is_error, "{tag}");
                assert_eq!(called.content.len(), 1, "{tag}");
                assert_eq!(server.methods(), ["tools/call", "tools/call"], "{tag}");
                let requests = server.requests.lock().unwrap();
                assert_ne!(requests[0].rpc_id(), requests[1].rpc_id(), "{tag}: a new id");
                let sockets = if reset { 1 } else { 2 };
                assert_eq!(server.accepted.load(Ordering::SeqCst), sockets, "{tag}");
            }
        }

        #[$test]
        $($async)? fn a_connection_the_server_closed_while_idle_is_dialled_again() {
            let server = h2_server::Server::start_with(
                None,
                h2_server::Behaviour {
                    close_after_answer: true,
                    ..h2_server::Behaviour::default()
                },
            );
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            let client: Client = h2::loopback().h2_prior_knowledge(true).build();
            let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            // The server closes the socket once it answered; the session learns it while idle.
            $sleep(Duration::from_millis(200))$($wait)*;
            let called = session.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert_eq!(called.content.len(), 1);
            assert_eq!(session.http_version(), "HTTP/2");
            assert_eq!(server.methods(), ["tools/list", "tools/call"]);
            assert_eq!(
                server.accepted.load(Ordering::SeqCst),
                2,
                "a fresh socket for the call"
            );
        }

        #[$threaded]
        $($async)? fn the_sessions_of_a_client_share_one_socket_and_one_tls_handshake() {
            const N: usize = 6;
            let (server, client, url) =
                h2::tls_setup::<Client>(h2_server::Behaviour::default());
            let tasks: Vec<_> = (0..N)
                .map(|i| {
                    let (client, url) = (client.clone(), url.clone());
                    $spawn($($task)* {
                        let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
                        assert_eq!(session.http_version(), "HTTP/2");
                        assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
                        let args = format!(r#"{{"i":{i}}}"#);
                        let called = session.call_tool("echo", args.as_bytes())$($wait)*.unwrap();
                        assert_eq!(called.content.len(), 1);
                        session
                    })
                })
                .collect();
            let mut sessions = Vec::new();
            for t in tasks {
                sessions.push(t$($joined)*.unwrap());
            }
            assert_eq!(client.h2_connections(), 1);
            assert_eq!(
                server.accepted.load(Ordering::SeqCst),
                1,
                "one TCP connection, so one TLS handshake, for {N} sessions"
            );
            assert_eq!(server.methods().len(), 2 * N);
            let streams: std::collections::BTreeSet<u32> = server
                .requests
                .lock()
                .unwrap()
                .iter()
                .map(|r| r.stream)
                .collect();
            assert_eq!(streams.len(), 2 * N, "one stream per request");
            let first = server.requests.lock().unwrap()[0].clone();
            assert_eq!(first.header(":scheme"), Some("https"));
            assert_eq!(first.header("host"), None, "no Host over HTTP/2");
            for s in sessions {
                s.close()$($wait)*.unwrap();
            }
            assert_eq!(
                client.h2_connections(),
                1,
                "the last session leaves the socket idle for the next"
            );
        }

        #[$test]
        $($async)? fn a_goaway_moves_every_session_to_one_fresh_socket() {
            let (server, client, url) = h2::tls_setup::<Client>(h2_server::Behaviour {
                goaway_first: true,
                ..h2_server::Behaviour::default()
            });
            let mut sessions = Vec::new();
            for _ in 0..3 {
                sessions.push(client.connect(h2_server::config(&url))$($wait)*.unwrap());
            }
            // The first answer comes with GOAWAY: the socket takes no further request.
            assert_eq!(sessions[0].list_tools()$($wait)*.unwrap().tools.len(), 1);
            let tasks: Vec<_> = sessions
                .into_iter()
                .enumerate()
                .map(|(i, mut s)| {
                    $spawn($($task)* {
                        if i == 1 {
                            assert_eq!(s.list_tools()$($wait)*.unwrap().tools.len(), 1);
                        } else {
                            assert_eq!(s.call_tool("echo", b"{}")$($wait)*.unwrap().content.len(), 1);
                        }
                        s
                    })
                })
                .collect();
            let mut sessions = Vec::new();
            for t in tasks {
                sessions.push(t$($joined)*.unwrap());
            }
            assert_eq!(
                server.accepted.load(Ordering::SeqCst),
                2,
                "one fresh socket for every session"
            );
            let on_second = server
                .frames_on(2, |f| matches!(f, Frame::Headers { .. }))
                .len();
            assert_eq!(on_second, 3);
            assert_eq!(client.h2_connections(), 1);
            drop(sessions);
        }

        #[$threaded]
        $($async)? fn the_socket_stays_idle_for_the_next_session_and_the_client_closes_it_with_goaway() {
            let (server, client, url) =
                h2::tls_setup::<Client>(h2_server::Behaviour::default());
            let mut a = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            let b = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(a.list_tools()$($wait)*.unwrap().tools.len(), 1);
            a.close()$($wait)*.unwrap();
            b.close()$($wait)*.unwrap();
            $sleep(Duration::from_millis(100))$($wait)*;
            assert!(
                server.frames_on(1, h2_server::is_goaway).is_empty(),
                "the last session's close keeps the socket, idle"
            );
            assert_eq!(client.h2_connections(), 1);
            // The next session joins the idle socket: no second connection, no second
            // handshake.
            let mut c = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(c.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(c.http_version(), "HTTP/2");
            assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
            drop(c);
            $sleep(Duration::from_millis(100))$($wait)*;
            assert!(
                server.frames_on(1, h2_server::is_goaway).is_empty(),
                "a dropped session's leaving keeps the socket, idle"
            );
            assert_eq!(client.h2_connections(), 1);
            drop(client);
            assert!(
                server.wait_for(|s| s.frames_on(1, h2_server::is_goaway).len() == 1),
                "dropping the client writes GOAWAY"
            );
            let goaway = server.frames_on(1, h2_server::is_goaway).remove(0);
            assert!(
                matches!(goaway, Frame::GoAway { reason, .. } if reason == Reason::NO_ERROR),
                "{goaway:?}"
            );
        }

        #[$test]
        $($async)? fn each_session_keeps_its_own_byte_budget_on_the_shared_socket() {
            let (server, client, url) =
                h2::tls_setup::<Client>(h2_server::Behaviour::default());
            let mut roomy = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            let mut tight_config = h2_server::config(&url);
            tight_config.budgets.response_bytes = 64;
            let mut tight = client.connect(tight_config)$($wait)*.unwrap();
            let e = tight.list_tools()$($wait)*.unwrap_err();
            let exceeded = e.budget().expect("a budget error");
            assert_eq!(exceeded.budget, mcp_sansio::Budget::ResponseBytes);
            assert_eq!(exceeded.limit, 64);
            assert_eq!(roomy.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(roomy.call_tool("echo", b"{}")$($wait)*.unwrap().content.len(), 1);
            assert!(roomy.bytes_read() > 64);
            assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
        }

        /// A recorded HTTP/2 session with a bearer token: list, call `echo`, close.
        $($async)? fn recorded_session(client: &Client, url: &str) {
            let mut cfg = h2_server::config(url).with_bearer_token("tok-s3cr3t");
            cfg.budgets.request_time = Duration::from_secs(10);
            let mut session = client.connect(cfg)$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/2");
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(session.call_tool("echo", b"{}")$($wait)*.unwrap().content.len(), 1);
            session.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn a_recording_client_records_an_alpn_h2_session_that_replays() {
            let (ca, server_config) = h2::tls_server(&[b"h2", b"http/1.1"]);
            let server = h2_server::Server::start(Some(server_config));
            let sink = Arc::new(recording::Memory::default());
            let client: Client = recording::recording_h2_client(sink.clone(), vec![ca], false);
            let url = format!("https://127.0.0.1:{}/mcp", server.port);
            recorded_session(&client, &url)$($wait)*;
            assert_eq!(server.methods(), ["tools/list", "tools/call"]);
            assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
            let t = recording::check_h2(&sink, "https");
            assert!(t.to_text().contains(":authority: 127.0.0.1:"));
            // The session's socket was its own: none is left shared for the origin.
            assert_eq!(client.h2_connections(), 0);
        }

        #[$test]
        $($async)? fn a_recording_client_records_an_h2c_session_that_replays() {
            let server = h2_server::Server::start(None);
            let sink = Arc::new(recording::Memory::default());
            let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            recorded_session(&client, &url)$($wait)*;
            assert_eq!(
                server.requests.lock().unwrap()[0].header(":scheme"),
                Some("http")
            );
            recording::check_h2(&sink, "http");
        }

        #[$test]
        $($async)? fn each_session_of_a_recording_client_has_its_own_h2_socket_and_transcript() {
            let server = h2_server::Server::start(None);
            let sink = Arc::new(recording::Memory::default());
            let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            let mut a = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            let mut b = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(a.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(b.list_tools()$($wait)*.unwrap().tools.len(), 1);
            a.close()$($wait)*.unwrap();
            b.close()$($wait)*.unwrap();
            assert_eq!(
                server.accepted.load(Ordering::SeqCst),
                2,
                "a socket per session"
            );
            let texts = sink.texts();
            assert_eq!(texts.len(), 2);
            for text in texts {
                let t = mcp_sansio_transcript::Transcript::parse(&text).unwrap();
                assert!(t.config.http2.is_some());
                let outcome = t.outcome();
                assert_eq!(
                    outcome[1]["tools_listed"]["tools"],
                    serde_json::json!(["echo"])
                );
                for split in [
                    mcp_sansio_transcript::Split::Recorded,
                    mcp_sansio_transcript::Split::BYTE_BY_BYTE,
                ] {
                    mcp_sansio_transcript::replay(&t, split)
                        .unwrap()
                        .check(&t)
                        .unwrap();
                }
            }
        }

        #[$test]
        $($async)? fn a_recorded_session_moved_to_a_fresh_socket_by_goaway_replays() {
            let server = h2_server::Server::start_with(
                None,
                h2_server::Behaviour {
                    goaway_first: true,
                    ..h2_server::Behaviour::default()
                },
            );
            let sink = Arc::new(recording::Memory::default());
            let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            let mut session = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            session.close()$($wait)*.unwrap();
            assert_eq!(
                server.accepted.load(Ordering::SeqCst),
                2,
                "a fresh socket after GOAWAY"
            );
            recording::check_h2_fresh_socket(&sink);
        }

        #[$test]
        $($async)? fn a_server_that_stops_reading_fails_the_socket_at_the_write_stall() {
            // The server opens the socket with windows as wide as HTTP/2 allows, then never
            // reads: a call whose body is far larger than the socket buffers stalls the write.
            // With a write stall of 500 ms the socket fails within seconds, not at the call's
            // budget (30 s). The connection's loss breaks the call's stream, which would be
            // re-issued (2026-07-28) on a fresh socket; with `responses_per_request` at 1 no
            // re-issue is allowed, so the call fails with that budget as the socket fails.
            let server = h2::StallingServer::start();
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            let client: Client = h2::loopback()
                .h2_prior_knowledge(true)
                .write_stall(Duration::from_millis(500))
                .build();
            let mut cfg = h2_server::config(&url);
            cfg.budgets.call_time = Duration::from_secs(30);
            cfg.budgets.responses_per_request = 1;
            let mut session = client.connect(cfg)$($wait)*.unwrap();
            let args = format!(r#"{{"pad":"{}"}}"#, "x".repeat(h2::STALLING_BODY));
            let started = std::time::Instant::now();
            let e = session.call_tool("echo", args.as_bytes())$($wait)*.unwrap_err();
            let took = started.elapsed();
            assert_eq!(
                e.budget().map(|b| (b.budget, b.limit)),
                Some((mcp_sansio::Budget::ResponsesPerRequest, 1)),
                "the re-issue's budget, not the call's: {e:?}"
            );
            assert_eq!(e.kind(), mcp_sansio::ErrorKind::ConnectionFailed, "{e:?}");
            assert!(
                took < Duration::from_secs(10),
                "failed after {took:?}, the write stall is 500 ms"
            );
            assert!(server.read_nothing_more(), "the server stopped reading");
        }
    };
}

/// Bytes of padding in the call of
/// `a_server_that_stops_reading_fails_the_socket_at_the_write_stall`: far more than a loopback
/// socket's send and receive buffers hold together.
pub const STALLING_BODY: usize = 48 << 20;

/// An HTTP/2 server on 127.0.0.1 that accepts one connection, sends its SETTINGS (a stream window
/// of 2^31 - 1), a connection WINDOW_UPDATE to 2^31 - 1 and a SETTINGS acknowledgement, after
/// reading only the client's first bytes, and then never reads again. Stopped and joined on drop.
pub struct StallingServer {
    /// Its port.
    pub port: u16,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<bool>>,
}

impl StallingServer {
    /// Starts it.
    pub fn start() -> StallingServer {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            let mut socket = loop {
                match listener.accept() {
                    Ok((s, _)) => break s,
                    Err(_)
                        if std::time::Instant::now() < deadline && stopped.try_recv().is_err() =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    Err(_) => return false,
                }
            };
            socket.set_nonblocking(false).unwrap();
            socket
                .set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .unwrap();
            // The client's preface (24 octets) and the header of its SETTINGS, at least.
            let mut first = vec![0u8; 33];
            if socket.read_exact(&mut first).is_err() {
                return false;
            }
            let mut out = Vec::new();
            // SETTINGS: INITIAL_WINDOW_SIZE (4) = 2^31 - 1.
            out.extend_from_slice(&[0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xff]);
            // WINDOW_UPDATE on stream 0: 65 535 + 0x7fff0000 = 2^31 - 1.
            out.extend_from_slice(&[0, 0, 4, 8, 0, 0, 0, 0, 0, 0x7f, 0xff, 0, 0]);
            // SETTINGS acknowledgement.
            out.extend_from_slice(&[0, 0, 0, 4, 1, 0, 0, 0, 0]);
            if socket.write_all(&out).is_err() {
                return false;
            }
            // Never read again; hold the socket until the test ends.
            let _ = stopped.recv_timeout(std::time::Duration::from_secs(120));
            true
        });
        StallingServer {
            port,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Whether the server got its connection and, reading nothing past the client's first
    /// octets, held it until now. Stops the server.
    pub fn read_nothing_more(mut self) -> bool {
        self.stop.take();
        self.thread
            .take()
            .is_some_and(|t| t.join().unwrap_or(false))
    }
}

impl Drop for StallingServer {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
