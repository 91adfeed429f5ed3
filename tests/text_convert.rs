//! LIBSVM text: the fast chunk parser against the reference parser, streaming conversion
//! (errors located as file:line:column, nothing half-written), and lossless export.

use std::path::Path;

use proptest::prelude::*;
use sparselin::data::chunk::{parse_chunk, split_at_newlines};
use sparselin::data::convert::{ConvertOptions, Storage, convert};
use sparselin::data::export::{export, push_f32};
use sparselin::data::libsvm::{self, ParseOptions, ValueType};
use sparselin::data::number::TextValue;
use sparselin::data::stream::TextFormat;
use sparselin::data::{Dataset, ExampleSet, Examples, ValueKind, Values, open_examples};

/// Tokens that are valid, nearly valid, or malformed, to build lines from.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u32..12, prop_oneof![
            Just("1".to_string()), Just("0".to_string()), Just("-2.5".to_string()),
            Just("1e-3".to_string()), Just(".5".to_string()), Just("+3".to_string()),
            (-1000i32..1000).prop_map(|v| format!("{}", f64::from(v) / 7.0)),
        ]).prop_map(|(i, v)| format!("{i}:{v}")),
        1 => prop::sample::select(vec![
            "qid:3", "x:1", "1:", ":1", "1:x", "1:inf", "1:nan", "-1:2", "+2:1", "1:2:3",
            "99999999999:1", "4294967297:1", "1:1e400", "#", "#c 1:x", "\t", "1.5:2",
            "2:3e38", "2:1e308", "3:1e-50", "4:0.1e1", "5:1.00000001", "1:-0",
        ]).prop_map(str::to_string),
    ]
}

fn line() -> impl Strategy<Value = String> {
    let label = prop::sample::select(vec!["+1", "-1", "0", "1", "2.5", "-0.25", "x", "", "1e3"]);
    (label, prop::collection::vec(token(), 0..6), prop::bool::ANY).prop_map(|(l, t, cr)| {
        let mut s = l.to_string();
        for t in t {
            s.push(' ');
            s.push_str(&t);
        }
        if cr {
            s.push('\r');
        }
        s
    })
}

/// The fast parser, piece by piece, against the reference reader on `text`, values as `V`:
/// the same rows, or the same error (`t:line:column: message`).
fn compare_parsers<V: TextValue>(
    text: &str,
    zero_based: bool,
    pieces: usize,
) -> Result<(), TestCaseError> {
    let value_type = if std::mem::size_of::<V>() == 4 {
        ValueType::F32
    } else {
        ValueType::F64
    };
    let options = ParseOptions {
        zero_based,
        value_type,
        n_features: None,
    };
    let reference = libsvm::read(text.as_bytes(), "t", options);
    let mut fast = Ok(Vec::new());
    let mut line_base = 0;
    for piece in split_at_newlines(text.as_bytes(), pieces) {
        match parse_chunk::<V>(piece, zero_based) {
            Ok(rows) => {
                line_base += rows.lines;
                if let Ok(all) = fast.as_mut() {
                    all.push(rows);
                }
            }
            Err(e) => {
                fast = Err(format!(
                    "t:{}:{}: {}",
                    line_base + e.line,
                    e.column,
                    e.message
                ));
                break;
            }
        }
    }
    match (reference, fast) {
        (Ok(m), Ok(chunks)) => {
            let mut i = 0;
            for c in &chunks {
                for r in 0..c.labels.len() {
                    let row = m.row(i);
                    let (a, b) = (c.offsets[r] as usize, c.offsets[r + 1] as usize);
                    prop_assert_eq!(row.label.to_bits(), c.labels[r].to_bits());
                    prop_assert_eq!(row.indices, &c.indices[a..b]);
                    prop_assert_eq!(row.values, V::values(&c.values[a..b]));
                    i += 1;
                }
            }
            prop_assert_eq!(i, m.n_rows());
        }
        (Err(e), Err(f)) => prop_assert_eq!(e.to_string(), f),
        (r, f) => prop_assert!(
            false,
            "reference {:?} vs fast {:?}",
            r.map(|m| m.n_rows()),
            f.map(|c| c.len())
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The fast parser accepts exactly what the reference accepts, with the same rows and
    /// the same error location and message, however the text is split into chunks, for
    /// both value precisions.
    #[test]
    fn fast_parser_matches_reference(
        lines in prop::collection::vec(line(), 0..12),
        zero_based in prop::bool::ANY,
        pieces in 1usize..5,
    ) {
        let text = lines.join("\n");
        compare_parsers::<f64>(&text, zero_based, pieces)?;
        compare_parsers::<f32>(&text, zero_based, pieces)?;
    }

    /// Export prints f32 values so that the parser reads back the same bits.
    #[test]
    fn f32_text_reads_back_exactly(bits in any::<u32>()) {
        let v = f32::from_bits(bits);
        prop_assume!(v.is_finite());
        let mut out = Vec::new();
        push_f32(&mut out, v);
        let text = format!("1 1:{}\n", String::from_utf8(out).unwrap());
        let m = libsvm::read(text.as_bytes(), "t", ParseOptions::default()).unwrap();
        if v != 0.0 {
            prop_assert_eq!(m.row(0).values, Values::F32(&[v]));
        }
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn small_blocks() -> ConvertOptions {
    ConvertOptions {
        rows_per_shard: 3,
        block_bytes: 64,
        ..ConvertOptions::default()
    }
}

#[test]
fn convert_matches_the_reference_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.svm");
    let mut text = String::from("# header comment\n");
    for i in 0..50u32 {
        text.push_str(&format!(
            "{} {}:{} {}:0.5 qid:{i} {}:1.25 # row {i}\n",
            if i % 3 == 0 { "-1" } else { "+1" },
            (i * 7) % 40 + 1,
            f64::from(i) / 3.0 + 0.1,
            (i * 3) % 40 + 1,
            (i * 11) % 40 + 1
        ));
        if i % 10 == 0 {
            text.push('\n');
        }
    }
    write(&input, &text);
    for value_type in [ValueType::F32, ValueType::F64] {
        let out = tmp.path().join(format!("ds-{value_type:?}"));
        let summary = convert(
            &input,
            &out,
            &ConvertOptions {
                value_type,
                ..small_blocks()
            },
        )
        .unwrap();
        assert_eq!(summary.rows, 50);
        assert_eq!(summary.shards, 17);
        let options = ParseOptions {
            value_type,
            ..ParseOptions::default()
        };
        let file = std::fs::File::open(&input).unwrap();
        let reference = libsvm::read(file, "in.svm", options).unwrap();
        let ds = Dataset::open(&out).unwrap();
        ds.verify().unwrap();
        let ex = ds.into_examples().unwrap();
        assert_eq!(ex.n_features(), reference.n_features());
        for i in 0..50 {
            let (a, b) = (ex.row(i), reference.row(i));
            assert_eq!(
                (a.label, a.indices, a.values),
                (b.label, b.indices, b.values),
                "row {i}"
            );
        }
    }
}

#[test]
fn bad_text_is_located_and_leaves_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("bad.svm");
    let mut text = String::new();
    for _ in 0..30 {
        text.push_str("+1 1:0.5 3:2\n");
    }
    text.push_str("-1 2:0.5 7:abc\n");
    write(&input, &text);
    let out = tmp.path().join("out");
    let err = convert(&input, &out, &small_blocks())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "{}:31:12: value 'abc' is not a finite number",
            input.display()
        )
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("bad.svm")]);
    write(&input, "1 1:1\n1 0:1\n");
    let err = convert(&input, &out, &small_blocks())
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("bad.svm:2:3: index 0 in a 1-based file (use --zero-based)"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn an_index_beyond_the_declared_count_is_located_where_it_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("wide.svm");
    let name = input.display().to_string();
    // Many 64-byte blocks first, then (line 42) a comment, a qid and two indices beyond the
    // four declared features, the first at column 16.
    let mut text = "+1 1:0.5 3:2 # filler\n\n".repeat(20);
    text.push_str("# 9:9 in a comment\n-1 qid:7 2:0.5 5:1 6:2 # 8:1\n1 4:1\n");
    write(&input, &text);
    for zero_based in [false, true] {
        let (declared, index) = if zero_based { (5, 5) } else { (4, 5) };
        let expected =
            format!("{name}:42:16: index {index} is beyond the declared {declared} features");
        let options = ConvertOptions {
            format: TextFormat::Libsvm { zero_based },
            n_features: Some(declared),
            ..small_blocks()
        };
        let out = tmp.path().join("out");
        let err = convert(&input, &out, &options).unwrap_err();
        assert_eq!(err.to_string(), expected);
        assert!(!out.exists());
        let parse = ParseOptions {
            zero_based,
            n_features: Some(declared),
            ..ParseOptions::default()
        };
        let err = libsvm::read_file(&input, parse).unwrap_err();
        assert_eq!(err.to_string(), expected);
        let file = std::fs::File::open(&input).unwrap();
        let err = libsvm::read(file, &name, parse).unwrap_err();
        assert_eq!(err.to_string(), expected);
        // One more feature declared covers every index.
        let wide_enough = ParseOptions {
            n_features: Some(declared + 2),
            ..parse
        };
        assert_eq!(
            libsvm::read_file(&input, wide_enough).unwrap().n_features(),
            declared + 2
        );
    }
}

#[test]
fn values_the_storage_precision_cannot_hold_are_errors_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("r.svm");
    let name = input.display().to_string();
    let keep = "convert with --values f64 to keep it";
    // (text, storage, error at line 2 column 10, or None when it converts)
    let cases = [
        (
            "1e-50",
            ValueType::F32,
            Some(format!(
                "'1e-50' is outside what f32 storage holds (it rounds to 0; {keep})"
            )),
        ),
        (
            "-1e39",
            ValueType::F32,
            Some(format!(
                "'-1e39' is outside what f32 storage holds (it rounds to infinity; {keep})"
            )),
        ),
        (
            "1e-400",
            ValueType::F32,
            Some("'1e-400' is outside what f32 storage holds (it rounds to 0)".to_string()),
        ),
        (
            "1e-400",
            ValueType::F64,
            Some("'1e-400' is outside what f64 storage holds (it rounds to 0)".to_string()),
        ),
        (
            "1e400",
            ValueType::F64,
            Some("'1e400' is outside what f64 storage holds (it rounds to infinity)".to_string()),
        ),
        ("1e-50", ValueType::F64, None),
        ("1e39", ValueType::F64, None),
        ("1e-45", ValueType::F32, None), // the smallest subnormal f32
        ("0.00e-99", ValueType::F32, None), // a zero as written: dropped
    ];
    for (value, value_type, error) in cases {
        write(&input, &format!("1 1:1\n-1 2:1 9:{value}\n"));
        let expected = error.map(|e| format!("{name}:2:10: value {e}"));
        // Convert (the chunk parser), a learner's text input and the reference reader.
        let out = tmp.path().join("out");
        let options = ConvertOptions {
            value_type,
            ..small_blocks()
        };
        let converted = convert(&input, &out, &options);
        let _ = std::fs::remove_dir_all(&out);
        let parse = ParseOptions {
            value_type,
            ..ParseOptions::default()
        };
        let read = libsvm::read_file(&input, parse);
        let file = std::fs::File::open(&input).unwrap();
        let reference = libsvm::read(file, &name, parse);
        let errors = [
            converted.err().map(|e| e.to_string()),
            read.as_ref().err().map(ToString::to_string),
            reference.as_ref().err().map(ToString::to_string),
        ];
        for error in errors {
            assert_eq!(error, expected, "{value} as {value_type:?}");
        }
        if let Ok(m) = read {
            let nnz = u64::from(value != "0.00e-99");
            assert_eq!(m.nnz(), 2 + nnz, "{value} as {value_type:?}");
        }
    }
}

#[test]
fn binary_storage_is_detected_or_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("b.svm");
    write(&input, "1 1:1 4:1\n-1 2:1\n");
    convert(&input, &tmp.path().join("auto"), &small_blocks()).unwrap();
    let ds = Dataset::open(&tmp.path().join("auto")).unwrap();
    assert_eq!(ds.manifest().value_type, ValueKind::Ones);
    write(&input, "1 1:1 4:2\n-1 2:1\n");
    convert(&input, &tmp.path().join("kept"), &small_blocks()).unwrap();
    assert_eq!(
        Dataset::open(&tmp.path().join("kept"))
            .unwrap()
            .manifest()
            .value_type,
        ValueKind::F32
    );
    let forced = ConvertOptions {
        storage: Storage::Binary,
        ..small_blocks()
    };
    convert(&input, &tmp.path().join("forced"), &forced).unwrap();
    let ex = Dataset::open(&tmp.path().join("forced"))
        .unwrap()
        .into_examples()
        .unwrap();
    assert_eq!(ex.row(0).values, Values::Ones);
    assert_eq!(ex.row(0).indices, &[0, 3]);
}

#[test]
fn convert_export_convert_is_lossless_with_renumbering_and_gzip() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let text = "1 3:0.1 1:0.7 2:1e-8\n-1 2:3.25\n0.5 2:0.3333333 5:-7\n\n-1\n";
    let gz = tmp.path().join("in.svm.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(text.as_bytes()).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let a = tmp.path().join("a");
    let options = ConvertOptions {
        renumber_by_frequency: true,
        ..small_blocks()
    };
    convert(&gz, &a, &options).unwrap();
    assert_eq!(
        Dataset::open(&a).unwrap().feature_permutation(),
        Some(&[1u32, 0, 2, 4, 3][..])
    );
    let exported = tmp.path().join("a.svm");
    export(&a, &exported).unwrap();
    let b = tmp.path().join("b");
    convert(&exported, &b, &options).unwrap();
    let (a, b) = (Dataset::open(&a).unwrap(), Dataset::open(&b).unwrap());
    assert_eq!(a.manifest(), b.manifest());
    for (x, y) in a.shards().iter().zip(b.shards()) {
        assert_eq!(
            std::fs::read(x.path()).unwrap(),
            std::fs::read(y.path()).unwrap()
        );
    }
    let reference = libsvm::read(text.as_bytes(), "t", ParseOptions::default()).unwrap();
    let back = libsvm::read_file(&exported, ParseOptions::default()).unwrap();
    assert_eq!(reference, back);
}

#[test]
fn open_examples_reads_directories_and_text() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("x.svm");
    write(&input, "1 1:0.5 3:1\n-1 2:2\n");
    let dir = tmp.path().join("x");
    convert(&input, &dir, &small_blocks()).unwrap();
    let options = ParseOptions {
        n_features: Some(10),
        ..ParseOptions::default()
    };
    let from_dir = open_examples(&dir, options).unwrap();
    let from_text = open_examples(&input, options).unwrap();
    assert!(matches!(from_dir, ExampleSet::Dataset(_)));
    assert!(matches!(from_text, ExampleSet::Matrix(_)));
    for set in [&from_dir, &from_text] {
        assert_eq!((set.n_rows(), set.n_features(), set.nnz()), (2, 10, 3));
        assert_eq!(set.row(1).indices, &[1]);
        assert_eq!(set.feature_permutation(), None);
    }
    let too_few = ParseOptions {
        n_features: Some(2),
        ..ParseOptions::default()
    };
    assert!(open_examples(&dir, too_few).is_err());
    let missing = open_examples(&tmp.path().join("nope.svm"), options).unwrap_err();
    assert!(missing.to_string().contains("nope.svm"), "{missing}");

    // Text goes through the chunk-parallel parser (many pieces): the reference reader's
    // matrix, in either precision, and its errors name the file.
    let big = tmp.path().join("big.svm");
    let mut text = String::new();
    for i in 0..3000u32 {
        let (a, b) = (i % 97 + 1, i % 89 + 100);
        text.push_str(&format!(
            "{} {a}:{} {b}:0.25 {a}:1e-3\n",
            i % 2,
            f64::from(i) / 7.0
        ));
    }
    write(&big, &text);
    for value_type in [ValueType::F32, ValueType::F64] {
        let options = ParseOptions {
            value_type,
            ..ParseOptions::default()
        };
        let reference = libsvm::read(text.as_bytes(), "t", options).unwrap();
        match open_examples(&big, options).unwrap() {
            ExampleSet::Matrix(m) => assert_eq!(m, reference),
            ExampleSet::Dataset(_) => panic!("text opened as a dataset"),
        }
    }
    write(&big, "1 1:1\n1 2:x\n");
    let bad = open_examples(&big, options).unwrap_err().to_string();
    assert!(
        bad.ends_with("big.svm:2:5: value 'x' is not a finite number"),
        "{bad}"
    );
}
