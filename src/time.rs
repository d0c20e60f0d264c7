//! Time as the caller defines it.
//!
//! The core never reads a clock. Every input that can act carries `now`, an [`Instant`] on a
//! timeline the caller picks (typically "time since this process started", read from a monotonic
//! clock by an adapter, or a virtual clock in tests). Only differences between instants matter.

use core::fmt;
use core::ops::Add;
use core::time::Duration;

/// A point on the caller's timeline: a [`Duration`] since an epoch the caller chose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

impl Instant {
    /// The epoch of the timeline.
    pub const ZERO: Instant = Instant(Duration::ZERO);

    /// The instant `since_epoch` after the epoch.
    pub const fn from_duration(since_epoch: Duration) -> Self {
        Instant(since_epoch)
    }

    /// The instant `ms` milliseconds after the epoch.
    pub const fn from_millis(ms: u64) -> Self {
        Instant(Duration::from_millis(ms))
    }

    /// Time since the epoch.
    pub const fn as_duration(self) -> Duration {
        self.0
    }

    /// Time from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturates at the end of the timeline instead of overflowing.
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_add(rhs))
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t+{}ms", self.0.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_saturates_and_since_is_saturating() {
        let t = Instant::from_millis(5);
        assert_eq!(t + Duration::from_millis(10), Instant::from_millis(15));
        assert_eq!(
            Instant::from_duration(Duration::MAX) + Duration::from_secs(1),
            Instant::from_duration(Duration::MAX)
        );
        assert_eq!(t.saturating_since(Instant::from_millis(9)), Duration::ZERO);
        assert_eq!(
            Instant::from_millis(9).saturating_since(t),
            Duration::from_millis(4)
        );
    }
}
