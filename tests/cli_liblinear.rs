//! liblinear's conventions on the command line: `--cost C` (its and scikit-learn's C,
//! trained as λ = 1/(C·m)), `--cost-grid` (its `-C`), and `--no-bias` (its default, no `-B`).

mod cli;
mod real_data;

use std::path::Path;

use cli::{refused, run};
use sparselin::api::lambda_for_cost;
use sparselin::model::{Model, SavedModel};

#[test]
fn a_cost_trains_the_model_of_lambda_one_over_c_m_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let heart = real_data::data_dir().join("heart_scale/heart_scale");
    let heart = heart.to_str().unwrap();
    // heart_scale has 270 rows.
    let lambda = lambda_for_cost(0.5, 270);
    assert_eq!(lambda, 1.0 / 135.0);
    for algo in [
        &["--algo", "dcd"][..],
        &["--algo", "asgd", "--threads", "1"],
    ] {
        let summary = run(&[
            &["train", heart, "--cost", "0.5", "-o", &p("c.model")],
            algo,
        ]
        .concat());
        assert!(
            summary.starts_with(&format!("{} (hinge, λ = ", algo[1])),
            "{summary}"
        );
        assert!(
            summary.lines().next().unwrap().contains(", C = 0.5)"),
            "{summary}"
        );
        let as_lambda = lambda.to_string();
        run(&[
            &["train", heart, "--lambda", &as_lambda, "-o", &p("l.model")],
            algo,
        ]
        .concat());
        let (c, l) = (
            Model::load(Path::new(&p("c.model"))).unwrap(),
            Model::load(Path::new(&p("l.model"))).unwrap(),
        );
        assert_eq!(c.weights, l.weights, "{algo:?}");
        assert_eq!(c.bias, l.bias, "{algo:?}");
        assert_eq!(c.info.lambda, lambda);
        assert_eq!(c.info.details["cost"], 0.5);
        assert!(!l.info.details.contains_key("cost"));
    }
    // Each class's model of a one-vs-rest classifier records it too.
    let three = p("three.svm");
    let text = std::fs::read_to_string(heart).unwrap();
    let relabelled: String = (text.lines().enumerate())
        .map(|(i, line)| format!("{}{}\n", i % 3 + 1, &line[line.find(' ').unwrap()..]))
        .collect();
    std::fs::write(&three, relabelled).unwrap();
    run(&[
        "train",
        &three,
        "--algo",
        "lbfgs",
        "--loss",
        "log",
        "-c",
        "2",
        "-o",
        &p("ovr.model"),
    ]);
    let SavedModel::OneVsRest(classifier) = SavedModel::load(Path::new(&p("ovr.model"))).unwrap()
    else {
        panic!("a one-vs-rest classifier")
    };
    for model in classifier.models() {
        assert_eq!(model.info.lambda, lambda_for_cost(2.0, 270));
        assert_eq!(model.info.details["cost"], 2.0);
    }
    let cv = run(&["train", heart, "--algo", "dcd", "--cost", "1", "--cv", "3"]);
    assert!(
        cv.starts_with("dcd (hinge, C = 1): 3-fold cross-validation of 270 rows"),
        "{cv}"
    );
    refused(
        &["train", heart, "--cost", "0", "-o", &p("x")],
        "--cost must be positive and finite, got 0",
    );
    refused(
        &["train", heart, "--cost", "-1", "-o", &p("x")],
        "--cost must be positive and finite, got -1",
    );
    refused(
        &[
            "train",
            heart,
            "--cost",
            "1",
            "--lambda",
            "1e-3",
            "-o",
            &p("x"),
        ],
        "cannot be used with",
    );
    refused(
        &[
            "train",
            heart,
            "--algo",
            "aerr",
            "--cost",
            "1",
            "-o",
            &p("x"),
        ],
        "--cost does not apply to --algo aerr",
    );
}

#[test]
fn a_cost_grid_cross_validates_each_c_and_names_the_best_the_smaller_of_a_tie() {
    let heart = real_data::data_dir().join("heart_scale/heart_scale");
    let heart = heart.to_str().unwrap();
    let cv = ["train", heart, "--algo", "dcd", "--cv", "5", "--json"];
    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_str(&run(&[&cv[..], args].concat())).unwrap()
    };
    // Given in any order, run from the smallest C.
    let grid = json(&["--cost-grid", "1,0.01,10,0.1"]);
    let cold = json(&["--cost-grid", "1,0.01,10,0.1", "--cold-grid"]);
    let column = |report: &serde_json::Value, key: &str| -> Vec<f64> {
        (report["grid"].as_array().unwrap().iter())
            .map(|v| v["mean"][key].as_f64().unwrap())
            .collect()
    };
    let costs: Vec<f64> = (grid["grid"].as_array().unwrap().iter())
        .map(|v| v["cost"].as_f64().unwrap())
        .collect();
    assert_eq!(costs, [0.01, 0.1, 1.0, 10.0]);
    let errors: Vec<(f64, f64)> = costs
        .iter()
        .copied()
        .zip(column(&grid, "error_rate"))
        .collect();
    assert_eq!(
        (grid["warm_starts"].as_bool(), cold["warm_starts"].as_bool()),
        (Some(true), Some(false))
    );
    // Cold, each value's folds are those of its own run; warm, each fold starts from its
    // solution at the C before, and reaches the same errors and nearly the same objectives.
    assert_eq!(column(&cold, "error_rate"), column(&grid, "error_rate"));
    for (k, (&warm, &cold)) in (column(&grid, "objective").iter())
        .zip(&column(&cold, "objective"))
        .enumerate()
    {
        assert!(
            (warm - cold).abs() <= 1e-4 * cold,
            "C = {}: {warm} {cold}",
            costs[k]
        );
        assert_eq!(k == 0, warm == cold, "C = {}", costs[k]);
    }
    for (k, &cost) in costs.iter().enumerate() {
        let alone = json(&["--cost", &cost.to_string()]);
        assert_eq!(cold["grid"][k]["mean"], alone["mean"], "C = {cost}");
        assert_eq!(alone["cost"], cost);
    }
    let least = errors.iter().map(|e| e.1).fold(f64::INFINITY, f64::min);
    let smallest_of_least = (errors.iter())
        .filter(|e| e.1 == least)
        .map(|e| e.0)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(
        grid["best_cost"].as_f64(),
        Some(smallest_of_least),
        "{errors:?}"
    );
    assert!(
        errors.iter().filter(|e| e.1 == least).count() > 1,
        "a tie: {errors:?}"
    );
    refused(
        &["train", heart, "--cost-grid", "1,10", "-o", "x.model"],
        "add --cv K",
    );
    refused(
        &[&cv[..], &["--cost-grid", "1,0"]].concat(),
        "--cost-grid must be positive",
    );
    refused(
        &[&cv[..], &["--cost-grid", "1", "--cost", "1"]].concat(),
        "cannot be used with",
    );
    refused(&[&cv[..], &["--cold-grid"]].concat(), "add --lambda-grid");
    refused(
        &[
            "train",
            heart,
            "--algo",
            "asgd",
            "--cv",
            "5",
            "--lambda-grid",
            "1e-3",
            "--cold-grid",
        ],
        "--cold-grid does not apply to --algo asgd",
    );
}

/// liblinear 2.4.6's optima of heart_scale (m = 270) at C = 1 without a bias, its default:
/// J = λ/2‖w‖² + (1/m)Σℓ, λ = 1/270, evaluated in double precision from the w of
///   liblinear-train -q -s 0 -c 1 -e 1e-13 heart_scale     (log loss)
///   liblinear-train -q -s 2 -c 1 -e 1e-13 heart_scale     (squared hinge)
///   liblinear-train -q -s 3 -c 1 -e 1e-13 heart_scale     (hinge: stops at its iteration
///                                                          limit, 6e-5 above our optimum)
const HEART_NO_BIAS: [(&str, f64); 3] = [
    ("log", 0.3638029611412477),
    ("squared-hinge", 0.44864712754396296),
    ("hinge", 0.3574232450479433),
];

#[test]
fn without_a_bias_the_batch_solvers_reach_liblinear_s_default_optima() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.model");
    let m = m.to_str().unwrap();
    let heart = real_data::data_dir().join("heart_scale/heart_scale");
    let heart = heart.to_str().unwrap();
    for (loss, optimum) in HEART_NO_BIAS {
        let solvers: &[&str] = match loss {
            "hinge" => &["dcd", "sublbfgs"],
            "log" => &["lbfgs", "cd"],
            _ => &["dcd", "lbfgs"],
        };
        for algo in solvers {
            let args = [
                "train",
                heart,
                "--algo",
                algo,
                "--loss",
                loss,
                "-c",
                "1",
                "--no-bias",
            ];
            let out = run(&[&args[..], &["--tol", "1e-12", "--json", "--quiet", "-o", m]].concat());
            let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
            let found = summary["train"]["objective"].as_f64().unwrap();
            let relative = (found - optimum) / optimum;
            let within = if loss == "hinge" { 1e-4 } else { 1e-8 };
            assert!(
                relative.abs() <= within && relative <= 1e-12,
                "{algo} {loss}: {relative:e}"
            );
            assert_eq!(summary["details"]["fit_bias"], false);
            let model = Model::load(Path::new(m)).unwrap();
            assert_eq!(model.bias, 0.0, "{algo} {loss}");
        }
    }
    refused(
        &["train", heart, "--algo", "asgd", "--no-bias", "-o", m],
        "--no-bias",
    );
    refused(
        &[
            "train",
            heart,
            "--algo",
            "lbfgs",
            "--loss",
            "log",
            "--multinomial",
            "--no-bias",
            "-o",
            m,
        ],
        "multinomial logistic regression fits a bias per class",
    );
}
