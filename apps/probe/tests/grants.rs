//! `mcp-probe --oauth --grant …` against the project's test authorization server
//! (`checks/support/src/auth_server.rs`): each grant without a browser lists the tools, with
//! its secrets, keys and tokens read from files or the environment and never printed; an
//! authorization server's refusal exits with 4 after one token request.

use std::process::{Command, Output};

use mcp_sansio_test_support::auth_server::{m2m, AuthServer, Mode};

fn probe(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-probe"));
    c.args(args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("MCP_CLIENT_SECRET");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the binary runs")
}

fn file(dir: &std::path::Path, name: &str, content: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p.to_str().unwrap().to_owned()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("mcp-probe-grants-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn listed(o: &Output, secrets: &[&str]) {
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("\"echo\""), "{out}");
    for s in secrets {
        assert!(!out.contains(s) && !err.contains(s), "{s} printed");
    }
}

const BASE: [&str; 3] = ["--allow-loopback", "--json", "--oauth"];

#[test]
fn client_credentials_with_a_secret_file_and_from_the_environment() {
    let server = AuthServer::start(Mode::Normal);
    let dir = tmp("basic");
    let secret = file(&dir, "secret", &format!("{}\n", m2m::SECRET));
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-file",
        &secret,
        "list",
    ]);
    let url = server.url();
    args.push(&url);
    listed(&probe(&args, &[]), &[m2m::SECRET]);
    // The same secret from MCP_CLIENT_SECRET, in the form body this time.
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-post",
        "list",
        &url,
    ]);
    listed(
        &probe(&args, &[("MCP_CLIENT_SECRET", m2m::SECRET)]),
        &[m2m::SECRET],
    );
    let grants = server.grants("/token", "client_credentials");
    assert_eq!(grants.len(), 2);
    assert_eq!(
        grants[1].get("client_secret").map(String::as_str),
        Some(m2m::SECRET)
    );
    assert_eq!(server.count("GET", "/authorize"), 0);
}

#[test]
fn a_workload_token_file_and_an_enterprise_id_token_file() {
    let server = AuthServer::start(Mode::Normal);
    let dir = tmp("jwt");
    let workload = m2m::unsigned_jwt(&serde_json::json!({"sub": "w", "aud": server.base()}));
    let token = file(&dir, "workload", &workload);
    let url = server.url();
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "jwt-bearer",
        "--client-id",
        m2m::CLIENT_ID,
        "--workload-token-file",
        &token,
        "list",
        &url,
    ]);
    listed(&probe(&args, &[]), &[&workload]);
    let id = file(&dir, "id", m2m::ID_TOKEN);
    let secret = file(&dir, "secret", m2m::SECRET);
    let idp = format!("{}/idp/token", server.base());
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "enterprise",
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-file",
        &secret,
        "--idp-token-endpoint",
        &idp,
        "--idp-client-id",
        "idp-client",
        "--id-token-file",
        &id,
        "list",
        &url,
    ]);
    listed(&probe(&args, &[]), &[m2m::ID_TOKEN, m2m::SECRET]);
    assert_eq!(
        server
            .grants("/idp/token", mcp_sansio::auth::TOKEN_EXCHANGE)
            .len(),
        1
    );
    assert_eq!(
        server.grants("/token", mcp_sansio::auth::JWT_BEARER).len(),
        2
    );
    assert_eq!(server.refusal(), None);
}

#[test]
fn a_refused_secret_exits_with_4_after_one_request() {
    let server = AuthServer::start(Mode::Normal);
    let dir = tmp("refused");
    let secret = file(&dir, "secret", "not-the-secret");
    let url = server.url();
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-file",
        &secret,
        "list",
        &url,
    ]);
    let o = probe(&args, &[]);
    assert_eq!(o.status.code(), Some(4));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("invalid_client"), "{text}");
    assert!(!text.contains("not-the-secret"));
    assert_eq!(server.count("POST", "/token"), 1);
}

#[test]
fn with_issuer_the_secret_goes_to_no_other_authorization_server() {
    let server = AuthServer::start(Mode::Normal);
    let dir = tmp("issuer");
    let secret = file(&dir, "secret", m2m::SECRET);
    let url = server.url();
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-file",
        &secret,
        "--issuer",
        "https://auth.example",
        "list",
        &url,
    ]);
    let o = probe(&args, &[]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(server.count("POST", "/token"), 0);
    assert_eq!(
        server.count("GET", "/.well-known/oauth-authorization-server"),
        0
    );
}

/// A fresh P-256 key as a PKCS#8 PEM (made by ring here, read by the probe from a file).
fn p256_pem() -> String {
    use base64::Engine as _;
    let rng = ring::rand::SystemRandom::new();
    let alg = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
    )
}

#[test]
fn with_dpop_the_token_is_bound_to_the_key_file_and_every_mcp_request_proves_it() {
    for mode in [Mode::Dpop, Mode::DpopNonce] {
        let server = AuthServer::start(mode);
        let dir = tmp("dpop");
        let secret = file(&dir, "secret", m2m::SECRET);
        let pem = p256_pem();
        let key = file(&dir, "dpop.pem", &pem);
        let url = server.url();
        let mut args = BASE.to_vec();
        args.extend([
            "--grant",
            "client-credentials",
            "--client-id",
            m2m::CLIENT_ID,
            "--client-secret-file",
            &secret,
            "--dpop",
            &key,
            "call",
            &url,
            "echo",
        ]);
        let o = probe(&args, &[]);
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(0), "{mode:?}: {out}\n{err}");
        assert!(!out.contains("PRIVATE") && !err.contains("PRIVATE"));
        assert_eq!(server.refusal(), None, "{mode:?}: every proof verified");
        assert!(!server.saw_a_bearer(), "{mode:?}");
        let nonces = server.mcp_proof_nonces();
        assert!(
            nonces.iter().filter(|n| n.is_some()).count() >= 2,
            "{nonces:?}"
        );
    }
    // A server asking for a nonce forever: exit 4 after one retry.
    let server = AuthServer::start(Mode::DpopNonceForever);
    let dir = tmp("dpop-forever");
    let secret = file(&dir, "secret", m2m::SECRET);
    let key = file(&dir, "dpop.pem", &p256_pem());
    let url = server.url();
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-file",
        &secret,
        "--dpop",
        &key,
        "list",
        &url,
    ]);
    let o = probe(&args, &[]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(server.mcp_proof_nonces().len(), 3);
}
