//! The smol runtime of the shared network code ([`runtime`](crate::runtime),
//! [`tasks`](crate::runtime::tasks)): smol's reactor, tasks and timers, TLS by `futures-rustls`.
//!
//! The smol adapter (the repository's `mcp-sansio-smol-example`) runs its sessions on it
//! ([`SmolNet`]: tasks on smol's executor), and the blocking adapter too ([`SmolThreads`]): each
//! of its operations is an [`OwnThread::block_on`] of the same future on the calling thread, and
//! each task of its exchanges and HTTP/2 sockets has a thread of its own, so that as many
//! exchanges move at once as there are, whatever the size of smol's executor.

use std::fmt::Debug;
use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future::FutureExt as _;
use futures_rustls::client::TlsStream;
use mcp_sansio::TransportError;
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::{Async, Task, Timer};

use crate::guard::dial::{server_name, still_idle, tls_error, DialDeadline, Peek};
use crate::lock::lock;
use crate::runtime::counted::ReadLimit;
use crate::runtime::tasks::{within, AsyncNet, IoStep};
use crate::runtime::{Connect, Dialled, Runtime};
#[cfg(unix)]
use rustix::buffer::spare_capacity;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pub use smol::block_on;

/// The smol runtime of the shared network code: smol's reactor and timers, its tasks spawned by
/// `S` (by default on smol's executor).
#[derive(Clone, Copy, Debug, Default)]
pub struct SmolNet<S = Executor>(PhantomData<S>);

/// [`SmolNet`] with a thread per task ([`OwnThread`]): the blocking adapter's runtime.
pub type SmolThreads = SmolNet<OwnThread>;

/// How [`SmolNet`] runs a task.
pub trait Spawn: Clone + Copy + Debug + Default + Send + Sync + 'static {
    /// A running task; dropping it cancels the task.
    type Task: Send + 'static;
    /// Whether a task may block its thread (a thread of its own): then a blocking step (name
    /// resolution) runs in place rather than on smol's blocking pool.
    const OWN_THREAD: bool;
    /// Starts `future`.
    fn spawn(future: impl Future<Output = ()> + Send + 'static) -> Self::Task;
    /// Lets `task` run to its end on its own.
    fn detach(task: Self::Task);
}

/// Tasks on smol's executor (`smol::spawn`), whose threads `SMOL_THREADS` sets (one by default).
#[derive(Clone, Copy, Debug, Default)]
pub struct Executor;

impl Spawn for Executor {
    type Task = Task<()>;
    const OWN_THREAD: bool = false;

    fn spawn(future: impl Future<Output = ()> + Send + 'static) -> Task<()> {
        smol::spawn(future)
    }

    fn detach(task: Task<()>) {
        task.detach();
    }
}

/// A thread per task, which runs it with `futures_lite`'s `block_on`: no task waits for another to
/// yield, and a blocking step (name resolution) runs in place. Should the system refuse a thread,
/// the task runs on smol's executor instead, cancelled all the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct OwnThread;

impl OwnThread {
    /// Runs `future` to its end on this thread, which sleeps while it waits; smol's reactor
    /// thread wakes it (unlike smol's [`block_on`], which wakes that thread at every return).
    ///
    /// A blocking operation's future: nothing else runs on the thread meanwhile, so a plain
    /// socket's read that finds nothing waits for bytes in place first, in the kernel, for at most
    /// [`WAIT_IN_PLACE`] (a nearby server's answer), and only then through smol's reactor: no
    /// registration, timer or hand-off per read, and the future's other branches (its deadline)
    /// are seen at most that much later.
    pub fn block_on<F: Future>(future: F) -> F::Output {
        let before = WAITS_IN_PLACE.replace(true);
        let out = futures_lite::future::block_on(future);
        WAITS_IN_PLACE.set(before);
        out
    }
}

/// How long a read of a blocking operation waits in place ([`OwnThread::block_on`]).
pub const WAIT_IN_PLACE: Duration = Duration::from_millis(1);

thread_local! {
    /// Whether this thread runs a blocking operation ([`OwnThread::block_on`]).
    static WAITS_IN_PLACE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Waits until `tcp` is readable (or closed), at most [`WAIT_IN_PLACE`].
#[cfg(unix)]
fn wait_in_place(tcp: &TcpStream) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let limit = Timespec {
        tv_sec: 0,
        tv_nsec: WAIT_IN_PLACE.as_nanos() as _,
    };
    let _ = poll(&mut [PollFd::new(tcp, PollFlags::IN)], Some(&limit));
}

/// A task of [`OwnThread`]. Dropping it cancels the task: its thread drops the future (and the
/// socket it holds) at once and ends.
#[derive(Debug)]
pub struct ThreadTask {
    /// Set when dropped (the task is cancelled); taken first, it lets the task run on.
    cancel: Option<Arc<Cancel>>,
}

impl Drop for ThreadTask {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.set();
        }
    }
}

/// A task's cancellation: one allocation per task, none per wait.
#[derive(Debug, Default)]
struct Cancel(Mutex<(bool, Option<std::task::Waker>)>);

impl Cancel {
    /// Cancels the task.
    fn set(&self) {
        let waiter = {
            let mut state = lock(&self.0);
            state.0 = true;
            state.1.take()
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }

    /// Ready once the task is cancelled.
    async fn wait(&self) {
        std::future::poll_fn(|cx| {
            let mut state = lock(&self.0);
            if state.0 {
                return std::task::Poll::Ready(());
            }
            match &state.1 {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => state.1 = Some(cx.waker().clone()),
            }
            std::task::Poll::Pending
        })
        .await;
    }
}

impl Spawn for OwnThread {
    type Task = ThreadTask;
    const OWN_THREAD: bool = true;

    fn spawn(future: impl Future<Output = ()> + Send + 'static) -> ThreadTask {
        let cancel = Arc::new(Cancel::default());
        let cancelled = cancel.clone();
        let run = future.or(async move { cancelled.wait().await });
        // Taken by the thread, or by the executor should the thread not start.
        let slot = Arc::new(Mutex::new(Some(run)));
        let theirs = slot.clone();
        let started = std::thread::Builder::new()
            .name("mcp-sansio-task".into())
            .spawn(move || lock(&theirs).take().map(futures_lite::future::block_on));
        if started.is_err() {
            if let Some(run) = lock(&slot).take() {
                smol::spawn(run).detach();
            }
        }
        ThreadTask {
            cancel: Some(cancel),
        }
    }

    fn detach(mut task: ThreadTask) {
        task.cancel = None;
    }
}

impl<S: Spawn> Connect for SmolNet<S> {
    type Tcp = SmolTcp;

    async fn connect_tcp(
        &self,
        address: SocketAddr,
        limit: Duration,
    ) -> io::Result<Option<Self::Tcp>> {
        let connect = Async::<TcpStream>::connect(address);
        let tcp = within::<Self, _>(limit, connect).await.transpose()?;
        if let Some(tcp) = &tcp {
            let _ = tcp.get_ref().set_nodelay(true);
        }
        Ok(tcp.map(|inner| SmolTcp {
            inner,
            count: ReadLimit::new(),
        }))
    }

    fn limit_reads(tcp: &mut SmolTcp, limit: u64) {
        tcp.count.set(limit);
    }
}

impl<S: Spawn> Runtime for SmolNet<S> {
    type Tls = TlsStream<SmolTcp>;

    async fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        if S::OWN_THREAD {
            return Ok(f());
        }
        Ok(smol::unblock(f).await)
    }

    async fn tls(
        &self,
        tcp: Self::Tcp,
        config: &Arc<rustls::ClientConfig>,
        host: &str,
        deadline: &DialDeadline,
    ) -> Result<Self::Tls, TransportError> {
        let name = server_name(host)?;
        let left = deadline
            .left(Instant::now())
            .ok_or_else(|| deadline.expired())?;
        let connector = futures_rustls::TlsConnector::from(config.clone());
        match within::<Self, _>(left, connector.connect(name, tcp)).await {
            Some(Ok(tls)) => Ok(tls),
            Some(Err(e)) => Err(tls_error(e.to_string())),
            None => Err(deadline.expired()),
        }
    }
}

impl<S: Spawn> AsyncNet for SmolNet<S> {
    type Stream = SmolStream;
    type Spawner = ();
    type Task = S::Task;

    fn stream(dialled: Dialled<Self::Tcp, Self::Tls>) -> SmolStream {
        match dialled {
            Dialled::Plain(tcp) => SmolStream::Plain(tcp),
            Dialled::Tls(tls) => SmolStream::Tls(Box::new(tls)),
        }
    }

    fn is_h2(stream: &SmolStream) -> bool {
        match stream {
            SmolStream::Plain(_) => false,
            SmolStream::Tls(s) => crate::guard::tls::is_h2(s.get_ref().1.alpn_protocol()),
        }
    }

    /// The shared rule ([`still_idle`]); the socket is non-blocking, so a peek with nothing
    /// waiting says so at once.
    fn is_idle(stream: &mut SmolStream) -> bool {
        let mut byte = [0u8; 1];
        let (tcp, tls, buffered) = match stream {
            SmolStream::Plain(s) => (s.inner.get_ref(), false, false),
            SmolStream::Tls(s) => {
                let (tcp, conn) = s.get_mut();
                let read = io::Read::read(&mut conn.reader(), &mut byte);
                let buffered = !matches!(read, Err(e) if e.kind() == io::ErrorKind::WouldBlock);
                (tcp.inner.get_ref(), true, buffered)
            }
        };
        let peek = match tcp.peek(&mut byte) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Peek::Quiet,
            Ok(0) | Err(_) => Peek::Closed,
            Ok(_) => Peek::Bytes,
        };
        still_idle(tls, buffered, peek)
    }

    async fn io(stream: &mut SmolStream, mut step: IoStep<'_>) -> io::Result<usize> {
        // A plain socket reads straight into the buffer's spare capacity: not zeroed first.
        #[cfg(unix)]
        if let (SmolStream::Plain(tcp), IoStep::Read(buf)) = (&mut *stream, &mut step) {
            let SmolTcp { inner, count } = tcp;
            let start = buf.len();
            let mut read = |tcp: &TcpStream| -> io::Result<usize> {
                Ok(rustix::io::read(tcp, spare_capacity(&mut **buf))?)
            };
            let n = 'read: {
                if S::OWN_THREAD && WAITS_IN_PLACE.get() {
                    match read(inner.get_ref()) {
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            wait_in_place(inner.get_ref())
                        }
                        done => break 'read done,
                    }
                }
                inner.read_with(read).await
            }?;
            if let Err(e) = count.count(n) {
                buf.truncate(start);
                return Err(e);
            }
            return Ok(n);
        }
        let io: &mut dyn Io = match stream {
            SmolStream::Plain(s) => s,
            SmolStream::Tls(s) => s.as_mut(),
        };
        match step {
            IoStep::Read(buf) => {
                let start = buf.len();
                buf.resize(buf.capacity().max(start + 1), 0);
                let read = io.read(&mut buf[start..]).await;
                buf.truncate(start + *read.as_ref().unwrap_or(&0));
                read
            }
            IoStep::Write(bytes) => io.write(bytes).await,
            IoStep::Flush => io.flush().await.map(|()| 0),
            IoStep::Shutdown => io.close().await.map(|()| 0),
        }
    }

    fn spawner() {}

    fn spawn((): &(), future: impl Future<Output = ()> + Send + 'static) -> S::Task {
        S::spawn(future)
    }

    fn detach(task: S::Task) {
        S::detach(task);
    }

    async fn sleep_until(at: Instant) {
        Timer::at(at).await;
    }
}

/// A plain or TLS socket on smol's reactor.
pub enum SmolStream {
    /// `http`.
    Plain(SmolTcp),
    /// `https`.
    Tls(Box<TlsStream<SmolTcp>>),
}

/// A TCP socket on smol's reactor that counts every raw byte it reads against its
/// [`ReadLimit`], below TLS: a read past the limit fails before its bytes go on
/// ([`Connect::limit_reads`]).
#[derive(Debug)]
pub struct SmolTcp {
    inner: Async<TcpStream>,
    count: ReadLimit,
}

impl AsyncRead for SmolTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        Poll::Ready(this.count.count(n).map(|()| n))
    }
}

impl AsyncWrite for SmolTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

/// What a [`SmolStream`] reads and writes through, plain or TLS.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::pending;
    use std::sync::{mpsc, Barrier};

    /// Sends on `tx` when dropped.
    struct Dropped(mpsc::Sender<&'static str>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.send("dropped");
        }
    }

    /// Two tasks that each block their thread until the other arrives both end: every task of
    /// [`OwnThread`] has a thread of its own (what lets a task block for a name resolution).
    #[test]
    fn tasks_that_block_until_each_other_arrives_both_end() {
        let (tx, rx) = mpsc::channel();
        let barrier = Arc::new(Barrier::new(2));
        let tasks: Vec<ThreadTask> = (0..2)
            .map(|_| {
                let (tx, barrier) = (tx.clone(), barrier.clone());
                OwnThread::spawn(async move {
                    barrier.wait();
                    let _ = tx.send("ended");
                })
            })
            .collect();
        for _ in 0..2 {
            let got = rx.recv_timeout(Duration::from_secs(20));
            assert_eq!(got, Ok("ended"), "a task waited for a thread");
        }
        drop(tasks);
    }

    /// A plain socket's reads (straight into the buffer, in place or on the reactor) count
    /// too: a server that sends one byte more than the socket may read fails the read that
    /// brings it, after at most the limit was handed on, on both of [`SmolNet`]'s ways to read.
    #[test]
    fn a_plain_socket_stops_one_byte_past_its_limit() {
        fn read_all<S: Spawn>() -> (usize, io::Error) {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let address = listener.local_addr().unwrap();
            let server = std::thread::spawn(move || {
                let (mut tcp, _) = listener.accept().unwrap();
                io::Write::write_all(&mut tcp, &[7u8; 101]).unwrap();
            });
            let rt = SmolNet::<S>::default();
            let limit = Duration::from_secs(5);
            let tcp = block_on(rt.connect_tcp(address, limit)).unwrap().unwrap();
            let mut stream = SmolNet::<S>::stream(Dialled::Plain(tcp));
            if let SmolStream::Plain(tcp) = &mut stream {
                SmolNet::<S>::limit_reads(tcp, 100);
            }
            server.join().unwrap();
            let mut handed = 0;
            let mut buf = Vec::with_capacity(8);
            let e = loop {
                buf.clear();
                match block_on(SmolNet::<S>::io(&mut stream, IoStep::Read(&mut buf))) {
                    Ok(0) => panic!("the end of the stream, {handed} bytes handed on"),
                    Ok(n) => handed += n,
                    Err(e) => break e,
                }
            };
            (handed, e)
        }
        let on_reactor = read_all::<Executor>();
        let in_place = OwnThread::block_on(async { read_all::<OwnThread>() });
        for (handed, e) in [on_reactor, in_place] {
            assert!(handed <= 100, "{handed}");
            assert!(e.to_string().contains("limit of 100"), "{e}");
        }
    }

    /// Dropping a task drops its future (which closes the socket it holds); a detached task runs
    /// to its end.
    #[test]
    fn a_dropped_task_is_cancelled_and_a_detached_one_runs_on() {
        let (tx, rx) = mpsc::channel();
        let guard = Dropped(tx.clone());
        let task = OwnThread::spawn(async move {
            let _guard = guard;
            pending::<()>().await;
        });
        drop(task);
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)), Ok("dropped"));

        let (go, wait) = async_channel::bounded::<()>(1);
        let task = OwnThread::spawn(async move {
            let _ = wait.recv().await;
            let _ = tx.send("ended");
        });
        OwnThread::detach(task);
        go.send_blocking(()).unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)), Ok("ended"));
    }
}
