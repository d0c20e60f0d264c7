//! [`AuthRecording`]: an [`AuthRecorder`] bound to a [`TranscriptSink`].

use std::sync::Arc;

use crate::sink::TranscriptSink;

use super::*;

/// An [`AuthRecorder`] bound to a [`TranscriptSink`] as session `session`: what a runner holds
/// when recording is on. [`flush`](AuthRecording::flush) writes what was recorded since the
/// last flush; dropping it flushes and finishes the session.
pub struct AuthRecording {
    recorder: AuthRecorder,
    sink: Arc<dyn TranscriptSink>,
    session: u64,
}

impl std::fmt::Debug for AuthRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthRecording")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl AuthRecording {
    /// Records into `sink` as session `session`.
    pub fn new(recorder: AuthRecorder, sink: Arc<dyn TranscriptSink>, session: u64) -> Self {
        AuthRecording {
            recorder,
            sink,
            session,
        }
    }

    /// The recorder, to report to.
    pub fn recorder(&mut self) -> &mut AuthRecorder {
        &mut self.recorder
    }

    /// Writes what was recorded since the last flush.
    pub fn flush(&mut self) {
        let text = self.recorder.take_text();
        if !text.is_empty() {
            self.sink.write(self.session, &text);
        }
    }
}

impl Drop for AuthRecording {
    fn drop(&mut self) {
        self.flush();
        self.sink.finish(self.session);
    }
}
