//! The synthetic corpus generator: reproducible, shaped as specified, and its text and
//! dataset outputs agree.

use sparselin::data::convert::{ConvertOptions, convert};
use sparselin::data::synth::{CorpusSpec, GenRow, Generator, Split, Task, generate};
use sparselin::data::{Dataset, Examples};

#[test]
fn same_seed_same_corpus_whatever_the_sharding() {
    let spec = CorpusSpec::preset("small").unwrap();
    let g = Generator::new(&spec);
    let again = Generator::new(&spec);
    for i in [0u64, 1, 77, 1999] {
        assert_eq!(g.row(i, Split::Train), again.row(i, Split::Train));
    }
    assert_ne!(g.row(0, Split::Train), g.row(0, Split::Test));
    let other = Generator::new(&CorpusSpec {
        seed: 2,
        ..spec.clone()
    });
    assert_ne!(g.row(0, Split::Train), other.row(0, Split::Train));

    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    generate(&spec, &a, None).unwrap();
    generate(
        &CorpusSpec {
            rows_per_shard: 333,
            ..spec.clone()
        },
        &b,
        None,
    )
    .unwrap();
    let a = Dataset::open(&a.join("train"))
        .unwrap()
        .into_examples()
        .unwrap();
    let b = Dataset::open(&b.join("train"))
        .unwrap()
        .into_examples()
        .unwrap();
    assert_ne!(a.dataset().shards().len(), b.dataset().shards().len());
    for i in 0..a.n_rows() {
        let (x, y) = (a.row(i), b.row(i));
        assert_eq!(
            (x.label, x.indices, x.values),
            (y.label, y.indices, y.values)
        );
    }
}

#[test]
fn rows_are_normalized_zipf_shaped_and_labels_follow_the_plant() {
    let spec = CorpusSpec {
        train_rows: 3000,
        ..CorpusSpec::preset("small").unwrap()
    };
    let g = Generator::new(&spec);
    let (mut nnz, mut head, mut tail, mut agree, mut positive) = (0usize, 0, 0, 0, 0);
    for i in 0..spec.train_rows {
        let r = g.row(i, Split::Train);
        assert!(r.indices.windows(2).all(|w| w[0] < w[1]));
        let norm: f64 = r.values.iter().map(|&v| f64::from(v).powi(2)).sum();
        assert!((norm - 1.0).abs() < 1e-5, "row {i}: ‖x‖² = {norm}");
        nnz += r.indices.len();
        head += r.indices.iter().filter(|&&j| j < 10).count();
        tail += r.indices.iter().filter(|&&j| j >= 990).count();
        let margin: f64 = r
            .indices
            .iter()
            .zip(&r.values)
            .map(|(&j, &v)| g.planted()[j as usize] * f64::from(v))
            .sum();
        positive += usize::from(r.label > 0.0);
        agree += usize::from((margin > 0.0) == (r.label > 0.0));
    }
    let mean = nnz as f64 / spec.train_rows as f64;
    assert!(
        (mean - spec.mean_nnz).abs() < 0.15 * spec.mean_nnz,
        "mean nnz {mean}"
    );
    assert!(head > 20 * tail.max(1), "head {head} vs tail {tail}");
    let balance = positive as f64 / spec.train_rows as f64;
    assert!((0.35..0.65).contains(&balance), "positive share {balance}");
    // The planted model (with its centering bias) explains most labels despite 5% flips.
    assert!(
        agree as f64 / spec.train_rows as f64 > 0.7,
        "agreement {agree}"
    );
    let reg = Generator::new(&CorpusSpec {
        task: Task::Regression,
        ..spec.clone()
    });
    assert!(reg.row(0, Split::Train).label.fract() != 0.0);
}

#[test]
fn classes_are_the_planted_models_argmax_about_balanced_with_the_noise_asked() {
    let (k, rows, n) = (6usize, 6000u64, 1000usize);
    let noise = 0.1;
    let spec = CorpusSpec {
        train_rows: rows,
        task: Task::Classes(k as u32),
        label_noise: noise,
        ..CorpusSpec::preset("small").unwrap()
    };
    let g = Generator::new(&spec);
    assert_eq!((g.planted().len(), g.biases().len()), (k * n, k));
    // The first planted model is the binary task's: the same seed, the same w*.
    let binary = Generator::new(&CorpusSpec::preset("small").unwrap());
    assert_eq!(&g.planted()[..n], binary.planted());
    // The label of the highest planted score w*_c·x + b_c, from 1.
    let argmax = |g: &Generator, r: &GenRow| {
        let score = |c: usize| -> f64 {
            let w = &g.planted()[c * n..][..n];
            let dot: f64 = (r.indices.iter().zip(&r.values))
                .map(|(&j, &v)| w[j as usize] * f64::from(v))
                .sum();
            dot + g.biases()[c]
        };
        (0..k)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap()
            + 1
    };
    let (mut counts, mut agree) = (vec![0u64; k], 0u64);
    for i in 0..rows {
        let r = g.row(i, Split::Train);
        assert_eq!(r.indices, binary.row(i, Split::Train).indices);
        let label = r.label as usize;
        assert!(
            (1..=k).contains(&label) && r.label.fract() == 0.0,
            "{}",
            r.label
        );
        counts[label - 1] += 1;
        agree += u64::from(label == argmax(&g, &r));
    }
    // 10% of labels replaced by another class: about 90% agree.
    let share = agree as f64 / rows as f64;
    assert!((share - (1.0 - noise)).abs() < 0.02, "agreement {share}");
    for (c, &count) in counts.iter().enumerate() {
        let share = count as f64 / rows as f64;
        assert!(
            (0.5 / k as f64..1.5 / k as f64).contains(&share),
            "class {}: {share}",
            c + 1
        );
    }
    // Without noise every label is the argmax.
    let exact = Generator::new(&CorpusSpec {
        label_noise: 0.0,
        ..spec
    });
    for i in 0..500 {
        let r = exact.row(i, Split::Test);
        assert_eq!(r.label as usize, argmax(&exact, &r), "row {i}");
    }
}

/// gen's binary shards and `convert` of gen's text are the same dataset, byte for byte
/// (manifest, shards and column arrays), for both splits and both tasks: the generator stores
/// exactly the entries its text holds (no explicit zeros, no duplicates, values that read
/// back bit for bit).
#[test]
fn text_output_converts_to_the_same_dataset() {
    let classes = CorpusSpec {
        task: Task::Classes(5),
        ..CorpusSpec::preset("small").unwrap()
    };
    let specs = [
        ("small", CorpusSpec::preset("small").unwrap()),
        (
            "small-regression",
            CorpusSpec::preset("small-regression").unwrap(),
        ),
        ("small, 5 classes", classes),
    ];
    for (preset, spec) in specs {
        let spec = CorpusSpec {
            train_rows: 700,
            test_rows: 50,
            ..spec
        };
        let tmp = tempfile::tempdir().unwrap();
        let prefix = tmp.path().join("corpus");
        generate(&spec, &tmp.path().join("gen"), Some(&prefix)).unwrap();
        for split in ["train", "test"] {
            let converted = tmp.path().join(format!("conv-{split}"));
            let options = ConvertOptions {
                rows_per_shard: spec.rows_per_shard,
                n_features: Some(spec.n_features),
                ..ConvertOptions::default()
            };
            let text = tmp.path().join(format!("corpus.{split}.svm"));
            convert(&text, &converted, &options).unwrap();
            let generated = tmp.path().join("gen").join(split);
            let a = Dataset::open(&generated).unwrap();
            let b = Dataset::open(&converted).unwrap();
            assert_eq!(a.manifest(), b.manifest(), "{preset} {split}");
            assert!(a.manifest().nnz > 0);
            let files = |dir: &std::path::Path| {
                let mut names: Vec<_> = std::fs::read_dir(dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name())
                    .collect();
                names.sort();
                names
            };
            assert_eq!(files(&generated), files(&converted));
            for name in files(&generated) {
                assert_eq!(
                    std::fs::read(generated.join(&name)).unwrap(),
                    std::fs::read(converted.join(&name)).unwrap(),
                    "{preset} {split} {name:?}"
                );
            }
        }
    }
}
