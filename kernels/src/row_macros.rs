//! Macros that stamp out what the instruction-set paths share, written once so that the paths
//! differ only in their row-kernel bodies and target features: the [`KernelSet`] table of a
//! path's kernels, a row kernel instantiated once per value kind ([`crate::Values`]), and the
//! dense kernels of [`crate::generic`] compiled for a path's target features.
//!
//! [`KernelSet`]: crate::KernelSet

/// The [`KernelSet`](crate::KernelSet) for `$isa` of the kernels the calling module defines
/// (or imports) under the names of the [`Raw`](crate::kernel_set::Raw) table's fields.
macro_rules! kernel_set {
    ($isa:ident) => {
        $crate::kernel_set::KernelSet::new(
            $crate::dispatch::Isa::$isa,
            $crate::kernel_set::Raw {
                max_index,
                dot,
                axpy,
                dot_first,
                axpy2,
                adagrad_dot,
                adagrad_accumulate,
                scale,
                axpby,
                dense_dot,
                axpy_dot,
                norm2,
                sum,
                rescale_average,
                map,
                softplus_and_logistic,
                block_dot,
                block_axpy,
                dot_rows,
                axpy_rows,
            },
        )
    };
}
pub(crate) use kernel_set;

/// Instantiates a row kernel body for the three value kinds, each compiled with the target
/// features named first, and a dispatcher over [`Values`](crate::Values). The calling module
/// must define `Ones`, `F32` and `F64` row-value types (constructed as `Ones`, `F32(ptr)`,
/// `F64(ptr)`).
macro_rules! per_value_kind {
    (
        $feat:literal,
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?,
        |$val:ident| $body:expr
    ) => {
        $(#[$doc])*
        ///
        /// Contract: the CPU has the module's target features, `val` as long as `idx`, indices
        /// in bounds.
        unsafe fn $name($($arg: $ty,)* val: $crate::Values<'_>) $(-> $ret)? {
            #[target_feature(enable = $feat)]
            unsafe fn ones($($arg: $ty),*) $(-> $ret)? {
                let $val = Ones;
                // SAFETY: forwarded contract of the enclosing kernel.
                unsafe { $body }
            }
            #[target_feature(enable = $feat)]
            unsafe fn f32s($($arg: $ty,)* v: &[f32]) $(-> $ret)? {
                let $val = F32(v.as_ptr());
                // SAFETY: forwarded contract of the enclosing kernel.
                unsafe { $body }
            }
            #[target_feature(enable = $feat)]
            unsafe fn f64s($($arg: $ty,)* v: &[f64]) $(-> $ret)? {
                let $val = F64(v.as_ptr());
                // SAFETY: forwarded contract of the enclosing kernel.
                unsafe { $body }
            }
            // SAFETY: the caller upholds the contract, which the variants share.
            unsafe {
                match val {
                    $crate::Values::Ones => ones($($arg),*),
                    $crate::Values::F32(v) => f32s($($arg,)* v),
                    $crate::Values::F64(v) => f64s($($arg,)* v),
                }
            }
        }
    };
}
pub(crate) use per_value_kind;

/// `w += Σ_r coef[r]·x_r` over a block's rows one row at a time, rows whose coefficient is 0
/// skipped, each row through the calling module's `axpy_body` after asking for the memory past
/// it: the row loop of the paths' `axpy_rows_body`. To be expanded inside an `unsafe fn` whose
/// contract is `axpy_rows_body`'s.
macro_rules! rows_one_at_a_time {
    ($coef:expr, $offsets:expr, $idx:expr, $val:expr, $w:expr, $ahead:expr) => {
        for (&a, ends) in $coef.iter().zip($offsets.windows(2)) {
            if a != 0.0 {
                let start = ends[0] as usize;
                let row = &$idx[start..ends[1] as usize];
                $ahead.before(ends[0]..ends[1]);
                // SAFETY: the enclosing function's contract: its target features are present,
                // `row` is a slice of the indices, whose values `val` reads from position
                // `start` on, and every index is below `w.len()`.
                unsafe { axpy_body(a, row, $val.skip(start), $w.as_mut_ptr()) };
            }
        }
    };
}
pub(crate) use rows_one_at_a_time;

/// A vectorized path's kernel set, `static SET`, for `Isa::$isa`, every kernel compiled with
/// the target features `$feat` (a `#[target_feature(enable = ...)]` string): the row kernels
/// around the calling module's bodies (the part that differs per ISA), and the dense kernels and
/// the index maximum from [`crate::generic`], which LLVM vectorizes for `$feat` once inlined
/// into the wrappers stamped out here.
///
/// The calling module defines, besides the row-value types of [`per_value_kind`], the bodies
/// - `dot_body::<R, SHIFT>(w: *const f64, idx: &[u32], val: R) -> f64`:
///   `Σ_k w[idx[k] << SHIFT]·val[k]` (SHIFT = 1 reads the first members of pairs);
/// - `axpy_body(a: f64, idx: &[u32], val: R, w: *mut f64)`: `w[idx[k]] += a·val[k]`;
/// - `axpy2_body(a: f64, b: f64, idx: &[u32], val: R, vu: &mut [[f64; 2]])`:
///   `vu[idx[k]] += [a, b]·val[k]`;
/// - `adagrad_dot_body(weights: Weights, sums: *const [f64; 2], centre: Option<*const f64>,
///   idx: &[u32], val: R) -> f64` and `adagrad_accumulate_body(g: f64, idx: &[u32], val: R,
///   sums: *mut [f64; 2])`: [`crate::adagrad::dot`] and [`crate::adagrad::accumulate`];
/// - `axpy_rows_body(coef: &[f64], offsets: &[u64], idx: &[u32], val: R, w: &mut [f64],
///   ahead: &mut StreamAhead)`: `w += Σ_r coef[r]·x_r` over a block's rows, each row updated
///   as `axpy_body` updates it and rows of coefficient 0 skipped;
///
/// each `unsafe` with the contract that the CPU has `$feat`, `val` has `idx.len()` values and
/// every index (shifted) is in bounds of the weights.
macro_rules! isa_path {
    ($(#[$doc:meta])* $isa:ident, $feat:literal) => {
        $(#[$doc])*
        pub(crate) static SET: $crate::kernel_set::KernelSet =
            $crate::row_macros::kernel_set!($isa);

        $crate::row_macros::per_value_kind!(
            $feat,
            /// Sparse dot against `w`.
            fn dot(w: &[f64], idx: &[u32]) -> f64,
            |v| dot_body::<_, 0>(w.as_ptr(), idx, v)
        );

        $crate::row_macros::per_value_kind!(
            $feat,
            /// Sparse dot against the first members of `vu`.
            fn dot_first(vu: &[[f64; 2]], idx: &[u32]) -> f64,
            |v| dot_body::<_, 1>(vu.as_ptr().cast::<f64>(), idx, v)
        );

        $crate::row_macros::per_value_kind!(
            $feat,
            /// Sparse axpy into `w`.
            fn axpy_kinds(a: f64, idx: &[u32], w: &mut [f64]),
            |v| axpy_body(a, idx, v, w.as_mut_ptr())
        );

        $crate::row_macros::per_value_kind!(
            $feat,
            /// Fused sparse update of interleaved pairs.
            fn axpy2_kinds(a: f64, b: f64, idx: &[u32], vu: &mut [[f64; 2]]),
            |v| axpy2_body(a, b, idx, v, vu)
        );

        $crate::row_macros::per_value_kind!(
            $feat,
            /// Prediction over AdaGrad's weights.
            fn adagrad_dot_kinds(
                weights: $crate::adagrad::Weights,
                sums: &[[f64; 2]],
                centre: Option<&[f64]>,
                idx: &[u32]
            ) -> f64,
            |v| adagrad_dot_body(weights, sums.as_ptr(), centre.map(<[f64]>::as_ptr), idx, v)
        );

        $crate::row_macros::per_value_kind!(
            $feat,
            /// Update of AdaGrad's state.
            fn adagrad_accumulate_kinds(g: f64, idx: &[u32], sums: &mut [[f64; 2]]),
            |v| adagrad_accumulate_body(g, idx, v, sums.as_mut_ptr())
        );

        $crate::row_macros::per_value_kind!(
            $feat,
            /// Sparse dots of a block's rows against `w`, one per entry of `out`, each the
            /// path's `dot` of that row. Each row is sliced from `idx` (a panic if its
            /// offsets are out of order or past the end), hence lies inside `val` too: the row
            /// body's contract.
            fn dot_rows(
                w: &[f64],
                offsets: &[u64],
                idx: &[u32],
                out: &mut [f64],
                ahead: &mut $crate::row_block::StreamAhead
            ),
            |v| for (o, ends) in out.iter_mut().zip(offsets.windows(2)) {
                let start = ends[0] as usize;
                let row = &idx[start..ends[1] as usize];
                ahead.before(ends[0]..ends[1]);
                *o = dot_body::<_, 0>(w.as_ptr(), row, v.skip(start));
            }
        );

        $crate::row_macros::per_value_kind!(
            $feat,
            /// `w += Σ_r coef[r]·x_r` over a block's rows in order, skipping rows whose
            /// coefficient is 0, each the path's `axpy` of that row (sliced as in `dot_rows`).
            fn axpy_rows(
                coef: &[f64],
                offsets: &[u64],
                idx: &[u32],
                w: &mut [f64],
                ahead: &mut $crate::row_block::StreamAhead
            ),
            |v| axpy_rows_body(coef, offsets, idx, v, w, ahead)
        );

        /// Raw-table signature for the axpy kernel (the table takes the values before the
        /// weights).
        unsafe fn axpy(a: f64, idx: &[u32], val: $crate::Values<'_>, w: &mut [f64]) {
            // SAFETY: same contract.
            unsafe { axpy_kinds(a, idx, w, val) }
        }

        /// Raw-table signature for the fused pair kernel.
        unsafe fn axpy2(
            a: f64,
            b: f64,
            idx: &[u32],
            val: $crate::Values<'_>,
            vu: &mut [[f64; 2]],
        ) {
            // SAFETY: same contract.
            unsafe { axpy2_kinds(a, b, idx, vu, val) }
        }

        /// Raw-table signature for the AdaGrad prediction.
        unsafe fn adagrad_dot(
            weights: $crate::adagrad::Weights,
            sums: &[[f64; 2]],
            centre: Option<&[f64]>,
            idx: &[u32],
            val: $crate::Values<'_>,
        ) -> f64 {
            // SAFETY: same contract.
            unsafe { adagrad_dot_kinds(weights, sums, centre, idx, val) }
        }

        /// Raw-table signature for the AdaGrad update.
        unsafe fn adagrad_accumulate(
            g: f64,
            idx: &[u32],
            val: $crate::Values<'_>,
            sums: &mut [[f64; 2]],
        ) {
            // SAFETY: same contract.
            unsafe { adagrad_accumulate_kinds(g, idx, sums, val) }
        }

        $crate::row_macros::isa_path!(
            @generic $feat,
            fn max_index(idx: &[u32]) -> u32;
            fn scale(a: f64, x: &mut [f64]);
            fn axpby(a: f64, x: &[f64], b: f64, y: &mut [f64]);
            fn dense_dot(x: &[f64], y: &[f64]) -> f64;
            fn axpy_dot(a: f64, x: &[f64], y: &mut [f64], z: &[f64]) -> f64;
            fn norm2(x: &[f64]) -> f64;
            fn sum(x: &[f64]) -> f64;
            fn rescale_average(
                alpha: f64,
                h: f64,
                vu: &[[f64; 2]],
                beta: f64,
                xbar: Option<&[f64]>,
                out: &mut [f64],
            );
            fn block_dot(
                w: &[f64],
                width: usize,
                idx: &[u32],
                val: $crate::Values<'_>,
                acc: &mut [f64],
            );
            fn block_axpy(coef: &[f64], idx: &[u32], val: $crate::Values<'_>, w: &mut [f64]);
            fn map(f: $crate::math::Elementwise, x: &mut [f64]);
            fn softplus_and_logistic(t: &mut [f64], sigma: &mut [f64]);
        );
    };
    (@generic $feat:literal, $(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        $(
            #[doc = concat!("[`crate::generic::", stringify!($name), "`] compiled for `", $feat, "`.")]
            #[target_feature(enable = $feat)]
            fn $name($($arg: $ty),*) $(-> $ret)? {
                $crate::generic::$name($($arg),*)
            }
        )*
    };
}
pub(crate) use isa_path;
