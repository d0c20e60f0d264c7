//! One refresh per grant among tokio tasks: 16 tasks on one thread (a current-thread runtime)
//! whose tokens expired refresh through the shared seam (`mcp_sansio_net::auth::refresh`): one
//! refresh, and the waiting tasks sleep on the runtime's timer (a blocking wait would stall the
//! only thread, and the refresh with it, until the authorization's deadline).

mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{authorization, http, now_ms, use_token, vault, RotatingServer, Vault};
use mcp_sansio_tokio::auth::TokioAuth;

#[test]
fn sixteen_tasks_on_one_thread_make_one_refresh() {
    let server = RotatingServer::start(3600);
    server.slow(300);
    let base = server.base();
    let (access, refresh) = server.seed();
    let v = vault(&base, &access, &refresh, now_ms() - 1);
    let http = http();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let start = Instant::now();
    let local = tokio::task::LocalSet::new();
    let tokens = local.block_on(&rt, async {
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let mut auth = authorization(&base, http.clone(), Vault(v.0.clone()));
                tokio::task::spawn_local(async move {
                    mcp_sansio_net::auth::refresh::<TokioAuth>(&mut auth)
                        .await
                        .map(|()| auth.bearer().map(str::to_owned))
                })
            })
            .collect();
        let mut tokens = Vec::new();
        for t in tasks {
            tokens.push(t.await.unwrap());
        }
        tokens
    });
    // The slow endpoint's 300 ms and little more, not the authorization's deadline.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let first = tokens[0].clone().unwrap().unwrap();
    assert!(tokens
        .iter()
        .all(|t| t.as_ref().ok().and_then(|b| b.as_deref()) == Some(&*first)));
    assert_eq!(use_token(&base, &first), 200);
    let c = server.counts();
    assert_eq!((c.refreshes, c.reuses, c.revocations), (1, 0, 0), "{c:?}");
}
