//! Runs an operation of the smol example to its end on the test's thread (its sockets' tasks run
//! on smol's global executor): what the shared tests append to each operation.

use std::future::Future;
use std::pin::Pin;

/// `.block()`: the operation's result.
pub trait Block {
    type Output;
    fn block(self) -> Self::Output;
}

impl<T> Block for Pin<Box<dyn Future<Output = T> + Send + '_>> {
    type Output = T;
    fn block(self) -> T {
        smol::block_on(self)
    }
}

/// The shared tests' helpers that are plain functions already ran.
macro_rules! ran {
    ($($t:ty),*) => {$(
        impl Block for $t {
            type Output = $t;
            fn block(self) -> $t {
                self
            }
        }
    )*};
}

ran!((), Vec<String>);
