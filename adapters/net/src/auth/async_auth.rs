//! The authorizing session ([`AuthSession`](crate::auth::session::AuthSession)) of every async
//! runtime ([`AsyncNet`]), written once: its sessions are the runtime's, each authorization
//! request is one [`send`], and the embedder's user agent hook, which blocks by contract, runs
//! where the runtime allows blocking ([`Runtime::unblock`](crate::Runtime::unblock)).

use std::marker::PhantomData;
use std::time::Instant;

use mcp_sansio::auth::{AuthExchange, AuthResponse};
use mcp_sansio::{CallResult, Catalog, Config, Error, TransportError};

use crate::auth::session::AuthRuntime;
use crate::auth::wire::WIRE_READ;
use crate::auth::{lock_hook, AuthHttp, Prepared, SharedHook};
use crate::guard::dial::{io_error, DialDeadline};
use crate::runtime::tasks::{until, AsyncNet, IoStep};
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

    async fn close(s: Session<R>) -> Result<(), Error> {
        s.close().await
    }

    async fn send(http: &AuthHttp, req: &AuthExchange) -> Result<AuthResponse, TransportError> {
        send::<R>(http, req).await
    }

    async fn open_user_agent(hook: SharedHook, url: String) -> Result<String, String> {
        R::default()
            .unblock(move || lock_hook(&hook).open_user_agent(&url))
            .await
            .unwrap_or_else(|e| Err(format!("the user agent hook failed: {e}")))
    }
}

/// One authorization exchange on `R`, within [`AuthHttp::exchange_timeout`] counted from its
/// start: resolved and vetted as the MCP dial does, the vetted address dialled, then the
/// exchange's bytes moved (TLS handshake and records included, driven by hand) until its
/// response. No task: dropping the future cancels the exchange.
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
    mut p: Prepared,
    deadline: &DialDeadline,
) -> Result<AuthResponse, TransportError> {
    let rt = R::default();
    let guard = http.clone();
    let (host, port) = (p.host.clone(), p.port);
    let vetted = runtime::vet(&rt, move || guard.vetted(&host, port)).await?;
    let (_, tcp) = runtime::connect(&rt, &vetted, deadline).await?;
    let mut socket = R::stream(Dialled::Plain(tcp));
    let mut buf = Vec::with_capacity(WIRE_READ);
    loop {
        while !p.wire.outgoing().is_empty() {
            let step = IoStep::Write(p.wire.outgoing());
            let n = R::io(&mut socket, step).await.map_err(|e| io_error(&e))?;
            if n == 0 {
                return Err(io_error(&std::io::ErrorKind::WriteZero.into()));
            }
            p.wire.sent(n);
        }
        buf.clear();
        let step = IoStep::Read(&mut buf);
        let n = R::io(&mut socket, step).await.map_err(|e| io_error(&e))?;
        if n == 0 {
            return p.wire.closed();
        }
        if let Some(response) = p.wire.incoming(&buf[..n])? {
            return Ok(response);
        }
    }
}
