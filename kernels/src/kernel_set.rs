//! One instruction-set path's kernels behind a safe, checked interface.
//!
//! A [`KernelSet`] holds raw function pointers whose contracts (CPU feature present, lengths
//! equal, every index below the weight length) are established here, once per call, before
//! the raw kernel runs. The free functions in [`crate::sparse`] and [`crate::dense`] call the
//! set chosen by [`crate::dispatch`]; tests and benchmarks call a particular set directly.

use crate::adagrad::Weights;
use crate::dispatch::{Isa, IsaError};
use crate::math::Elementwise;
use crate::row_block::StreamAhead;
use crate::{BoundedIndices, RowBlock, Values};

/// Raw fused pair update: (a, b, idx, val, vu).
type Axpy2Fn = unsafe fn(f64, f64, &[u32], Values<'_>, &mut [[f64; 2]]);

/// Raw AdaGrad prediction: (weights, sums, centre, idx, val).
type AdagradDotFn = unsafe fn(Weights, &[[f64; 2]], Option<&[f64]>, &[u32], Values<'_>) -> f64;

/// Raw AdaGrad state update: (g, idx, val, sums).
type AdagradAccumulateFn = unsafe fn(f64, &[u32], Values<'_>, &mut [[f64; 2]]);

/// Raw averaged-iterate recovery: (alpha, h, vu, beta, xbar, out).
type RescaleFn = unsafe fn(f64, f64, &[[f64; 2]], f64, Option<&[f64]>, &mut [f64]);

/// Raw block dot: (weights, width, idx, val, accumulators).
type BlockDotFn = unsafe fn(&[f64], usize, &[u32], Values<'_>, &mut [f64]);

/// Raw block update: (coefficients, idx, val, weights).
type BlockAxpyFn = unsafe fn(&[f64], &[u32], Values<'_>, &mut [f64]);

/// Raw row-block kernel: (weights or coefficients, offsets, idx, outputs or weights, the
/// block's prefetch requests, val).
type RowsFn = unsafe fn(&[f64], &[u64], &[u32], &mut [f64], &mut StreamAhead, Values<'_>);

/// The raw kernels of one path.
///
/// Every function is `unsafe` with the same contract: the CPU supports the path's ISA; for
/// sparse kernels `val` has `idx.len()` entries (unless `Ones`) and every index is below the
/// length of the weight slice; for dense kernels the slices have equal lengths.
pub(crate) struct Raw {
    /// Largest index of a row (0 when empty); needs only the ISA.
    pub max_index: unsafe fn(&[u32]) -> u32,
    pub dot: unsafe fn(&[f64], &[u32], Values<'_>) -> f64,
    pub axpy: unsafe fn(f64, &[u32], Values<'_>, &mut [f64]),
    pub dot_first: unsafe fn(&[[f64; 2]], &[u32], Values<'_>) -> f64,
    pub axpy2: Axpy2Fn,
    /// Also: `centre`, where given, is as long as the pairs.
    pub adagrad_dot: AdagradDotFn,
    pub adagrad_accumulate: AdagradAccumulateFn,
    pub scale: unsafe fn(f64, &mut [f64]),
    pub axpby: unsafe fn(f64, &[f64], f64, &mut [f64]),
    pub dense_dot: unsafe fn(&[f64], &[f64]) -> f64,
    pub axpy_dot: unsafe fn(f64, &[f64], &mut [f64], &[f64]) -> f64,
    pub norm2: unsafe fn(&[f64]) -> f64,
    pub sum: unsafe fn(&[f64]) -> f64,
    pub rescale_average: RescaleFn,
    pub map: unsafe fn(Elementwise, &mut [f64]),
    pub softplus_and_logistic: unsafe fn(&mut [f64], &mut [f64]),
    pub block_dot: BlockDotFn,
    pub block_axpy: BlockAxpyFn,
    /// (w, offsets, idx, out, ahead, val); also panics on row offsets out of order or past
    /// `idx`.
    pub dot_rows: RowsFn,
    /// (coef, offsets, idx, w, ahead, val); also panics on row offsets out of order or past
    /// `idx`.
    pub axpy_rows: RowsFn,
}

/// The kernels of one instruction-set path, safe to call: every entry point checks its
/// arguments (value length, index bounds) and panics like slice indexing on bad input.
pub struct KernelSet {
    isa: Isa,
    raw: Raw,
}

impl KernelSet {
    /// Builds a set. Only the per-ISA modules call this, each with functions that need
    /// exactly `isa`; [`KernelSet::for_isa`] hands a set out only when the CPU has `isa`.
    pub(crate) const fn new(isa: Isa, raw: Raw) -> Self {
        KernelSet { isa, raw }
    }

    /// The set for `isa`, or an error if this CPU lacks it.
    pub fn for_isa(isa: Isa) -> Result<&'static KernelSet, IsaError> {
        if !isa.is_available() {
            return Err(IsaError::Unavailable(isa));
        }
        match isa {
            Isa::Scalar => Ok(&crate::scalar::SET),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => Ok(&crate::x86_64::avx2::SET),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => Ok(&crate::x86_64::avx512::SET),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => Ok(&crate::aarch64::neon::SET),
            #[allow(unreachable_patterns)]
            _ => Err(IsaError::Unavailable(isa)),
        }
    }

    /// Every set this CPU can run, scalar first.
    pub fn available() -> impl Iterator<Item = &'static KernelSet> {
        Isa::ALL
            .into_iter()
            .filter_map(|isa| KernelSet::for_isa(isa).ok())
    }

    /// The path these kernels run on.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// The largest index of a row, `None` when the row is empty.
    #[inline]
    pub fn max_index(&self, idx: &[u32]) -> Option<u32> {
        if idx.is_empty() {
            return None;
        }
        // SAFETY: `for_isa` hands out this set only when the CPU supports `self.isa`, and
        // `max_index` has no other precondition.
        Some(unsafe { (self.raw.max_index)(idx) })
    }

    /// `Σ_k w[idx[k]]·val[k]`. See [`crate::sparse::dot`].
    #[inline]
    pub fn dot<'a>(&self, w: &[f64], idx: impl Into<BoundedIndices<'a>>, val: Values<'_>) -> f64 {
        let idx = check_row(idx.into(), val, w.len());
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the weight length.
        unsafe { (self.raw.dot)(w, idx, val) }
    }

    /// `w[idx[k]] += a·val[k]`. See [`crate::sparse::axpy`].
    #[inline]
    pub fn axpy<'a>(
        &self,
        a: f64,
        idx: impl Into<BoundedIndices<'a>>,
        val: Values<'_>,
        w: &mut [f64],
    ) {
        let idx = check_row(idx.into(), val, w.len());
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the weight length.
        unsafe { (self.raw.axpy)(a, idx, val, w) }
    }

    /// `Σ_k vu[idx[k]][0]·val[k]`. See [`crate::sparse::dot_first`].
    #[inline]
    pub fn dot_first<'a>(
        &self,
        vu: &[[f64; 2]],
        idx: impl Into<BoundedIndices<'a>>,
        val: Values<'_>,
    ) -> f64 {
        let idx = check_row(idx.into(), val, vu.len());
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the weight length.
        unsafe { (self.raw.dot_first)(vu, idx, val) }
    }

    /// `vu[i][0] += a·x_i`, `vu[i][1] += b·x_i`. See [`crate::sparse::axpy2`].
    #[inline]
    pub fn axpy2<'a>(
        &self,
        a: f64,
        b: f64,
        idx: impl Into<BoundedIndices<'a>>,
        val: Values<'_>,
        vu: &mut [[f64; 2]],
    ) {
        let idx = check_row(idx.into(), val, vu.len());
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the weight length.
        unsafe { (self.raw.axpy2)(a, b, idx, val, vu) }
    }

    /// `Σ_k val[k]·weights.weight(sums[idx[k]], centre[idx[k]])`. See
    /// [`crate::adagrad::dot`].
    #[inline]
    pub fn adagrad_dot<'a>(
        &self,
        weights: Weights,
        sums: &[[f64; 2]],
        centre: Option<&[f64]>,
        idx: impl Into<BoundedIndices<'a>>,
        val: Values<'_>,
    ) -> f64 {
        if let Some(c) = centre {
            assert_eq!(
                c.len(),
                sums.len(),
                "adagrad_dot: centre and sums differ in length"
            );
        }
        let idx = check_row(idx.into(), val, sums.len());
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the number of pairs, and the centre is as long.
        unsafe { (self.raw.adagrad_dot)(weights, sums, centre, idx, val) }
    }

    /// `add_gradient(&mut sums[idx[k]], g·val[k])` for every k. See
    /// [`crate::adagrad::accumulate`].
    #[inline]
    pub fn adagrad_accumulate<'a>(
        &self,
        g: f64,
        idx: impl Into<BoundedIndices<'a>>,
        val: Values<'_>,
        sums: &mut [[f64; 2]],
    ) {
        let idx = check_row(idx.into(), val, sums.len());
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the number of pairs.
        unsafe { (self.raw.adagrad_accumulate)(g, idx, val, sums) }
    }

    /// x ← a·x. See [`crate::dense::scale`].
    #[inline]
    pub fn scale(&self, a: f64, x: &mut [f64]) {
        // SAFETY: the CPU has the ISA (`for_isa`); one slice, no length contract.
        unsafe { (self.raw.scale)(a, x) }
    }

    /// y ← a·x + b·y. See [`crate::dense::axpby`].
    #[inline]
    pub fn axpby(&self, a: f64, x: &[f64], b: f64, y: &mut [f64]) {
        assert_eq!(x.len(), y.len(), "axpby: lengths differ");
        // SAFETY: the CPU has the ISA (`for_isa`) and the lengths are equal.
        unsafe { (self.raw.axpby)(a, x, b, y) }
    }

    /// Σ x_i·y_i. See [`crate::dense::dot`].
    #[inline]
    pub fn dense_dot(&self, x: &[f64], y: &[f64]) -> f64 {
        assert_eq!(x.len(), y.len(), "dot: lengths differ");
        // SAFETY: the CPU has the ISA (`for_isa`) and the lengths are equal.
        unsafe { (self.raw.dense_dot)(x, y) }
    }

    /// y ← a·x + y, then ⟨z, y⟩. See [`crate::dense::axpy_dot`].
    #[inline]
    pub fn axpy_dot(&self, a: f64, x: &[f64], y: &mut [f64], z: &[f64]) -> f64 {
        assert_eq!(x.len(), y.len(), "axpy_dot: lengths differ");
        assert_eq!(z.len(), y.len(), "axpy_dot: lengths differ");
        // SAFETY: the CPU has the ISA (`for_isa`) and the lengths are equal.
        unsafe { (self.raw.axpy_dot)(a, x, y, z) }
    }

    /// Σ x_i². See [`crate::dense::norm2`].
    #[inline]
    pub fn norm2(&self, x: &[f64]) -> f64 {
        // SAFETY: the CPU has the ISA (`for_isa`); one slice, no length contract.
        unsafe { (self.raw.norm2)(x) }
    }

    /// Σ x_i. See [`crate::dense::sum`].
    #[inline]
    pub fn sum(&self, x: &[f64]) -> f64 {
        // SAFETY: the CPU has the ISA (`for_isa`); one slice, no length contract.
        unsafe { (self.raw.sum)(x) }
    }

    /// x_i ← f(x_i). See [`crate::dense::map`].
    #[inline]
    pub fn map(&self, f: Elementwise, x: &mut [f64]) {
        // SAFETY: the CPU has the ISA (`for_isa`); one slice, no length contract.
        unsafe { (self.raw.map)(f, x) }
    }

    /// t_i ← ln(1 + e^t_i), σ_i ← 1/(1 + e^−t_i). See [`crate::dense::softplus_and_logistic`].
    #[inline]
    pub fn softplus_and_logistic(&self, t: &mut [f64], sigma: &mut [f64]) {
        assert_eq!(
            t.len(),
            sigma.len(),
            "softplus_and_logistic: lengths differ"
        );
        // SAFETY: the CPU has the ISA (`for_isa`) and the lengths are equal.
        unsafe { (self.raw.softplus_and_logistic)(t, sigma) }
    }

    /// out_i = α·(h·v_i − u_i) + β·x̄_i. See [`crate::dense::rescale_average`].
    #[inline]
    pub fn rescale_average(
        &self,
        alpha: f64,
        h: f64,
        vu: &[[f64; 2]],
        beta: f64,
        xbar: Option<&[f64]>,
        out: &mut [f64],
    ) {
        assert_eq!(vu.len(), out.len(), "rescale_average: lengths differ");
        if let Some(m) = xbar {
            assert_eq!(m.len(), out.len(), "rescale_average: lengths differ");
        }
        // SAFETY: the CPU has the ISA (`for_isa`) and the lengths are equal.
        unsafe { (self.raw.rescale_average)(alpha, h, vu, beta, xbar, out) }
    }
}

impl KernelSet {
    /// `acc[c] += Σ_k w[idx[k]·B + c]·val[k]`, B = `width` ≥ `acc.len()`. See
    /// [`crate::sparse::block_dot`].
    #[inline]
    pub fn block_dot<'a>(
        &self,
        w: &[f64],
        width: usize,
        idx: impl Into<BoundedIndices<'a>>,
        val: Values<'_>,
        acc: &mut [f64],
    ) {
        assert!(
            acc.len() <= width,
            "block_dot: more lanes than the block's width"
        );
        let idx = check_row(idx.into(), val, blocks(w.len(), width));
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the number of whole blocks of `w`, each as wide as `acc`
        // at least.
        unsafe { (self.raw.block_dot)(w, width, idx, val, acc) }
    }

    /// `w[idx[k]·B + c] += coef[c]·val[k]`, B = `coef.len()`. See
    /// [`crate::sparse::block_axpy`].
    #[inline]
    pub fn block_axpy<'a>(
        &self,
        coef: &[f64],
        idx: impl Into<BoundedIndices<'a>>,
        val: Values<'_>,
        w: &mut [f64],
    ) {
        let idx = check_row(idx.into(), val, blocks(w.len(), coef.len()));
        // SAFETY: the CPU has the ISA (`for_isa`); `check_row` established the lengths and
        // that every index is below the number of whole blocks of `w`.
        unsafe { (self.raw.block_axpy)(coef, idx, val, w) }
    }
}

impl KernelSet {
    /// `out[r] = Σ_k w[idx[k]]·val[k]` over each row r of `rows`. See
    /// [`crate::sparse::dot_rows`].
    #[inline]
    pub fn dot_rows(&self, w: &[f64], rows: RowBlock<'_>, out: &mut [f64]) {
        assert_eq!(out.len(), rows.len(), "dot_rows: one output per row");
        let idx = rows.indices();
        idx.check_within(w.len());
        let mut ahead = StreamAhead::new(&rows);
        // SAFETY: the CPU has the ISA (`for_isa`); `RowBlock::new` established the value
        // length, `check_within` that every index is below the weight length; the kernel
        // checks each row's offsets itself.
        unsafe {
            (self.raw.dot_rows)(
                w,
                rows.offsets(),
                idx.as_slice(),
                out,
                &mut ahead,
                rows.values(),
            )
        }
    }

    /// `w += Σ_r coef[r]·x_r` over the rows of `rows` whose coefficient is not 0. See
    /// [`crate::sparse::axpy_rows`].
    #[inline]
    pub fn axpy_rows(&self, coef: &[f64], rows: RowBlock<'_>, w: &mut [f64]) {
        assert_eq!(coef.len(), rows.len(), "axpy_rows: one coefficient per row");
        let idx = rows.indices();
        idx.check_within(w.len());
        let mut ahead = StreamAhead::new(&rows);
        // SAFETY: as in `dot_rows`.
        unsafe {
            (self.raw.axpy_rows)(
                coef,
                rows.offsets(),
                idx.as_slice(),
                w,
                &mut ahead,
                rows.values(),
            )
        }
    }
}

/// The whole blocks of `width` entries in `len` (none of width 0, so that any index is out
/// of bounds there unless the row is empty).
fn blocks(len: usize, width: usize) -> usize {
    len.checked_div(width).unwrap_or(0)
}

impl std::fmt::Debug for KernelSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelSet").field("isa", &self.isa).finish()
    }
}

/// Panics unless `val` matches `idx` in length and the bound of `idx` fits weights of length
/// `len` (O(1): the bound was proven when `idx` was built). Returns the indices to run on.
#[inline]
pub(crate) fn check_row<'a>(idx: BoundedIndices<'a>, val: Values<'_>, len: usize) -> &'a [u32] {
    if let Some(n) = val.len() {
        assert_eq!(n, idx.len(), "index and value slices differ in length");
    }
    idx.check_within(len);
    idx.as_slice()
}
