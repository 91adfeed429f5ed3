//! x86_64 kernel paths: AVX2 + FMA and AVX-512 (F and VL), each in its own module, plus the
//! pieces they share (reading a row's values, stamping a kernel out per value kind, the updates,
//! and AdaGrad's kernels in `adagrad`).

use core::arch::x86_64::*;

use crate::row_block::StreamAhead;

mod adagrad;
pub(crate) mod avx2;
pub(crate) mod avx512;

/// The values of a row, read four or eight at a time or one at a time.
///
/// Contract of the methods: the CPU has AVX2 (AVX-512F and VL for `load8` and
/// `load8_masked`), and `k` (up to `k + 3` for `load4`, `k + 7` for `load8`, `k + j` for each
/// bit j set in the mask of `load8_masked`) is a position of the row the pointer addresses;
/// for `skip`, a position or the row's end. `load8_masked`'s k alone may lie before the row
/// (wrapping: a row's end − 8 when it is shorter), so long as the set lanes are in it.
pub(crate) trait RowValues: Copy {
    unsafe fn load4(self, k: usize) -> __m256d;
    unsafe fn load8(self, k: usize) -> __m512d;
    /// Lane j holds the value at k + j where bit j of `mask` is set, 0 elsewhere; positions
    /// masked out are not read (AVX-512 masked loads do not fault on them), and the load
    /// spans only the eight positions from k.
    unsafe fn load8_masked(self, k: usize, mask: __mmask8) -> __m512d;
    unsafe fn get(self, k: usize) -> f64;
    /// The values from position k on (a row block's row k starts there).
    unsafe fn skip(self, k: usize) -> Self;
}

/// Binary row: every value is 1.0.
#[derive(Clone, Copy)]
pub(crate) struct Ones;

/// Values stored as `f32`, widened exactly to `f64`.
#[derive(Clone, Copy)]
pub(crate) struct F32(pub(crate) *const f32);

/// Values stored as `f64`.
#[derive(Clone, Copy)]
pub(crate) struct F64(pub(crate) *const f64);

impl RowValues for Ones {
    #[inline(always)]
    unsafe fn load4(self, _k: usize) -> __m256d {
        // SAFETY: the caller runs on a CPU with AVX2 (trait contract).
        unsafe { _mm256_set1_pd(1.0) }
    }
    #[inline(always)]
    unsafe fn load8(self, _k: usize) -> __m512d {
        // SAFETY: the caller runs on a CPU with AVX-512F (trait contract).
        unsafe { _mm512_set1_pd(1.0) }
    }
    #[inline(always)]
    unsafe fn load8_masked(self, _k: usize, mask: __mmask8) -> __m512d {
        // SAFETY: the caller runs on a CPU with AVX-512F (trait contract).
        unsafe { _mm512_maskz_mov_pd(mask, _mm512_set1_pd(1.0)) }
    }
    #[inline(always)]
    unsafe fn get(self, _k: usize) -> f64 {
        1.0
    }
    #[inline(always)]
    unsafe fn skip(self, _k: usize) -> Self {
        self
    }
}

impl RowValues for F32 {
    #[inline(always)]
    unsafe fn load4(self, k: usize) -> __m256d {
        // SAFETY: positions k..k+4 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm256_cvtps_pd(_mm_loadu_ps(self.0.add(k))) }
    }
    #[inline(always)]
    unsafe fn load8(self, k: usize) -> __m512d {
        // SAFETY: positions k..k+8 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm512_cvtps_pd(_mm256_loadu_ps(self.0.add(k))) }
    }
    #[inline(always)]
    unsafe fn load8_masked(self, k: usize, mask: __mmask8) -> __m512d {
        // SAFETY: the lanes of set mask bits are positions of the row (trait contract), k
        // offset with wrapping arithmetic as it may lie before the row; the masked-out lanes
        // are neither read nor faulted on.
        unsafe {
            let v = _mm256_maskz_loadu_ps(mask, self.0.wrapping_add(k));
            _mm512_cvtps_pd(v)
        }
    }
    #[inline(always)]
    unsafe fn get(self, k: usize) -> f64 {
        // SAFETY: position k is in the row (trait contract).
        f64::from(unsafe { *self.0.add(k) })
    }
    #[inline(always)]
    unsafe fn skip(self, k: usize) -> Self {
        // SAFETY: k is a position of the row or its end (trait contract).
        F32(unsafe { self.0.add(k) })
    }
}

impl RowValues for F64 {
    #[inline(always)]
    unsafe fn load4(self, k: usize) -> __m256d {
        // SAFETY: positions k..k+4 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm256_loadu_pd(self.0.add(k)) }
    }
    #[inline(always)]
    unsafe fn load8(self, k: usize) -> __m512d {
        // SAFETY: positions k..k+8 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm512_loadu_pd(self.0.add(k)) }
    }
    #[inline(always)]
    unsafe fn load8_masked(self, k: usize, mask: __mmask8) -> __m512d {
        // SAFETY: the lanes of set mask bits are positions of the row (trait contract), k
        // offset with wrapping arithmetic as it may lie before the row; the masked-out lanes
        // are neither read nor faulted on.
        unsafe { _mm512_maskz_loadu_pd(mask, self.0.wrapping_add(k)) }
    }
    #[inline(always)]
    unsafe fn get(self, k: usize) -> f64 {
        // SAFETY: position k is in the row (trait contract).
        unsafe { *self.0.add(k) }
    }
    #[inline(always)]
    unsafe fn skip(self, k: usize) -> Self {
        // SAFETY: k is a position of the row or its end (trait contract).
        F64(unsafe { self.0.add(k) })
    }
}

/// Sum of the four lanes.
///
/// Contract: AVX2 present.
#[inline(always)]
unsafe fn hsum(v: __m256d) -> f64 {
    // SAFETY: AVX2 is present (contract); register operations only.
    unsafe {
        let s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
        _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)))
    }
}

/// Positions k..k+4 of a row as two 8-byte loads instead of four 4-byte ones, leaving the load
/// ports to the weights (x86_64 is little-endian: the low half of each load is the first).
///
/// Contract: positions k..k+4 are in the row `ip` points to.
#[inline(always)]
unsafe fn index_words(ip: *const u32, k: usize) -> [u64; 2] {
    // SAFETY: the two unaligned 8-byte loads cover positions k..k+4, in the row by contract.
    unsafe {
        [
            ip.add(k).cast::<u64>().read_unaligned(),
            ip.add(k + 2).cast::<u64>().read_unaligned(),
        ]
    }
}

/// The two indices each word of [`index_words`] holds, in row order.
#[inline(always)]
fn split([low, high]: [u64; 2]) -> [usize; 4] {
    [
        low as u32 as usize,
        (low >> 32) as usize,
        high as u32 as usize,
        (high >> 32) as usize,
    ]
}

/// Indices k..k+4 of a row ([`index_words`]).
///
/// Contract: positions k..k+4 are in the row `ip` points to.
#[inline(always)]
unsafe fn four_indices(ip: *const u32, k: usize) -> [usize; 4] {
    // SAFETY: the contract is `index_words`'.
    split(unsafe { index_words(ip, k) })
}

/// The multiplier of each entry of an update: one for the whole row (`f64`), or one per entry
/// ([`PerEntry`]).
pub(crate) trait Coefficients: Copy {
    /// The multiplier of position k.
    ///
    /// Contract: k is a position of the row.
    unsafe fn at(self, k: usize) -> f64;
}

impl Coefficients for f64 {
    #[inline(always)]
    unsafe fn at(self, _k: usize) -> f64 {
        self
    }
}

/// One coefficient per entry, the row's first at the pointer.
#[derive(Clone, Copy)]
pub(crate) struct PerEntry(pub(crate) *const f64);

impl Coefficients for PerEntry {
    #[inline(always)]
    unsafe fn at(self, k: usize) -> f64 {
        // SAFETY: position k is in the row (trait contract), which has a coefficient per entry.
        unsafe { *self.0.add(k) }
    }
}

/// w[idx[k]] += a_k·val[k] (a_k = a, or a's entry k: [`Coefficients`]), shared by the AVX2 and
/// AVX-512 paths: one weight at a time, one fused multiply-add per weight in row order (the
/// scalar kernel rounds the product first, so the two differ within the crate's error bound).
/// Indices ([`four_indices`]) and values are read four at a time, which leaves the load ports
/// to the weights (0.74–0.90× the time of one index and one value load per weight: PERF.md
/// `## Kernels`). AVX-512 has a scatter, but gathering eight weights and scattering them back
/// measured slower than these single updates on every host, 1.65–2.55× on AMD Zen 4 and about
/// 1.1× on an Intel Xeon (PERF.md `## Kernels`).
///
/// Contract: AVX2 and FMA present; `val` (and `a`, if per entry) has `idx.len()` values;
/// every index is below the length of the array `w` points to.
#[inline(always)]
pub(crate) unsafe fn axpy_body<R: RowValues, C: Coefficients>(
    a: C,
    idx: &[u32],
    val: R,
    w: *mut f64,
) {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX2 and FMA are present (contract). Index loads and `load4` cover positions
    // k..k+4 with k + 4 <= quads <= n, and the tail's positions k < n, all inside the row;
    // every weight access is w[idx[k]], in bounds by contract.
    unsafe {
        let update = |k: usize, i: usize, x: f64| {
            let p = w.add(i);
            *p = a.at(k).mul_add(x, *p);
        };
        let mut k = 0;
        // As in `axpy2_body`: `k < quads` keeps one loop counter live, not two.
        let quads = n & !3;
        while k < quads {
            let [i0, i1, i2, i3] = four_indices(ip, k);
            let x = val.load4(k);
            let (x01, x23) = (_mm256_castpd256_pd128(x), _mm256_extractf128_pd::<1>(x));
            update(k, i0, _mm_cvtsd_f64(x01));
            update(k + 1, i1, _mm_cvtsd_f64(_mm_unpackhi_pd(x01, x01)));
            update(k + 2, i2, _mm_cvtsd_f64(x23));
            update(k + 3, i3, _mm_cvtsd_f64(_mm_unpackhi_pd(x23, x23)));
            k += 4;
        }
        while k < n {
            update(k, *ip.add(k) as usize, val.get(k));
            k += 1;
        }
    }
}

/// Rows that average at most this many entries are updated a run at a time ([`axpy_rows_body`]);
/// longer rows, one at a time, lose little to their loop's last branch. On rows of 40 entries
/// (a generated set) the runs measured 1.15× the row-by-row time, on rows of 24 0.88×, on 13
/// about 0.6× (PERF.md `## Kernels`, "Short rows in runs").
const RUN_MEAN_ROW: usize = 24;

/// Runs are taken where at most one coefficient in 8 is 0: each zero ends a run, and runs of
/// a row or two cost more than the rows alone (with every third coefficient 0, runs took 1.1×
/// the row-by-row time over 2^18 weights; PERF.md `## Kernels`, "Short rows in runs").
const fn runs_pay(rows: usize, zeros: usize) -> bool {
    8 * zeros <= rows
}

/// Rows whose coefficients and lengths decide together between runs and single rows: few
/// enough that their coefficients, counted first, are still in L1 when the rows are updated (a
/// count over a whole block beforehand cost 5–8% of the pass).
const SEGMENT_ROWS: usize = 256;

/// The most entries in a run: their coefficients, 2 KiB, stay in L1 between being written and
/// read.
const RUN_ENTRIES: usize = 256;

/// How many copies of a row's coefficient a run writes at once: enough for every row of up to
/// this many entries, the next row's copies overwriting the surplus, so that a short row's
/// length decides no branch.
const SPREAD: usize = 32;

/// w += Σ_r coef[r]·x_r over a block's rows in order, skipping rows whose coefficient is 0,
/// each row updated as [`axpy_body`] updates it, bit for bit. A loop over each row's entries
/// ends at a count that changes from row to row, and on rows of varying length mispredicts
/// its exit on most of them: a pass over spambase's rows (13 entries on average) took 1.6×
/// as long as over the same rows sorted by length. So where rows are short and few
/// coefficients 0 ([`RUN_MEAN_ROW`], [`runs_pay`], decided for each [`SEGMENT_ROWS`] rows), a
/// run of consecutive rows with non-zero coefficients, up to [`RUN_ENTRIES`] entries, is
/// updated as one sequence of entries, each with its row's coefficient from a buffer that
/// holds one per entry ([`PerEntry`]); a row with a zero coefficient ends a run and is
/// skipped, and a row too long for a run is updated alone.
///
/// Contract: AVX2 and FMA present; `val` reads the entries `idx` holds, `idx.len()` values
/// from its start; every index is below `w.len()`.
#[inline(always)]
pub(crate) unsafe fn axpy_rows_body<R: RowValues>(
    coef: &[f64],
    offsets: &[u64],
    idx: &[u32],
    val: R,
    w: &mut [f64],
    ahead: &mut StreamAhead,
) {
    let mut spread = [0.0; RUN_ENTRIES + SPREAD];
    for first in (0..coef.len()).step_by(SEGMENT_ROWS) {
        let segment = first..coef.len().min(first + SEGMENT_ROWS);
        let (coef, offsets) = (
            &coef[segment.clone()],
            &offsets[segment.start..=segment.end],
        );
        let entries = offsets[coef.len()].saturating_sub(offsets[0]) as usize;
        // SAFETY: the contract, which both callees share.
        unsafe {
            if entries <= RUN_MEAN_ROW * coef.len()
                && runs_pay(coef.len(), coef.iter().filter(|&&a| a == 0.0).count())
            {
                rows_in_runs(coef, offsets, idx, val, w, ahead, &mut spread);
            } else {
                rows_alone(coef, offsets, idx, val, w, ahead);
            }
        }
    }
}

/// [`axpy_rows_body`] one row at a time, rows of coefficient 0 skipped. (A function of its
/// own: inside the loop of runs, this loop kept its counters on the stack.)
///
/// Contract: [`axpy_rows_body`]'s.
#[target_feature(enable = "avx2,fma")]
unsafe fn rows_alone<R: RowValues>(
    coef: &[f64],
    offsets: &[u64],
    idx: &[u32],
    val: R,
    w: &mut [f64],
    ahead: &mut StreamAhead,
) {
    crate::row_macros::rows_one_at_a_time!(coef, offsets, idx, val, w, ahead);
}

/// [`axpy_rows_body`] a run of rows at a time, each run's coefficients copied into `spread`
/// one per entry; a row of coefficient 0 ends a run and is skipped, and a row too long for a
/// run is updated alone.
///
/// Contract: [`axpy_rows_body`]'s.
#[target_feature(enable = "avx2,fma")]
unsafe fn rows_in_runs<R: RowValues>(
    coef: &[f64],
    offsets: &[u64],
    idx: &[u32],
    val: R,
    w: &mut [f64],
    ahead: &mut StreamAhead,
    spread: &mut [f64; RUN_ENTRIES + SPREAD],
) {
    let mut r = 0;
    while r < coef.len() {
        let start = offsets[r];
        let mut end = r;
        while end < coef.len() && coef[end] != 0.0 {
            let (from, to) = (offsets[end], offsets[end + 1]);
            assert!(from <= to, "row offsets out of order");
            let (s, e) = ((from - start) as usize, (to - start) as usize);
            if e > RUN_ENTRIES {
                break;
            }
            ahead.before(from..to);
            spread[s..s + SPREAD].copy_from_slice(&[coef[end]; SPREAD]);
            if e - s > SPREAD {
                spread[s + SPREAD..e].fill(coef[end]);
            }
            end += 1;
        }
        if end == r {
            // A row of coefficient 0 (skipped) or too long for a run.
            crate::row_macros::rows_one_at_a_time!(
                &coef[r..r + 1],
                &offsets[r..r + 2],
                idx,
                val,
                w,
                ahead
            );
            r += 1;
            continue;
        }
        let entries = &idx[start as usize..offsets[end] as usize];
        // SAFETY: AVX2 and FMA are present (contract); `entries` is a slice of `idx`, whose
        // values `val` reads from position `start` on; its indices are below `w.len()`
        // (contract); `spread` holds a coefficient for each of its entries.
        unsafe {
            let val = val.skip(start as usize);
            axpy_body(PerEntry(spread.as_ptr()), entries, val, w.as_mut_ptr());
        }
        r = end;
    }
}

/// The `f64` offsets 2·idx of the four `[v, u]` pairs whose indices `words` holds
/// ([`index_words`]). x86 addresses scale an index by at most 8, so a 16-byte stride costs an
/// instruction per index; NARROW, for at most 2^31 pairs, doubles each word whole before
/// splitting it, one instruction per word less than doubling the halves (PERF.md `## Kernels`,
/// session 26), and is exact only when every index is below 2^31.
#[inline(always)]
fn pair_offsets<const NARROW: bool>([low, high]: [u64; 2]) -> [usize; 4] {
    if NARROW {
        split([low << 1, high << 1])
    } else {
        split([low, high]).map(|i| 2 * i)
    }
}

/// vu[idx[k]] += [a, b]·val[k], shared by the AVX2 and AVX-512 paths (an AVX-512 scatter
/// cannot update a 16-byte pair in one access): indices are read four at a time
/// ([`pair_offsets`]), the values are widened four at a time, and
/// each pair is read and written as one 16-byte vector, in row order, so that the result is
/// that of fused multiply-adds on one pair at a time, bit for bit (the scalar kernel rounds
/// each product first, so it differs within the crate's error bound).
///
/// Contract: AVX2 and FMA present; `val` has `idx.len()` values; every index is below
/// `vu.len()`.
#[inline(always)]
pub(crate) unsafe fn axpy2_body<R: RowValues>(
    a: f64,
    b: f64,
    idx: &[u32],
    val: R,
    vu: &mut [[f64; 2]],
) {
    // SAFETY: the contract is `pair_updates`', with NARROW only where every index, being
    // below `vu.len()`, is below 2^31.
    unsafe {
        if vu.len() <= 1 << 31 {
            pair_updates::<R, true>(a, b, idx, val, vu.as_mut_ptr());
        } else {
            pair_updates::<R, false>(a, b, idx, val, vu.as_mut_ptr());
        }
    }
}

/// The loop of [`axpy2_body`].
///
/// Contract: AVX2 and FMA present; `val` has `idx.len()` values; every index is below the
/// number of pairs `vu` points to, and below 2^31 if NARROW.
#[inline(always)]
unsafe fn pair_updates<R: RowValues, const NARROW: bool>(
    a: f64,
    b: f64,
    idx: &[u32],
    val: R,
    vu: *mut [f64; 2],
) {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX2 and FMA are present (contract). Index loads and `load4` cover positions
    // k..k+4 with k + 4 <= quads <= n, and the tail's positions k < n, all inside the row;
    // every pair access is at `f64` offset 2·idx[k] (`pair_offsets`, exact under the NARROW
    // bound of the contract), pair idx[k] of `vu`, in bounds by contract, and the unaligned
    // 16-byte access covers exactly that pair.
    unsafe {
        let ab = _mm_setr_pd(a, b);
        let base = vu.cast::<f64>();
        let update = |offset: usize, x: __m128d| {
            let p = base.add(offset);
            _mm_storeu_pd(p, _mm_fmadd_pd(ab, x, _mm_loadu_pd(p)));
        };
        let mut k = 0;
        // `k < quads`, not `k + 4 <= n`: LLVM keeps both k and k + 4 live for the latter, two
        // instructions more per four updates.
        let quads = n & !3;
        while k < quads {
            let [i0, i1, i2, i3] = pair_offsets::<NARROW>(index_words(ip, k));
            let x = val.load4(k);
            let (low, high) = (_mm256_castpd256_pd128(x), _mm256_extractf128_pd::<1>(x));
            update(i0, _mm_unpacklo_pd(low, low));
            update(i1, _mm_unpackhi_pd(low, low));
            update(i2, _mm_unpacklo_pd(high, high));
            update(i3, _mm_unpackhi_pd(high, high));
            k += 4;
        }
        while k < n {
            update(2 * *ip.add(k) as usize, _mm_set1_pd(val.get(k)));
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pair_offsets;

    fn words(idx: [u32; 4]) -> [u64; 2] {
        let word = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
        [word(idx[0], idx[1]), word(idx[2], idx[3])]
    }

    #[test]
    fn pair_offsets_double_every_index_within_their_bound() {
        let doubled = |idx: [u32; 4]| idx.map(|i| 2 * i as usize);
        for idx in [
            [0, 1, 2, 3],
            [7, 0, (1 << 31) - 1, 1 << 30],
            [(1 << 31) - 1; 4],
        ] {
            assert_eq!(pair_offsets::<true>(words(idx)), doubled(idx));
            assert_eq!(pair_offsets::<false>(words(idx)), doubled(idx));
        }
        // Indices from 2^31 on: the wide form stays exact, the narrow one (not used there) not.
        let high = [u32::MAX, 1 << 31, 5, (1 << 31) + 3];
        assert_eq!(pair_offsets::<false>(words(high)), doubled(high));
        assert_ne!(pair_offsets::<true>(words(high)), doubled(high));
    }
}
