//! What the soak measures of its own process, from `/proc/self` (Linux).

use std::time::{Duration, Instant};

/// Open file descriptors of this process (`/proc/self/fd`, less the one reading it).
pub fn open_fds() -> usize {
    match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir.count().saturating_sub(1),
        Err(e) => panic!("cannot list /proc/self/fd: {e}"),
    }
}

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// Resident memory now, KiB.
pub fn rss_kib() -> u64 {
    status_kib("VmRSS")
}

/// Peak resident memory of the process so far (its high-water mark), KiB.
pub fn peak_rss_kib() -> u64 {
    status_kib("VmHWM")
}

/// Gives the memory the allocator holds free back to the system, where the allocator can
/// (glibc's `malloc_trim`): after the large catalogue the plans are taken from is dropped, the
/// resident memory is then the process's own again, not the allocator's free heap.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: `malloc_trim` only releases free memory of glibc's heap; it takes no pointer
        // and is safe to call at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Resets the peak resident memory ([`peak_rss_kib`]) to the resident memory now (writing `5`
/// to `/proc/self/clear_refs`, Linux 4.0 and later).
pub fn reset_peak_rss() {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak RSS");
}

/// Waits (polling every 20 ms, at most `within`) until the process has `fds` descriptors open;
/// returns the count last seen and how long it took.
pub fn settle_fds(fds: usize, within: Duration) -> (usize, Duration) {
    let start = Instant::now();
    loop {
        let now = open_fds();
        if now == fds || start.elapsed() >= within {
            return (now, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
