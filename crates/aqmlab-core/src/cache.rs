//! Software prefetch: asking the processor to bring memory into its cache without
//! waiting for it. With 10⁴ flows the packets, links and agents outgrow the cache, and
//! the engine fetches what the next event will touch while it runs the current one
//! (issue 15). A hint only: no effect on results, and none at all but on x86-64.
//!
//! Huge pages: with 10⁵ flows and more the engine's state is gigabytes, and nearly every
//! access to a flow's state misses the TLB as well as the cache (in a VM a miss walks two page
//! tables). Asking the kernel for 2 MiB pages for the large tables makes one TLB entry cover
//! what 512 did (issue 40). Hints as well: a kernel that refuses them changes nothing.

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

/// The size of a huge page (x86-64's 2 MiB).
const HUGE_PAGE: usize = 2 << 20;

/// Reserves room for `len` elements in `table` (nothing if the memory cannot be had: then it
/// grows as it would have) and asks the kernel to back the whole 2 MiB pages of that room with
/// huge pages as they are first touched (`madvise(MADV_HUGEPAGE)`; Linux only, and only for
/// several huge pages: a smaller table would gain little). Untouched room costs no memory.
pub fn reserve_in_huge_pages<T>(table: &mut Vec<T>, len: usize) {
    if table.try_reserve(len).is_ok() {
        let bytes = table.capacity() * std::mem::size_of::<T>();
        huge_page_advice(table.as_ptr() as usize, bytes, HugeAdvice::Advise);
    }
}

/// Moves `table`, already filled, into huge pages now ([`collapse_into_huge_pages`]).
pub fn collapse_table<T>(table: &[T]) {
    let range = table.as_ptr_range();
    collapse_into_huge_pages(range.start as usize, range.end as usize);
}

/// Moves what lies between `start` and `end` (addresses, e.g. of many small allocations made
/// one after another) into huge pages now (`madvise(MADV_COLLAPSE)`, Linux 6.1 and later): for
/// memory already touched, which [`reserve_in_huge_pages`] would leave in small pages.
pub fn collapse_into_huge_pages(start: usize, end: usize) {
    huge_page_advice(start, end.saturating_sub(start), HugeAdvice::Collapse);
}

#[derive(Clone, Copy)]
enum HugeAdvice {
    Advise,
    Collapse,
}

fn huge_page_advice(start: usize, bytes: usize, advice: HugeAdvice) {
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end < first + 4 * HUGE_PAGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // Not in the libc crate yet: include/uapi/asm-generic/mman-common.h.
        const MADV_COLLAPSE: libc::c_int = 25;
        let advice = match advice {
            HugeAdvice::Advise => libc::MADV_HUGEPAGE,
            HugeAdvice::Collapse => MADV_COLLAPSE,
        };
        // SAFETY: the range lies within memory the caller's allocations span, and this advice
        // changes how pages are backed, never what they hold. A refusal (a kernel without THP,
        // a range not all mapped) is ignored: a hint.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, advice) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = advice;
}
