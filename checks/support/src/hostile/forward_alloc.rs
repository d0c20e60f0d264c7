// The counting allocator of the file that includes this one with `include!`: every call goes to
// the system allocator unchanged, and each change in the bytes held is told to `count(delta)`,
// which the including file defines (and decides there what counts). The test crate that counts
// declares it its global allocator (`#[global_allocator] static ALLOC: Counting = Counting;`).

/// The counting allocator: the system allocator, with every change in the bytes held counted.
pub struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; the wrapper only counts.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count(layout.size() as i64);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::GlobalAlloc::alloc(&std::alloc::System, layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        count(-(layout.size() as i64));
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::GlobalAlloc::dealloc(&std::alloc::System, ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        count(new_size as i64 - layout.size() as i64);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::GlobalAlloc::realloc(&std::alloc::System, ptr, layout, new_size) }
    }
}
