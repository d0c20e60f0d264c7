//! A counting allocator for the hostile runners that drive the core on one thread: per-thread
//! counters, so that tests running in parallel threads do not see each other's allocations, and
//! counting only while switched on, so that the runner's own work is not counted.
//!
//! A test crate that uses it declares [`Counting`] its global allocator:
//! `#[global_allocator] static ALLOC: Counting = Counting;`.
#![allow(dead_code)]

use std::cell::Cell;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static CURRENT: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn count(delta: i64) {
    let _ = ON.try_with(|on| {
        if on.get() {
            let _ = CURRENT.try_with(|c| {
                let now = c.get() + delta;
                c.set(now);
                let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
            });
        }
    });
}

include!("forward_alloc.rs");

/// Switches counting this thread's allocations on or off.
pub fn meter(on: bool) {
    ON.with(|o| o.set(on));
}

/// Counts the allocations of this thread made by `f`.
pub fn counted<T>(f: impl FnOnce() -> T) -> T {
    meter(true);
    let t = f();
    meter(false);
    t
}

/// Starts counting from zero: nothing held, no peak.
pub fn reset() {
    CURRENT.with(|c| c.set(0));
    PEAK.with(|p| p.set(0));
}

/// The most this thread held at once, of what was counted since [`reset`].
pub fn peak() -> i64 {
    PEAK.with(Cell::get)
}
