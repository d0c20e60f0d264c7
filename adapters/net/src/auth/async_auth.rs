//! The authorizing session ([`AuthSession`](crate::auth::session::AuthSession)) of every async
//! runtime ([`AsyncNet`]), written once: its sessions are the runtime's, each authorization
//! request is one [`send`], and the embedder's user agent hook, which blocks by contract, runs
//! where the runtime allows blocking ([`Runtime::unblock`](crate::Runtime::unblock)).

use std::marker::PhantomData;
use std::time::Instant;

use mcp_sansio::auth::{AuthExchange, AuthResponse};
use mcp_sansio::{CallResult, Catalog, Config, Error, TransportError};

use crate::auth::read::EXCHANGE_READ;
use crate::auth::session::AuthRuntime;
use crate::auth::{lock_hook, AuthHttp, Prepared, SharedHook};
use crate::guard::dial::{io_error, DialDeadline};
use crate::runtime::tasks::{until, write_all, AsyncNet, IoStep};
use crate::runtime::{self, Dialled};
use crate::session::{CallObserver, Client, Session};

/// The async side of an [`AuthSession`](crate::auth::session::AuthSession) on runtime `R`.
#[derive(Debug)]
pub struct AsyncAuth<R>(PhantomData<R>);

impl<R: AsyncNet> AuthRuntime for AsyncAuth<R> {
    type Client = Client<R>;
    type Session = Session<R>;

    async fn connect(client: &Client<R>, config: Config) -> Result<Session<R>, Error> {
        client.connect(config).await
    }

    async fn list_tools(s: &mut Session<R>) -> Result<Catalog, Error> {
        s.list_tools().await
    }

    async fn call_tool_with(
        s: &mut Session<R>,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, Error> {
        s.call_tool_with(name, arguments_json, observer).await
    }

    async fn resume_task_with(
        s: &mut Session<R>,
        handle: &mcp_sansio::task::TaskHandle,
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, Error> {
        s.resume_task_with(handle, observer).await
    }

    async fn close(s: Session<R>) -> Result<(), Error> {
        s.close().await
    }

    async fn send(http: &AuthHttp, req: &AuthExchange) -> Result<AuthResponse, TransportError> {
        send::<R>(http, req).await
    }

    async fn open_user_agent(hook: SharedHook, url: String) -> Result<String, String> {
        R::default()
            .unblock(hook_call(hook, url))
            .await
            .unwrap_or_else(|e| Err(format!("the user agent hook failed: {e}")))
    }

    async fn pause(d: std::time::Duration) {
        R::sleep_until(Instant::now() + d).await;
    }
}

/// The embedder's hook opening `url`, as a closure that names no type parameter of the
/// runtime: a closure made inside the generic impl would capture them, and Rust before 1.87
/// does not prove such a closure `'static` for `unblock` (the workspace's rust-version is 1.85).
fn hook_call(
    hook: SharedHook,
    url: String,
) -> impl FnOnce() -> Result<String, String> + Send + 'static {
    move || lock_hook(&hook).open_user_agent(&url)
}

/// One authorization exchange on `R`, within [`AuthHttp::exchange_timeout`] counted from its
/// start: resolved and vetted as the MCP dial does, the vetted address dialled, its reads
/// counted against [`Prepared::raw_limit`] below TLS, the runtime's TLS run for `https`, then the
/// request written and the response read through the core's HTTP/1.1 socket. No task: dropping
/// the future cancels the exchange.
pub async fn send<R: AsyncNet>(
    http: &AuthHttp,
    req: &AuthExchange,
) -> Result<AuthResponse, TransportError> {
    let deadline = DialDeadline::new(Instant::now(), http.exchange_timeout());
    let prepared = http.prepare(req)?;
    until::<R, _>(deadline.at(), exchange::<R>(http, prepared, &deadline))
        .await
        .unwrap_or_else(|| Err(http.expired()))
}

async fn exchange<R: AsyncNet>(
    http: &AuthHttp,
    p: Prepared,
    deadline: &DialDeadline,
) -> Result<AuthResponse, TransportError> {
    let late = |e: TransportError| {
        if deadline.left(Instant::now()).is_none() {
            http.expired()
        } else {
            e
        }
    };
    let rt = R::default();
    let guard = http.clone();
    let (host, port) = (p.host.clone(), p.port);
    let vetted = runtime::vet(&rt, move || guard.vetted(&host, port)).await?;
    let (_, mut tcp) = runtime::connect(&rt, &vetted, deadline)
        .await
        .map_err(late)?;
    R::limit_reads(&mut tcp, p.raw_limit());
    let dialled = if p.tls {
        let tls = rt.tls(tcp, &http.tls, &p.host, deadline).await;
        Dialled::Tls(tls.map_err(late)?)
    } else {
        Dialled::Plain(tcp)
    };
    let mut socket = R::stream(dialled);
    write_all::<R>(&mut socket, &p.request)
        .await
        .map_err(|e| io_error(&e))?;
    let mut read = p.reader();
    let mut buf = Vec::with_capacity(EXCHANGE_READ);
    loop {
        buf.clear();
        let got = R::io(&mut socket, IoStep::Read(&mut buf)).await;
        if let Some(done) = read.after_read(got, &buf, |e| io_error(&e)) {
            return done;
        }
    }
}
