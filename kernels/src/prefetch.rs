//! Software prefetch of one cache line, per architecture.

/// Hints the CPU to bring the cache line holding `entry` into all cache levels.
#[inline(always)]
pub(crate) fn entry<T>(entry: &T) {
    let p: *const T = entry;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86_64 baseline; a prefetch is a hint that never faults and
    // changes no architectural state.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` is a hint: it never faults, reads no value into a register and writes
    // nothing; the address is a live reference anyway.
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}
