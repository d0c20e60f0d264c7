//! The rustls client configuration: ring provider, webpki roots, ALPN `http/1.1`.

use std::sync::Arc;

use rustls::{ClientConfig, RootCertStore};

/// The default client configuration, trusting the Mozilla roots of `webpki-roots`.
pub fn client_config() -> Arc<ClientConfig> {
    let roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    client_config_with_roots(roots)
}

/// A client configuration trusting exactly `roots` (e.g. a test CA).
pub fn client_config_with_roots(roots: RootCertStore) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

#[cfg(test)]
mod tests {
    #[test]
    fn offers_http11_only() {
        let c = super::client_config();
        assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
