//! Software prefetch of one cache line, per architecture.

/// Hints the CPU to bring the cache line holding `entry` into all cache levels.
#[inline(always)]
pub(crate) fn entry<T>(entry: &T) {
    let p: *const T = entry;
    address(p.cast());
}

/// Hints the CPU to bring the cache line holding address `p` into all cache levels.
///
/// Any address will do, including one past the end of an allocation or one that is not mapped
/// at all: the instruction neither reads memory into a register nor faults.
#[inline(always)]
pub(crate) fn address(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86_64 baseline; `prefetcht0` is a hint that never faults,
    // whatever the address (the architecture drops a prefetch it cannot serve), and changes no
    // architectural state.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` is a hint: it never faults, whatever the address, reads no value into a
    // register and writes nothing.
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}
