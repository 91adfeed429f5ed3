//! Macros that stamp a row kernel out once per value kind ([`crate::Values`]) inside an ISA
//! module. The module must define `Ones`, `F32` and `F64` row-value types (constructed as
//! `Ones`, `F32(ptr)`, `F64(ptr)`) and import `Values`.

/// Instantiates a row kernel body for the three value kinds, each compiled with the target
/// features named first, and a dispatcher over [`Values`].
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
        unsafe fn $name($($arg: $ty,)* val: Values<'_>) $(-> $ret)? {
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
                    Values::Ones => ones($($arg),*),
                    Values::F32(v) => f32s($($arg,)* v),
                    Values::F64(v) => f64s($($arg,)* v),
                }
            }
        }
    };
}
pub(crate) use per_value_kind;

/// Raw-table adapter: the table takes the values before the weights.
macro_rules! table_adapters {
    ($axpy_kinds:ident, $axpy2_kinds:ident) => {
        /// Raw-table signature for the axpy kernel.
        unsafe fn axpy(a: f64, idx: &[u32], val: Values<'_>, w: &mut [f64]) {
            // SAFETY: same contract.
            unsafe { $axpy_kinds(a, idx, w, val) }
        }

        /// Raw-table signature for the fused pair kernel.
        unsafe fn axpy2(a: f64, b: f64, idx: &[u32], val: Values<'_>, vu: &mut [[f64; 2]]) {
            // SAFETY: same contract.
            unsafe { $axpy2_kinds(a, b, idx, vu, val) }
        }
    };
}
pub(crate) use table_adapters;
