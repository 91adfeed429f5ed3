//! `Dataset::open_share`: the ranks' shares of a dataset, concatenated in rank order, are the
//! whole dataset, and each rank maps only its own shards.

use sparselin::data::convert::{ConvertOptions, convert};
use sparselin::data::{Dataset, Examples};

#[test]
fn shares_concatenate_to_the_whole_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.svm");
    let text: String = (0..50u32)
        .map(|i| {
            format!(
                "{} {}:{} {}:0.5\n",
                2 * (i % 2) as i32 - 1,
                i % 7 + 1,
                i,
                i % 5 + 9
            )
        })
        .collect();
    std::fs::write(&input, text).unwrap();
    let out = tmp.path().join("ds");
    let options = ConvertOptions {
        rows_per_shard: 3,
        ..ConvertOptions::default()
    };
    convert(&input, &out, &options).unwrap();
    let whole = Dataset::open(&out).unwrap().into_examples().unwrap();
    let signature = |e: &dyn Fn(usize) -> (f64, Vec<u32>), rows: usize| -> Vec<(f64, Vec<u32>)> {
        (0..rows).map(e).collect()
    };
    let all = signature(
        &|i| (whole.row(i).label, whole.row(i).indices.to_vec()),
        whole.n_rows(),
    );
    for ranks in [1, 2, 3, 4, 17, 20] {
        let mut joined = Vec::new();
        for rank in 0..ranks {
            let share = Dataset::open_share(&out, rank, ranks).unwrap();
            assert!(share.shards().len() <= 17usize.div_ceil(ranks) + 1);
            // Its first row is the whole dataset's row after the earlier ranks' rows.
            assert_eq!(share.first_row(), joined.len() as u64, "{ranks} ranks");
            let rows = share.into_examples().unwrap();
            assert_eq!(rows.n_features(), whole.n_features());
            joined.extend(signature(
                &|i| (rows.row(i).label, rows.row(i).indices.to_vec()),
                rows.n_rows(),
            ));
        }
        assert_eq!(joined, all, "{ranks} ranks");
    }
}
