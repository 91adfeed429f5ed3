//! sparselin: linear learning on large sparse data.
//!
//! * [`data`] — LIBSVM text parsing, binary CSR shards, datasets, the synthetic corpus generator.
//! * [`lao`] — attribute-efficient regression (AERR, AELR, AESVR) and full-information baselines.
//! * [`loss`] — the losses and their (sub)derivatives.
//!
//! The numeric kernels live in the `sparselin-kernels` crate, re-exported as [`kernels`].

pub mod data;
pub mod lao;
pub mod loss;

pub use sparselin_kernels as kernels;
