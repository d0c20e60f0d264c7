//! Sinks: where adapters write the transcripts of their sessions as they are recorded.
//!
//! [`TranscriptSink`] is what an adapter is given; [`Recording`] binds a [`Recorder`] to a sink
//! for one session; [`TranscriptFile`] is a sink writing one file per session.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_sansio::{Config, Instant};

use crate::h2::H2Recorder;
use crate::recorder::Recorder;
use mcp_sansio::h2::H2Config;

/// Where an adapter writes the transcripts of its sessions as they are recorded.
///
/// An adapter numbers its sessions and calls [`write`](TranscriptSink::write) with pieces of
/// each session's transcript text ([`Recorder::take_text`]); the pieces of one session,
/// concatenated, are one transcript. [`finish`](TranscriptSink::finish) says that a session
/// ended (closed or dropped): no more text follows for it. The text never holds a secret (see
/// [`redact_request`](crate::redact_request)). A sink must not fail the session: it handles its own errors.
pub trait TranscriptSink: Send + Sync {
    /// The next piece of the transcript of session `session`.
    fn write(&self, session: u64, text: &str);

    /// Session `session` ended; everything written for it may be flushed.
    fn finish(&self, session: u64) {
        let _ = session;
    }
}

/// One session's place in a [`TranscriptSink`]: the sink and the session's number. Dropping it
/// finishes the session.
struct SinkSession {
    sink: Arc<dyn TranscriptSink>,
    session: u64,
}

impl SinkSession {
    /// Writes `text`, if any, to the sink as the session's next piece.
    fn write(&self, text: String) {
        if !text.is_empty() {
            self.sink.write(self.session, &text);
        }
    }
}

impl Drop for SinkSession {
    fn drop(&mut self) {
        self.sink.finish(self.session);
    }
}

/// A [`Recorder`] bound to a [`TranscriptSink`]: what an adapter holds next to a connection when
/// recording is on. [`flush`](Recording::flush) writes what was recorded since the last flush;
/// dropping it flushes and finishes the session.
pub struct Recording {
    recorder: Recorder,
    out: SinkSession,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("session", &self.out.session)
            .finish_non_exhaustive()
    }
}

impl Recording {
    /// Starts recording session `session`, made with `config`, whose timeline starts at `start`.
    pub fn new(
        config: &Config,
        start: Instant,
        sink: Arc<dyn TranscriptSink>,
        session: u64,
    ) -> Recording {
        Recording {
            recorder: Recorder::new(config, start),
            out: SinkSession { sink, session },
        }
    }

    /// The recorder, to report to.
    pub fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    /// The session number given to the sink.
    pub fn session(&self) -> u64 {
        self.out.session
    }

    /// Writes what was recorded since the last flush to the sink.
    pub fn flush(&mut self) {
        self.out.write(self.recorder.take_text());
    }
}

impl Drop for Recording {
    /// Flushes; the session is finished when its `SinkSession` drops, right after.
    fn drop(&mut self) {
        self.flush();
    }
}

/// An [`H2Recorder`] bound to a [`TranscriptSink`]: what a driver holds next to an HTTP/2
/// session when recording is on, like [`Recording`] for an HTTP/1.1 one.
/// [`flush`](H2Recording::flush) writes what was recorded since the last flush; dropping it
/// flushes and finishes the session.
pub struct H2Recording {
    recorder: H2Recorder,
    out: SinkSession,
}

impl std::fmt::Debug for H2Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2Recording")
            .field("session", &self.out.session)
            .finish_non_exhaustive()
    }
}

impl H2Recording {
    /// Starts recording HTTP/2 session `session`, made with `config`, whose sockets are made
    /// with `h2` and `scheme`, and whose timeline starts at `start`.
    pub fn new(
        config: &Config,
        h2: &H2Config,
        scheme: &str,
        start: Instant,
        sink: Arc<dyn TranscriptSink>,
        session: u64,
    ) -> H2Recording {
        H2Recording {
            recorder: H2Recorder::new(config, h2, scheme, start),
            out: SinkSession { sink, session },
        }
    }

    /// The recorder, to report to.
    pub fn recorder(&mut self) -> &mut H2Recorder {
        &mut self.recorder
    }

    /// The session number given to the sink.
    pub fn session(&self) -> u64 {
        self.out.session
    }

    /// Writes what was recorded since the last flush to the sink.
    pub fn flush(&mut self) {
        self.out.write(self.recorder.take_text());
    }
}

impl Drop for H2Recording {
    /// Flushes; the session is finished when its `SinkSession` drops, right after.
    fn drop(&mut self) {
        self.flush();
    }
}

/// Writes the transcripts of a client's sessions to files: the first session to the path given,
/// every later one to the same path with `.N` appended (N the session number), so that each
/// file holds exactly one transcript that [`Transcript::parse`](crate::Transcript::parse)
/// reads back. Secrets are already redacted by the recorder before they reach the sink.
///
/// A sink cannot fail the session it records; the first write error is kept instead and can be
/// read with [`error`](TranscriptFile::error) (the file is then left as far as it got).
#[derive(Debug)]
pub struct TranscriptFile {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    first: Option<u64>,
    open: Vec<(u64, BufWriter<File>)>,
    error: Option<String>,
    written: Vec<PathBuf>,
}

impl TranscriptFile {
    /// A sink writing to `path`. The file is created (or truncated) now, so that a path that cannot
    /// be written is reported before anything is recorded.
    ///
    /// On Unix every file it writes (`path` and each `path.N`) is opened race-free with
    /// `O_NOFOLLOW`, so a symbolic link there is refused (an error naming it), never followed;
    /// and it is made readable and writable by its owner only (mode 0600), since a transcript
    /// holds tool arguments and results.
    pub fn create(path: impl AsRef<Path>) -> io::Result<TranscriptFile> {
        let path = path.as_ref().to_path_buf();
        open_private(&path)?;
        Ok(TranscriptFile {
            path,
            state: Mutex::new(State::default()),
        })
    }

    /// The first write error, if any.
    pub fn error(&self) -> Option<String> {
        self.lock().error.clone()
    }

    /// The files written so far, in the order their sessions started.
    pub fn files(&self) -> Vec<PathBuf> {
        self.lock().written.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn path_of(&self, state: &mut State, session: u64) -> PathBuf {
        match state.first {
            None => {
                state.first = Some(session);
                self.path.clone()
            }
            Some(first) if first == session => self.path.clone(),
            Some(_) => {
                let mut name = self.path.clone().into_os_string();
                name.push(format!(".{session}"));
                PathBuf::from(name)
            }
        }
    }
}

impl TranscriptSink for TranscriptFile {
    fn write(&self, session: u64, text: &str) {
        let mut state = self.lock();
        if state.error.is_some() {
            return;
        }
        let position = state.open.iter().position(|(s, _)| *s == session);
        let index = match position {
            Some(i) => i,
            None => {
                let path = self.path_of(&mut state, session);
                match open_private(&path) {
                    Ok(f) => {
                        state.written.push(path);
                        state.open.push((session, BufWriter::new(f)));
                        state.open.len() - 1
                    }
                    Err(e) => {
                        state.error = Some(format!("{}: {e}", path.display()));
                        return;
                    }
                }
            }
        };
        if let Err(e) = state.open[index].1.write_all(text.as_bytes()) {
            state.error = Some(format!("{}: {e}", self.path.display()));
        }
    }

    fn finish(&self, session: u64) {
        let mut state = self.lock();
        if let Some(i) = state.open.iter().position(|(s, _)| *s == session) {
            let (_, mut file) = state.open.swap_remove(i);
            if let Err(e) = file.flush() {
                state
                    .error
                    .get_or_insert(format!("{}: {e}", self.path.display()));
            }
        }
    }
}

/// Opens `path` for writing, created or truncated, the way a transcript file is written: it
/// holds tool arguments and results, so on Unix
/// - a symbolic link at `path` is refused, never followed: the file is opened with
///   `O_NOFOLLOW`, so the check and the open are one step (no window for a link to appear in
///   between); the error names the link;
/// - the file is readable and writable by its owner only (mode 0600): a new file is created
///   with it, and an existing one gets it through the open file before anything is written.
fn open_private(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        let file = options.open(path).map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{} is a symbolic link: a transcript is not written through one",
                        path.display()
                    ),
                )
            } else {
                e
            }
        })?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_per_session() {
        let dir =
            std::env::temp_dir().join(format!("mcp-sansio-transcript-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.transcript");
        let sink = TranscriptFile::create(&path).unwrap();
        sink.write(7, "a");
        sink.write(8, "x");
        sink.write(7, "b");
        sink.finish(7);
        sink.finish(8);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ab");
        let second = dir.join("t.transcript.8");
        assert_eq!(std::fs::read_to_string(&second).unwrap(), "x");
        assert_eq!(sink.files(), vec![path, second]);
        assert_eq!(sink.error(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Text pieces in memory, per session.
    #[derive(Default)]
    struct Memory(Mutex<Vec<(u64, String, bool)>>);

    impl TranscriptSink for Memory {
        fn write(&self, session: u64, text: &str) {
            self.0
                .lock()
                .unwrap()
                .push((session, text.to_owned(), false));
        }
        fn finish(&self, session: u64) {
            self.0.lock().unwrap().push((session, String::new(), true));
        }
    }

    #[test]
    fn an_http2_recording_is_written_as_it_goes_and_is_one_transcript() {
        use mcp_sansio::mux::H2Socket;
        fn is_send<T: Send>(_: &T) {}

        let config = Config::new("https://h.example/mcp")
            .unwrap()
            .with_bearer_token("tok-XYZ");
        let h2 = H2Config::from_budgets(&config.budgets);
        let sink = Arc::new(Memory::default());
        let mut rec = H2Recording::new(&config, &h2, "https", Instant::ZERO, sink.clone(), 3);
        is_send(&rec);
        let mut socket = H2Socket::new(Instant::ZERO, h2.clone(), "https");
        rec.recorder().socket_opened(Instant::ZERO);
        let preface = socket.poll_transmit(Instant::ZERO).unwrap();
        rec.recorder().wrote(Instant::ZERO, &preface);
        rec.flush();
        let t1 = Instant::from_millis(4);
        rec.recorder()
            .read(t1, b"\x00\x00\x00\x04\x00\x00\x00\x00\x00");
        rec.recorder().eof(t1);
        drop(rec);
        let pieces = sink.0.lock().unwrap().clone();
        assert_eq!(pieces.len(), 3, "two pieces, then the end");
        assert!(pieces.iter().all(|(s, _, _)| *s == 3));
        assert!(pieces[2].2);
        let text: String = pieces.iter().map(|(_, t, _)| t.as_str()).collect();
        assert!(!text.contains("tok-XYZ"));
        let t = crate::Transcript::parse(&text).unwrap();
        assert_eq!(
            t.config.http2.as_ref().map(|s| s.scheme.as_str()),
            Some("https")
        );
        assert_eq!(t.h2_writes(), vec![(1, preface)]);
        assert_eq!(t.entries.len(), 4);
    }

    #[test]
    fn unwritable_path_is_reported_at_once() {
        assert!(TranscriptFile::create("/nonexistent-dir/x/t.transcript").is_err());
    }
}
