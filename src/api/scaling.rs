//! Features scaled before training, as `sparselin train --scale max-abs` scales them: each
//! divided by the power of two at or above its largest |value|
//! ([`crate::data::column_scales`]). Train on the scaled set; [`Model::of_original_columns`]
//! then gives the model of the unscaled features, exactly, which scores unscaled data and
//! keeps the scales for its objective.
//!
//! ```
//! use std::path::Path;
//! use sparselin::api::{self, Learner, Loss, Trainer};
//! use sparselin::data::ValueVec;
//! use sparselin::dist::Local;
//!
//! // A count in the hundreds and a rate in the thousandths.
//! let data = api::from_csr(
//!     vec![1.0, -1.0, 1.0, -1.0],
//!     vec![0, 2, 4, 6, 8],
//!     vec![0, 1, 0, 1, 0, 1, 0, 1],
//!     ValueVec::F64(vec![700.0, 0.001, 120.0, 0.004, 650.0, 0.0015, 90.0, 0.003]),
//!     2,
//! )?;
//! let scales = api::max_abs_scales(&data, &Local)?;
//! assert_eq!(scales.exponents(), [10, -7]);
//! let scaled = api::scaled(data, &scales, Path::new("(rows)"))?;
//! let trainer = Trainer::new(Learner::Batch("lbfgs".parse()?)).loss(Loss::Log).lambda(1e-3);
//! let model = trainer.train(&scaled)?.of_original_columns(scales);
//! let unscaled = api::from_csr(vec![1.0], vec![0, 2], vec![0, 1], ValueVec::F64(vec![500.0, 0.001]), 2)?;
//! assert_eq!(api::predict(&model, &unscaled), [1.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use super::{Error, ExampleSet, Examples};
use crate::data::column_scales::{ColumnScales, column_max_abs};
use crate::dist::Reducer;

#[cfg(doc)]
use super::Model;

/// The scales of `data`'s features, in original feature ids: each the power of two at or
/// above the feature's largest |value| over the rows of every rank of `reducer` (`data`
/// being this rank's share; [`crate::dist::Local`] for one process).
pub fn max_abs_scales(data: &ExampleSet, reducer: &dyn Reducer) -> Result<ColumnScales, Error> {
    let mut max_abs = column_max_abs(data)?;
    reducer.max(&mut max_abs);
    let scales = ColumnScales::from_max_abs(&max_abs)?;
    Ok(scales.to_original(data.feature_permutation())?)
}

/// `data` with each feature divided by its scale (`scales` in original feature ids, as
/// [`max_abs_scales`] gives them and models keep them; a feature they lack is left as it
/// is): a dataset's values copied into memory, a text set's replaced. An error names the set
/// (`path` for text) if a scaled value overflows, as scales of other data can make it.
pub fn scaled(data: ExampleSet, scales: &ColumnScales, path: &Path) -> Result<ExampleSet, Error> {
    let in_columns = scales.in_columns(data.n_features(), data.feature_permutation())?;
    if in_columns.is_identity() {
        return Ok(data);
    }
    Ok(data.scaled(&in_columns, path)?)
}
