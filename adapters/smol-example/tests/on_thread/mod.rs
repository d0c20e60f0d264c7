//! `.block()` on any future: runs it to its end on the test's thread (the smol example's tasks
//! run on smol's global executor), for the shared tests that apply it to futures only.

use std::future::Future;

/// `.block()`: the future's output.
pub trait Block: Future + Sized {
    fn block(self) -> Self::Output {
        smol::block_on(self)
    }
}

impl<F: Future> Block for F {}
