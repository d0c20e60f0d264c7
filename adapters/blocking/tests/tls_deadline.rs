//! A TLS record trickled one byte at a time cannot hold an exchange past its deadline. An
//! exchange on a pooled socket is driven on the session's own thread (inline), where only the
//! socket's timeouts and the deadline checks between reads bound a wait: the adapter reads TLS
//! one socket read at a time and looks at the deadline between reads even while no plaintext
//! has come out yet (a TLS record is decrypted only once it is whole). The tokio twin is
//! `adapters/tokio/tests/tls_deadline.rs`.

use mcp_sansio_test_support::adapter_tests::auth_deadline::certificate;
use mcp_sansio_test_support::trickle;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_sansio::{Budget, Config};
use mcp_sansio_blocking::{AddressPolicy, Client};
use rustls::pki_types::CertificateDer;
use trickle::{Trickle, Trickler};

const REQUEST_TIME: Duration = Duration::from_secs(1);
const GRACE: Duration = Duration::from_secs(4);

#[test]
fn a_tls_record_trickled_byte_by_byte_on_a_pooled_socket_ends_the_exchange_at_its_deadline() {
    let (cert, key) = certificate();
    let server = Trickler::start(Trickle::PooledTlsBody {
        cert: cert.clone(),
        key,
    });
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let client = Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .add_root_certificates(vec![CertificateDer::from(cert)])
            .build();
        let mut config = Config::new(&url).unwrap();
        config.budgets.request_time = REQUEST_TIME;
        let mut session = client.connect(config).expect("the discovery is answered");
        // The listing goes out on the pooled socket, driven inline.
        let start = Instant::now();
        let r = session.list_tools().map(|_| ());
        let _ = tx.send((r, start.elapsed()));
    });
    // The answer's records hold more than 8,000 bytes at one byte per 100 ms: over 800 s.
    let Ok((r, took)) = rx.recv_timeout(REQUEST_TIME + GRACE * 3) else {
        panic!("the listing was still running long after its request time");
    };
    let e = r.unwrap_err();
    assert_eq!(
        e.budget().map(|b| b.budget),
        Some(Budget::RequestTime),
        "{e}"
    );
    assert!(took < REQUEST_TIME + GRACE, "took {took:?}: {e}");
}
