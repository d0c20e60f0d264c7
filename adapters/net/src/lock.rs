//! One way to take a lock, for every module that shares state behind a mutex.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, recovering the data of a poisoned lock: the pool and the hints stay consistent
/// even if a holder panicked, since every update is a single insert or removal.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
