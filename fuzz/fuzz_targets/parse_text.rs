//! The fast LIBSVM chunk parser must never panic, must agree with the reference parser, and
//! must produce rows that satisfy the CSR invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sparselin::data::chunk::parse_chunk;
use sparselin::data::libsvm::{self, ParseOptions, ValueType};
use sparselin::data::{CsrMatrix, ValueVec};

fuzz_target!(|data: &[u8]| {
    let zero_based = data.first().is_some_and(|b| b & 1 == 1);
    let fast = parse_chunk::<f64>(data, zero_based);
    if let Ok(rows) = &fast {
        let columns = rows.indices.iter().map(|&j| j as usize + 1).max().unwrap_or(0);
        CsrMatrix::new(
            rows.labels.clone(),
            rows.offsets.clone(),
            rows.indices.clone(),
            ValueVec::F64(rows.values.clone()),
            columns,
        )
        .expect("fast parser output violates CSR invariants");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let options = ParseOptions {
            zero_based,
            value_type: ValueType::F64,
            n_features: None,
        };
        let reference = libsvm::read(text.as_bytes(), "f", options);
        assert_eq!(reference.is_ok(), fast.is_ok(), "parsers disagree on {text:?}");
    }
});
