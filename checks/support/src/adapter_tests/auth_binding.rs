//! The token-binding tests of both adapters: with one credential store, a token obtained for one
//! MCP server is never sent to another, and a hostile server that names the first server's
//! authorization server as its own gets no refresh of the first server's token. An adapter's
//! `tests/auth_binding.rs` brings the protected server ([`crate::auth_server`]) and the shared
//! helpers ([`super::auth`]) into scope, and declares the tests with
//! [`crate::auth_binding_tests!`].

/// Declares the token-binding tests of an adapter whose `Client` and `AuthSession` are in scope:
/// `#[$test]` is its test attribute, `async` is present when its operations are futures and
/// `[$($wait)*]` is what waits for an operation (`.await`, or nothing). A second bracket says
/// what waits for the tests' own helpers when that differs (`[]` for a runtime whose operations
/// are run to their end with `.block()`: its helpers are plain functions).
#[macro_export]
macro_rules! auth_binding_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        $crate::auth_binding_tests!(#[$test] $($async)? [$($wait)*] [$($wait)*]);
    };
    (#[$test:meta] $($async:ident)? [$($wait:tt)*] [$($helper:tt)*]) => {
        /// Authorizes against a fresh server A and gives it with the store saved.
        $($async)? fn authorized_at_a(client: &Client) -> (AuthServer, CredentialStore) {
            let a = AuthServer::start(Mode::Normal);
            let b = browser();
            let saved = b.saved.clone();
            let config = Config::new(&a.url()).unwrap();
            let s = AuthSession::connect(client, config, authorization(&a, b))$($wait)*.unwrap();
            s.close()$($wait)*.unwrap();
            let store = saved.lock().unwrap().clone().expect("the store was saved");
            (a, store)
        }

        /// Connects to `hostile` with `store`, a user agent that refuses (so that nothing but
        /// what the store holds could reach it).
        $($async)? fn connect_with(client: &Client, hostile: &AuthServer, store: CredentialStore) -> AuthSessionError {
            let mut b = browser();
            b.stored = Some(store);
            b.refuse = true;
            let config = Config::new(&hostile.url()).unwrap();
            AuthSession::connect(client, config, authorization(hostile, b))$($wait)*.unwrap_err()
        }

        #[$test]
        $($async)? fn a_token_for_one_server_is_never_sent_to_another() {
            let client = Client::builder().policy(policy()).build();
            let (a, store) = authorized_at_a(&client)$($helper)*;
            assert!(a.saw_a_bearer());
            let hostile = AuthServer::start(Mode::Normal);
            let e = connect_with(&client, &hostile, store)$($helper)*;
            assert!(!hostile.saw_a_bearer(), "server A's token reached server B");
            assert!(
                matches!(e, AuthSessionError::Authorization(AuthorizeError::UserAgent(_))),
                "{e:?}"
            );
        }

        #[$test]
        $($async)? fn a_server_naming_another_servers_authorization_server_gets_no_refreshed_token() {
            let client = Client::builder().policy(policy()).build();
            let (a, store) = authorized_at_a(&client)$($helper)*;
            let hostile = AuthServer::start_naming(&a.base());
            let e = connect_with(&client, &hostile, store)$($helper)*;
            assert_eq!(a.refresh_grants(), 0, "server A's token was refreshed for server B");
            assert!(!hostile.saw_a_bearer(), "a token of server A reached server B");
            // The user agent was asked for server B's own authorization instead.
            assert!(
                matches!(e, AuthSessionError::Authorization(AuthorizeError::UserAgent(_))),
                "{e:?}"
            );
        }
    };
}
