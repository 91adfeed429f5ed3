//! The row-block checks: a block's kernels against the row kernels, row by row, bit for bit.

use proptest::prelude::*;
use sparselin_kernels::{KernelSet, RowBlock, Values, dispatch, sparse};

use super::Rng;

/// Rows of random lengths over `n` weights, behind `lead` entries that belong to no row (a
/// block cut from the middle of a matrix: its offsets do not start at 0). `shape` 0: a third
/// of the coefficients are 0; 1: none is (the x86 paths' runs of short rows grow to their
/// limit); 2: none is, and about one row in 16 is up to ten times the longest (a row too long
/// for a run between short ones); 3: about one in 16 is 0 (few enough that the x86 paths keep
/// their runs, which each zero ends). Blocks of over 256 rows span the x86 paths' segments,
/// each of which chooses between runs and single rows.
pub struct Block {
    pub offsets: Vec<u64>,
    pub idx: Vec<u32>,
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    pub w: Vec<f64>,
    pub coef: Vec<f64>,
}

impl Block {
    pub fn new(seed: u64, rows: usize, longest: usize, n: usize, lead: usize, shape: u8) -> Block {
        let mut rng = Rng::new(seed);
        let mut idx: Vec<u32> = (0..lead).map(|_| rng.below(n) as u32).collect();
        let mut offsets = vec![lead as u64];
        for _ in 0..rows {
            let spike = shape == 2 && rng.below(16) == 0;
            let len = rng
                .below(if spike { 10 * longest } else { longest } + 1)
                .min(n);
            let mut row: Vec<u32> = (0..n as u32).collect();
            for k in 0..len {
                let pick = k + rng.below(n - k);
                row.swap(k, pick);
            }
            row.truncate(len);
            row.sort_unstable();
            idx.extend(row);
            offsets.push(idx.len() as u64);
        }
        let f32s = idx.iter().map(|_| rng.magnitude(3) as f32).collect();
        let f64s = idx.iter().map(|_| rng.magnitude(3)).collect();
        let w = (0..n).map(|_| rng.magnitude(2)).collect();
        // Rows with a coefficient of 0 are skipped.
        let coef = (0..rows)
            .map(|_| {
                let zero = match shape {
                    0 => rng.below(3) == 0,
                    3 => rng.below(16) == 0,
                    _ => false,
                };
                if zero { 0.0 } else { rng.magnitude(2) }
            })
            .collect();
        Block {
            offsets,
            idx,
            f32s,
            f64s,
            w,
            coef,
        }
    }

    pub fn values(&self, kind: u8) -> Values<'_> {
        match kind % 3 {
            0 => Values::Ones,
            1 => Values::F32(&self.f32s),
            _ => Values::F64(&self.f64s),
        }
    }

    pub fn rows(&self, kind: u8) -> RowBlock<'_> {
        RowBlock::new(&self.offsets, (&self.idx).into(), self.values(kind))
    }

    /// Row r's indices and values.
    pub fn row(&self, r: usize, kind: u8) -> (&[u32], Values<'_>) {
        let range = self.offsets[r] as usize..self.offsets[r + 1] as usize;
        (&self.idx[range.clone()], self.values(kind).slice(range))
    }
}

pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// On `set` (or the dispatched path, `None`): the block kernels against the row kernels.
pub fn check_row_block(
    block: &Block,
    kind: u8,
    set: Option<&KernelSet>,
) -> Result<(), TestCaseError> {
    let rows = block.rows(kind);
    let selected = dispatch::selected();
    let set_or_selected = set.unwrap_or(selected);
    let mut got = vec![f64::NAN; rows.len()];
    match set {
        Some(set) => set.dot_rows(&block.w, rows, &mut got),
        None => sparse::dot_rows(&block.w, rows, &mut got),
    }
    let want: Vec<f64> = (0..rows.len())
        .map(|r| {
            let (idx, val) = block.row(r, kind);
            set_or_selected.dot(&block.w, idx, val)
        })
        .collect();
    prop_assert_eq!(
        bits(&got),
        bits(&want),
        "{} dot_rows",
        set_or_selected.isa()
    );

    let mut got = block.w.clone();
    match set {
        Some(set) => set.axpy_rows(&block.coef, rows, &mut got),
        None => sparse::axpy_rows(&block.coef, rows, &mut got),
    }
    let mut want = block.w.clone();
    for (r, &a) in block.coef.iter().enumerate() {
        if a != 0.0 {
            let (idx, val) = block.row(r, kind);
            set_or_selected.axpy(a, idx, val, &mut want);
        }
    }
    prop_assert_eq!(
        bits(&got),
        bits(&want),
        "{} axpy_rows",
        set_or_selected.isa()
    );
    Ok(())
}

/// The proptest strategy of [`check_every_path`]'s arguments: seed, rows, longest row,
/// weights, entries before the first row, value kind, shape ([`Block::new`]).
pub fn block_cases() -> impl Strategy<Value = (u64, usize, usize, usize, usize, u8, u8)> {
    (
        any::<u64>(),
        prop_oneof![0usize..60, 250usize..700],
        prop_oneof![0usize..20, 0usize..200],
        1usize..500,
        0usize..9,
        0u8..3,
        0u8..4,
    )
}

/// [`check_row_block`] on every path this CPU has and the dispatched one, for a block built
/// from `case` ([`block_cases`]); and a sub-block's dots are the block's.
pub fn check_every_path(
    (seed, rows, longest, n, lead, kind, shape): (u64, usize, usize, usize, usize, u8, u8),
) -> Result<(), TestCaseError> {
    let block = Block::new(seed, rows, longest, n, lead, shape);
    for set in KernelSet::available() {
        check_row_block(&block, kind, Some(set))?;
    }
    check_row_block(&block, kind, None)?;
    if rows >= 2 {
        let part = block.rows(kind).rows(1..rows - 1);
        let mut whole = vec![0.0; rows];
        let mut some = vec![0.0; rows - 2];
        sparse::dot_rows(&block.w, block.rows(kind), &mut whole);
        sparse::dot_rows(&block.w, part, &mut some);
        prop_assert_eq!(bits(&some), bits(&whole[1..rows - 1]));
    }
    Ok(())
}
