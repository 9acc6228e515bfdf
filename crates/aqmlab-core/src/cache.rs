//! Software prefetch: asking the processor to bring memory into its cache without
//! waiting for it. With 10⁴ flows the packets, links and agents outgrow the cache, and
//! the engine fetches what the next event will touch while it runs the current one
//! (issue 15). A hint only: no effect on results, and none at all but on x86-64.

/// Fetches every cache line of `value`.
#[inline]
pub fn prefetch<T: ?Sized>(value: &T) {
    prefetch_first(value, std::mem::size_of_val(value));
}

/// Fetches the cache lines of the first `bytes` bytes of `value` (at most its size).
#[inline]
pub fn prefetch_first<T: ?Sized>(value: &T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let at = value as *const T as *const i8;
        for line in (0..bytes.min(std::mem::size_of_val(value))).step_by(64) {
            // SAFETY: a prefetch reads nothing the program sees and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(line)) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (value, bytes);
}
