//! A TLS record trickled one byte at a time cannot hold an exchange past its deadline: the
//! listing on the pooled socket ends at its request time (reads are futures under the
//! deadline). The blocking adapter's twin is `adapters/blocking/tests/tls_deadline.rs`.

use mcp_sansio_test_support::adapter_tests::auth_deadline::certificate;
use mcp_sansio_test_support::trickle;

use std::time::{Duration, Instant};

use mcp_sansio::{Budget, Config};
use mcp_sansio_tokio::{AddressPolicy, Client};
use rustls::pki_types::CertificateDer;
use trickle::{Trickle, Trickler};

const REQUEST_TIME: Duration = Duration::from_secs(1);
const GRACE: Duration = Duration::from_secs(4);

#[tokio::test]
async fn a_tls_record_trickled_byte_by_byte_on_a_pooled_socket_ends_the_exchange_at_its_deadline() {
    let (cert, key) = certificate();
    let server = Trickler::start(Trickle::PooledTlsBody {
        cert: cert.clone(),
        key,
    });
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .add_root_certificates(vec![CertificateDer::from(cert)])
        .build();
    let mut config = Config::new(&url).unwrap();
    config.budgets.request_time = REQUEST_TIME;
    let mut session = client
        .connect(config)
        .await
        .expect("the discovery is answered");
    let start = Instant::now();
    let r = tokio::time::timeout(REQUEST_TIME + GRACE * 3, session.list_tools())
        .await
        .expect("the listing ends long before the records do");
    let took = start.elapsed();
    let e = r.unwrap_err();
    assert_eq!(
        e.budget().map(|b| b.budget),
        Some(Budget::RequestTime),
        "{e}"
    );
    assert!(took < REQUEST_TIME + GRACE, "took {took:?}: {e}");
}
