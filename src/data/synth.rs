//! A reproducible synthetic corpus shaped like text classification data (`sparselin gen`).
//!
//! Each row draws its length from a log-normal around the preset's mean, then draws feature
//! ids from a Zipf law over the columns (id 0 most frequent); a feature drawn c times gets
//! term frequency 1 + ln c, times an idf weight ln(1 + 1/(k̄·p_j)) from its Zipf probability
//! p_j — tf-idf-like values — and the row is L2-normalized. Labels come from a planted linear
//! model w* (standard normal weights): classification y = sign(w*·x + b) with each label
//! flipped with probability `label_noise` (b centers the margins so classes are balanced);
//! regression y = w*·x + σ·ε; K classes y = argmax_k (w*_k·x + b_k), one planted model per
//! class, each label replaced by another class with probability `label_noise`.
//!
//! Every row has its own generator, seeded from (seed, split, row index) with
//! `rand_xoshiro`, so the corpus is identical whatever the thread count or shard size, and
//! shards are produced one at a time: the corpus never needs to fit in memory.

use std::path::{Path, PathBuf};

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use sparselin_kernels::{BoundedIndices, Values};

use super::csr::Row;
use super::error::DataError;
use super::export::push_row;
use super::shard::{ShardParts, ValueKind};
use super::writer::{DatasetWriter, FinishOptions};
use crate::output::OutputFile;

/// Classification (±1 labels), regression (real labels) or classification into more classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Labels ±1 from the sign of the planted margin, with flips.
    Classification,
    /// Labels are the planted margin plus Gaussian noise.
    Regression,
    /// Labels 1..=K (K ≥ 3) of the class of highest planted margin, each replaced by another
    /// class, drawn uniformly, with probability `label_noise`: data for one-vs-rest training.
    Classes(u32),
}

impl Task {
    /// The planted models the task needs: one per class for [`Task::Classes`], else one.
    fn models(self) -> usize {
        match self {
            Task::Classes(k) => k as usize,
            _ => 1,
        }
    }
}

/// Everything that determines a corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct CorpusSpec {
    /// Training rows.
    pub train_rows: u64,
    /// Test rows.
    pub test_rows: u64,
    /// Columns.
    pub n_features: usize,
    /// Mean distinct non-zeros per row.
    pub mean_nnz: f64,
    /// Zipf exponent of the feature frequencies.
    pub zipf_exponent: f64,
    /// Classification or regression.
    pub task: Task,
    /// Classification: probability of flipping a label (of replacing it with another class).
    /// Regression: noise std-dev σ.
    pub label_noise: f64,
    /// Seed of every random draw.
    pub seed: u64,
    /// Rows per shard.
    pub rows_per_shard: usize,
}

/// The named presets of `sparselin gen`.
pub const PRESETS: [&str; 4] = ["small", "small-regression", "rcv1-like", "large"];

impl CorpusSpec {
    /// A named preset (see [`PRESETS`]), seed 1.
    pub fn preset(name: &str) -> Option<CorpusSpec> {
        let base = CorpusSpec {
            train_rows: 781_265,
            test_rows: 23_149,
            n_features: 47_236,
            mean_nnz: 76.0,
            zipf_exponent: 1.0,
            task: Task::Classification,
            label_noise: 0.05,
            seed: 1,
            rows_per_shard: 1 << 17,
        };
        let small = CorpusSpec {
            train_rows: 2_000,
            test_rows: 500,
            n_features: 1_000,
            mean_nnz: 20.0,
            rows_per_shard: 512,
            ..base.clone()
        };
        match name {
            "rcv1-like" => Some(base),
            "large" => Some(CorpusSpec {
                train_rows: 100_000_000,
                test_rows: 100_000,
                ..base
            }),
            "small" => Some(small),
            "small-regression" => Some(CorpusSpec {
                task: Task::Regression,
                label_noise: 0.1,
                ..small
            }),
            _ => None,
        }
    }
}

/// Which part of the corpus a row belongs to (part of its seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Training rows.
    Train,
    /// Test rows.
    Test,
}

/// Precomputed tables of a spec: Zipf CDF, idf weights, planted models.
#[derive(Clone, Debug)]
pub struct Generator {
    spec: CorpusSpec,
    cdf: Vec<f64>,
    idf: Vec<f64>,
    /// One model of `cdf.len()` weights per class of [`Task::Classes`], else one, in a row.
    planted: Vec<f64>,
    /// Each planted model's bias.
    biases: Vec<f64>,
}

/// A uniform draw in [0, 1).
fn uniform(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u = 1.0 - uniform(rng);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * uniform(rng)).cos()
}

/// SplitMix-style mixing of several words into one seed.
fn mix(words: &[u64]) -> u64 {
    words.iter().fold(0x9e37_79b9_7f4a_7c15, |h, &w| {
        let mut z = (h ^ w).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// One generated row, owned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GenRow {
    /// The label.
    pub label: f64,
    /// Strictly increasing column ids.
    pub indices: Vec<u32>,
    /// L2-normalized tf-idf values.
    pub values: Vec<f32>,
}

impl Generator {
    /// Build the tables of `spec` (O(n_features)).
    pub fn new(spec: &CorpusSpec) -> Generator {
        let n = spec.n_features.max(1);
        let weights: Vec<f64> = (1..=n)
            .map(|r| (r as f64).powf(-spec.zipf_exponent))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cdf = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        let idf = weights
            .iter()
            .map(|w| (1.0 + 1.0 / (spec.mean_nnz * w / total)).ln())
            .collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(&[spec.seed, 0x0070_6c61_6e74_6564]));
        let models = spec.task.models();
        let planted = (0..models * n).map(|_| normal(&mut rng)).collect();
        let mut generator = Generator {
            spec: spec.clone(),
            cdf,
            idf,
            planted,
            biases: vec![0.0; models],
        };
        // Center each model's margins on a fixed sample, so that the two classes are about
        // balanced (and no class of many wins most rows for a bias of its own).
        let sample: Vec<GenRow> = (0..1001u64)
            .map(|i| generator.features(u64::MAX - i, Split::Train).0)
            .collect();
        for k in 0..models {
            let mut margins: Vec<f64> = sample.iter().map(|r| generator.margin(r, k)).collect();
            margins.sort_by(f64::total_cmp);
            generator.biases[k] = -margins[500];
        }
        generator
    }

    /// The spec this generator draws from.
    pub fn spec(&self) -> &CorpusSpec {
        &self.spec
    }

    /// The planted weights w*: for [`Task::Classes`] the K models w*_1 … w*_K one after the
    /// other, each of one weight per feature.
    pub fn planted(&self) -> &[f64] {
        &self.planted
    }

    /// The planted models' biases: b, or b_1 … b_K for [`Task::Classes`].
    pub fn biases(&self) -> &[f64] {
        &self.biases
    }

    fn rng(&self, row: u64, split: Split) -> Xoshiro256PlusPlus {
        let tag = match split {
            Split::Train => 1,
            Split::Test => 2,
        };
        Xoshiro256PlusPlus::seed_from_u64(mix(&[self.spec.seed, tag, row]))
    }

    /// Features and values of row `row` (no label), plus its generator for the label draw.
    fn features(&self, row: u64, split: Split) -> (GenRow, Xoshiro256PlusPlus) {
        let mut rng = self.rng(row, split);
        let n = self.cdf.len();
        let sigma = 0.5f64;
        let mu = self.spec.mean_nnz.ln() - sigma * sigma / 2.0;
        let k = ((mu + sigma * normal(&mut rng)).exp().round() as usize).clamp(1, n);
        // Draw until k distinct features (a Zipf head repeats often; repeats become tf).
        let mut drawn: Vec<u32> = Vec::with_capacity(2 * k);
        let (mut distinct, mut attempts) = (0, 0);
        while distinct < k && attempts < 8 * k {
            for _ in distinct..k {
                let u = uniform(&mut rng);
                drawn.push(self.cdf.partition_point(|&c| c <= u).min(n - 1) as u32);
                attempts += 1;
            }
            drawn.sort_unstable();
            distinct = drawn.chunk_by(|a, b| a == b).count();
        }
        let mut out = GenRow::default();
        let mut raw = Vec::with_capacity(drawn.len());
        for run in drawn.chunk_by(|a, b| a == b) {
            let j = run[0];
            out.indices.push(j);
            raw.push((1.0 + (run.len() as f64).ln()) * self.idf[j as usize]);
        }
        let norm = raw.iter().map(|v| v * v).sum::<f64>().sqrt();
        out.values = raw.iter().map(|v| (v / norm) as f32).collect();
        (out, rng)
    }

    /// w*_k·x of planted model `k`, without its bias.
    fn margin(&self, row: &GenRow, k: usize) -> f64 {
        let planted = &self.planted[k * self.cdf.len()..][..self.cdf.len()];
        (row.indices.iter().zip(&row.values))
            .map(|(&j, &v)| planted[j as usize] * f64::from(v))
            .sum()
    }

    /// Row `row` of `split`, label included.
    pub fn row(&self, row: u64, split: Split) -> GenRow {
        let (mut out, mut rng) = self.features(row, split);
        let noise = self.spec.label_noise;
        out.label = match self.spec.task {
            Task::Classification => {
                let margin = self.margin(&out, 0) + self.biases[0];
                let y = if margin >= 0.0 { 1.0 } else { -1.0 };
                if uniform(&mut rng) < noise { -y } else { y }
            }
            Task::Regression => self.margin(&out, 0) + self.biases[0] + noise * normal(&mut rng),
            Task::Classes(classes) => {
                let scores = (0..classes as usize).map(|k| self.margin(&out, k) + self.biases[k]);
                // The first class of the highest score.
                let (best, _) = scores
                    .enumerate()
                    .fold((0, f64::NEG_INFINITY), |best, (k, s)| {
                        if s > best.1 { (k, s) } else { best }
                    });
                let class = if uniform(&mut rng) < noise {
                    let others = f64::from(classes - 1);
                    (best + 1 + (uniform(&mut rng) * others) as usize) % classes as usize
                } else {
                    best
                };
                (class + 1) as f64
            }
        };
        out
    }
}

/// Rows generated per parallel task.
const BLOCK_ROWS: u64 = 2048;

/// Write `rows` rows of `split` as a dataset at `dir`, and as LIBSVM text at `text` if given
/// (both under temporary names until complete). Shard by shard: memory holds one shard;
/// `progress` gets the rows written so far after each shard.
pub fn write_split(
    generator: &Generator,
    split: Split,
    rows: u64,
    dir: &Path,
    text: Option<&Path>,
    progress: &mut dyn FnMut(u64),
) -> Result<(), DataError> {
    let spec = generator.spec();
    let mut writer = DatasetWriter::create(dir, ValueKind::F32)?;
    let mut text_out = text.map(TextOut::create).transpose()?;
    let rps = spec.rows_per_shard.max(1) as u64;
    let mut start = 0u64;
    while start < rows || start == 0 {
        let end = (start + rps).min(rows);
        let blocks: Vec<Vec<GenRow>> = (start..end)
            .step_by(BLOCK_ROWS as usize)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|b| {
                (b..end.min(b + BLOCK_ROWS))
                    .map(|i| generator.row(i, split))
                    .collect()
            })
            .collect();
        let (mut labels, mut offsets, mut indices, mut values) =
            (Vec::new(), vec![0u64], Vec::new(), Vec::new());
        for row in blocks.iter().flatten() {
            labels.push(row.label);
            indices.extend_from_slice(&row.indices);
            values.extend_from_slice(&row.values);
            offsets.push(indices.len() as u64);
        }
        writer.write_shard(&ShardParts {
            labels: &labels,
            offsets: &offsets,
            indices: &indices,
            values: Values::F32(&values),
            n_features: spec.n_features,
        })?;
        if let Some(out) = text_out.as_mut() {
            out.write_rows(&blocks)?;
        }
        progress(end);
        if end == rows {
            break;
        }
        start = end;
    }
    writer.finish(FinishOptions {
        columns: Some(spec.n_features),
        column_statistics: true,
        ..FinishOptions::default()
    })?;
    if let Some(out) = text_out {
        out.finish()?;
    }
    Ok(())
}

/// LIBSVM text for `path`, written whole or not at all ([`OutputFile`]).
struct TextOut {
    path: PathBuf,
    file: OutputFile,
}

impl TextOut {
    fn create(path: &Path) -> Result<TextOut, DataError> {
        let file = OutputFile::create(path).map_err(|e| DataError::io(path, e))?;
        Ok(TextOut {
            path: path.to_path_buf(),
            file,
        })
    }

    fn write_rows(&mut self, blocks: &[Vec<GenRow>]) -> Result<(), DataError> {
        use std::io::Write;
        let texts: Vec<Vec<u8>> = blocks
            .par_iter()
            .map(|block| {
                let (mut out, mut scratch) = (Vec::new(), Vec::new());
                for r in block {
                    let row = Row {
                        label: r.label,
                        indices: BoundedIndices::scan(&r.indices),
                        values: Values::F32(&r.values),
                    };
                    push_row(&mut out, &row, None, &mut scratch);
                }
                out
            })
            .collect();
        for t in texts {
            self.file
                .write_all(&t)
                .map_err(|e| DataError::io(&self.path, e))?;
        }
        Ok(())
    }

    fn finish(self) -> Result<(), DataError> {
        self.file.commit().map_err(|e| DataError::io(&self.path, e))
    }
}

/// Generate the corpus of `spec`: `out/train` and `out/test` dataset directories, and
/// `{text_prefix}.train.svm` / `.test.svm` LIBSVM text when `text_prefix` is given.
pub fn generate(
    spec: &CorpusSpec,
    out: &Path,
    text_prefix: Option<&Path>,
) -> Result<(), DataError> {
    generate_with_progress(spec, out, text_prefix, &mut |_| {})
}

/// [`generate`], reporting the rows written so far (train, then test) to `progress` after
/// every shard.
pub fn generate_with_progress(
    spec: &CorpusSpec,
    out: &Path,
    text_prefix: Option<&Path>,
    progress: &mut dyn FnMut(u64),
) -> Result<(), DataError> {
    let generator = Generator::new(spec);
    let mut done = 0;
    for (split, rows, name) in [
        (Split::Train, spec.train_rows, "train"),
        (Split::Test, spec.test_rows, "test"),
    ] {
        let text = text_prefix.map(|p| {
            let mut s = p.as_os_str().to_owned();
            s.push(format!(".{name}.svm"));
            PathBuf::from(s)
        });
        let dir = out.join(name);
        write_split(&generator, split, rows, &dir, text.as_deref(), &mut |r| {
            progress(done + r);
        })?;
        done += rows;
    }
    Ok(())
}
