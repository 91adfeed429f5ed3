//! sparselin: linear learning on large sparse data.
//!
//! * [`api`] — the front door: open data, configure a learner ([`api::Trainer`]), train,
//!   predict, save and load. Start here.
//! * [`batch`] — batch solvers: L-BFGS, subLBFGS, subgradient descent, plain BFGS (MATH.md §7).
//! * [`ffi`] — the C ABI (header `include/sparselin.h`); the only module allowed `unsafe`.
//! * [`dist`] — data-parallel training across processes: the [`dist::Reducer`] the batch
//!   solvers sum through, shard shares, model averaging (MPI behind the `mpi` feature).
//! * [`data`] — LIBSVM text parsing, binary CSR shards, datasets, the synthetic corpus generator.
//! * [`lao`] — attribute-efficient regression (AERR, AELR, AESVR) and full-information baselines.
//! * [`loss`] — the losses and their (sub)derivatives.
//! * [`online`] — SGD, ASGD and CASGD in O(k) per step, and their O(Tn) baselines.
//! * [`model`] — trained models: prediction and the model file.
//! * [`metrics`] — objective, error rate, AUC, precision/recall/F1, log loss, RMSE.
//! * [`output`] — output files written whole or not at all.
//! * [`memory`] — allocations sized by the feature count, failing with an error, not an abort.
//!
//! The numeric kernels live in the `sparselin-kernels` crate, re-exported as [`kernels`].

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod api;
pub mod batch;
pub mod data;
pub mod dist;
pub mod ffi;
pub mod lao;
pub mod loss;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod online;
pub mod output;

pub use sparselin_kernels as kernels;
