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

/// The arguments of the client-credentials grant with the client id and the secret in the file
/// at `secret`, after [`BASE`].
fn client_credentials(secret: &str) -> Vec<&str> {
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--client-id",
        m2m::CLIENT_ID,
        "--client-secret-file",
        secret,
    ]);
    args
}

#[test]
fn client_credentials_with_a_secret_file_and_from_the_environment() {
    let server = AuthServer::start(Mode::Normal);
    let issuer = server.base();
    let dir = tmp("basic");
    let secret = file(&dir, "secret", &format!("{}\n", m2m::SECRET));
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--issuer",
        &issuer,
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
        "--issuer",
        &issuer,
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
    let issuer = server.base();
    let dir = tmp("jwt");
    let workload = m2m::unsigned_jwt(&serde_json::json!({"sub": "w", "aud": server.base()}));
    let token = file(&dir, "workload", &workload);
    let url = server.url();
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "jwt-bearer",
        "--issuer",
        &issuer,
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
        "--issuer",
        &issuer,
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
            .grants("/idp/token", mcp_sansio::internals::auth::TOKEN_EXCHANGE)
            .len(),
        1
    );
    assert_eq!(
        server
            .grants("/token", mcp_sansio::internals::auth::JWT_BEARER)
            .len(),
        2
    );
    assert_eq!(server.refusal(), None);
}

#[test]
fn a_refused_secret_exits_with_4_after_one_request() {
    let server = AuthServer::start(Mode::Normal);
    let issuer = server.base();
    let dir = tmp("refused");
    let secret = file(&dir, "secret", "not-the-secret");
    let url = server.url();
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--issuer",
        &issuer,
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
    let mut args = client_credentials(&secret);
    args.extend(["--issuer", "https://auth.example", "list", &url]);
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
        let issuer = server.base();
        let dir = tmp("dpop");
        let secret = file(&dir, "secret", m2m::SECRET);
        let pem = p256_pem();
        let key = file(&dir, "dpop.pem", &pem);
        let url = server.url();
        let mut args = BASE.to_vec();
        args.extend([
            "--grant",
            "client-credentials",
            "--issuer",
            &issuer,
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
    let issuer = server.base();
    let dir = tmp("dpop-forever");
    let secret = file(&dir, "secret", m2m::SECRET);
    let key = file(&dir, "dpop.pem", &p256_pem());
    let url = server.url();
    let mut args = BASE.to_vec();
    args.extend([
        "--grant",
        "client-credentials",
        "--issuer",
        &issuer,
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

/// `--grant` without `--issuer` is a usage error (exit 2) that names the missing option, and
/// nothing is sent: the test server sees no request at all (neither the MCP request nor any
/// authorization request), with the secret in HTTP Basic or in the body.
#[test]
fn a_grant_without_issuer_is_a_usage_error_and_sends_nothing() {
    let server = AuthServer::start(Mode::Normal);
    let dir = tmp("no-issuer");
    let secret = file(&dir, "secret", m2m::SECRET);
    let url = server.url();
    for post in [false, true] {
        let mut args = client_credentials(&secret);
        if post {
            args.push("--client-secret-post");
        }
        args.extend(["list", &url]);
        let o = probe(&args, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--issuer"), "{err}");
        assert!(!err.contains(m2m::SECRET));
    }
    assert!(server.seen().is_empty(), "{:?}", server.seen());
}

/// A token file written under another pin (or none): this MCP server's token was issued by
/// another authorization server, whose token endpoint the file keeps, and it has expired. Run
/// with `--issuer` naming ours, the renewal sends nothing to the other server (running the
/// grant there would present the secret); the stale token is dropped and the grant runs at
/// the pinned server.
#[test]
fn a_renewal_under_a_pin_sends_nothing_to_another_issuer() {
    let ours = AuthServer::start(Mode::Normal);
    let other = AuthServer::start(Mode::Normal);
    let issuer = ours.base();
    let dir = tmp("renewal");
    let secret = file(&dir, "secret", m2m::SECRET);
    let url = ours.url();
    let written = serde_json::json!({
        "version": 2,
        "issuers": {other.base(): {"token_endpoint": format!("{}/token", other.base())}},
        "resources": {url.clone(): {
            "issuer": other.base(),
            "resource": url,
            "tokens": {"access_token": "tok-from-the-other", "refresh_token": null,
                       "expires_at_ms": 1, "scopes": []},
        }},
    });
    let tokens = file(&dir, "tokens.json", &written.to_string());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mut args = client_credentials(&secret);
    args.extend(["--issuer", &issuer, "--token-file", &tokens, "list", &url]);
    listed(&probe(&args, &[]), &[m2m::SECRET]);
    assert!(other.seen().is_empty(), "{:?}", other.seen());
    assert_eq!(ours.grants("/token", "client_credentials").len(), 1);
    let kept = std::fs::read_to_string(&tokens).unwrap();
    assert!(!kept.contains("tok-from-the-other"), "{kept}");
}
