//! Which `train` flags each algorithm uses. A flag given on the command line that the chosen
//! algorithm would ignore is refused, as the library refuses a setting that does not apply:
//! `--max-iter 50` on an online learner, or `--loss hinge` on AERR, is a mistake to report,
//! not a run to make without it.

use clap::ArgMatches;
use clap::parser::ValueSource;
use sparselin::loss::Loss;

use crate::train::{Algo, Args};

/// The algorithms a flag is for.
#[derive(Clone, Copy)]
enum Users {
    /// sgd, asgd, casgd, adagrad and their naive baselines.
    Online,
    /// The online learners that step by the schedule η_t = 1/(λ(t + t₀)): all but adagrad
    /// and naive-adagrad.
    Scheduled,
    /// The online learners that average: asgd, casgd and their naive baselines.
    Averaging,
    /// The Hogwild learners: sgd, asgd, casgd.
    Hogwild,
    /// lbfgs, sublbfgs, subgd, bfgs, dcd.
    Batch,
    /// The batch solvers that iterate on w: lbfgs, sublbfgs, subgd, bfgs.
    Primal,
    /// What can start from given weights: the online learners and the primal batch solvers.
    Startable,
    /// The batch solvers that keep curvature pairs: lbfgs, sublbfgs, bfgs.
    WithMemory,
    /// sublbfgs.
    SubLbfgs,
    /// lbfgs.
    Lbfgs,
    /// dcd.
    Dcd,
    /// What takes an L1 term: lbfgs, cd, sgd, adagrad and their naive baselines.
    L1,
    /// The online learners and the batch solvers (those with λ and a bias).
    Regularized,
    /// aerr, aelr, aesvr.
    AttributeEfficient,
    /// What takes a step size η: the attribute-efficient learners, adagrad and naive-adagrad.
    Eta,
    /// aesvr.
    Aesvr,
}

impl Users {
    fn include(self, algo: Algo) -> bool {
        use Algo::*;
        let adagrad = matches!(algo, Adagrad | NaiveAdagrad);
        let scheduled = matches!(algo, Sgd | Asgd | Casgd | NaiveSgd | NaiveAsgd | NaiveCasgd);
        let online = scheduled || adagrad;
        let attribute_efficient = matches!(algo, Aerr | Aelr | Aesvr);
        let primal = matches!(algo, Lbfgs | Sublbfgs | Subgd | Bfgs | Cd | Tron | Newton);
        let batch = primal || algo == Dcd;
        match self {
            Users::Online => online,
            Users::Scheduled => scheduled,
            Users::Averaging => matches!(algo, Asgd | Casgd | NaiveAsgd | NaiveCasgd),
            Users::Hogwild => matches!(algo, Sgd | Asgd | Casgd),
            Users::Batch => batch,
            Users::Primal => primal,
            Users::Startable => online || primal,
            Users::WithMemory => matches!(algo, Lbfgs | Sublbfgs | Bfgs),
            Users::SubLbfgs => algo == Sublbfgs,
            Users::Lbfgs => algo == Lbfgs,
            Users::Dcd => algo == Dcd,
            Users::L1 => matches!(algo, Lbfgs | Cd | Sgd | NaiveSgd) || adagrad,
            Users::Regularized => online || batch,
            Users::AttributeEfficient => attribute_efficient,
            Users::Eta => attribute_efficient || adagrad,
            Users::Aesvr => algo == Aesvr,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Users::Online => {
                "the online learners (sgd, asgd, casgd, adagrad and their naive baselines)"
            }
            Users::Scheduled => {
                "the online learners with a step schedule (sgd, asgd, casgd and their naive \
                 baselines; adagrad sizes its steps by the gradients)"
            }
            Users::Averaging => "the averaging learners (asgd, casgd, naive-asgd, naive-casgd)",
            Users::Hogwild => "the Hogwild learners (sgd, asgd, casgd)",
            Users::Batch => {
                "the batch solvers (lbfgs, sublbfgs, subgd, bfgs, dcd, cd, tron, newton)"
            }
            Users::Primal => {
                "the primal batch solvers (lbfgs, sublbfgs, subgd, bfgs, cd, tron, newton)"
            }
            Users::Startable => "the online learners and the primal batch solvers",
            Users::WithMemory => "the solvers with an L-BFGS memory (lbfgs, sublbfgs, bfgs)",
            Users::SubLbfgs => "sublbfgs",
            Users::Lbfgs => "lbfgs",
            Users::Dcd => "dcd",
            Users::L1 => "lbfgs, cd, sgd, adagrad and their naive baselines",
            Users::Regularized => "the online learners and the batch solvers",
            Users::AttributeEfficient => "the attribute-efficient learners (aerr, aelr, aesvr)",
            Users::Eta => "aerr, aelr, aesvr, adagrad and naive-adagrad",
            Users::Aesvr => "aesvr",
        }
    }
}

/// The flags only some algorithms use, by clap id; every other flag applies to all.
const FOR_SOME: &[(&str, Users)] = &[
    ("epochs", Users::Online),
    ("steps", Users::Online),
    ("t0", Users::Scheduled),
    ("bias_rate", Users::Scheduled),
    ("sampling", Users::Online),
    ("average_start", Users::Averaging),
    ("scalars", Users::Hogwild),
    ("hot_features", Users::Hogwild),
    ("average_every", Users::Online),
    ("local_steps", Users::Scheduled),
    ("averages_per_epoch", Users::Online),
    ("max_iter", Users::Batch),
    ("warm_start_epochs", Users::Primal),
    ("initial_model", Users::Startable),
    ("save_resume", Users::Scheduled),
    ("resume", Users::Scheduled),
    ("tol", Users::Batch),
    ("memory", Users::WithMemory),
    ("exact_direction", Users::SubLbfgs),
    ("multinomial", Users::Lbfgs),
    ("crammer_singer", Users::Dcd),
    ("l1", Users::L1),
    ("separate_class_passes", Users::Online),
    ("early_stop", Users::Online),
    ("holdout", Users::Online),
    ("early_stop_tol", Users::Online),
    ("lambda", Users::Regularized),
    ("cost", Users::Regularized),
    ("cost_grid", Users::Regularized),
    ("lambda_grid", Users::Regularized),
    ("l1_grid", Users::L1),
    ("cold_grid", Users::Batch),
    ("class_weight", Users::Regularized),
    ("sample_weights", Users::Regularized),
    // Batch solvers always regularize the bias.
    ("free_bias", Users::Online),
    ("no_bias", Users::Batch),
    ("threads", Users::Regularized),
    // One pass with nothing to record along the way: a trace would be its header alone.
    ("trace", Users::Regularized),
    ("plot", Users::Regularized),
    ("attributes", Users::AttributeEfficient),
    ("radius", Users::AttributeEfficient),
    ("eta", Users::Eta),
    ("smoothing", Users::Aesvr),
];

/// The ids of the arguments given on the command line (not defaults).
pub fn given(matches: &ArgMatches) -> Vec<String> {
    matches
        .ids()
        .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
        .map(|id| id.to_string())
        .collect()
}

/// An error naming the first flag given that the chosen algorithm does not use.
pub fn refuse_flags_that_do_not_apply(args: &Args) -> anyhow::Result<()> {
    let algo = args.algo;
    let name = algo_name(algo);
    for id in &args.given {
        let flag = format!("--{}", id.replace('_', "-"));
        if let Some((_, users)) = FOR_SOME.iter().find(|(f, _)| f == id)
            && !users.include(algo)
        {
            anyhow::bail!(
                "{flag} does not apply to --algo {name}: it is for {}",
                users.describe()
            );
        }
        if id == "bias_rate" && !args.free_bias {
            anyhow::bail!(
                "--bias-rate sets the step of a free bias: add --free-bias (a regularized bias \
                 steps with the weights)"
            );
        }
        if id == "loss" && matches!(algo, Algo::Aerr | Algo::Aelr) && args.loss != Loss::Squared {
            anyhow::bail!(
                "--algo {name} learns the squared loss: --loss {} does not apply",
                args.loss
            );
        }
    }
    Ok(())
}

/// The name `--algo` takes for `algo`.
fn algo_name(algo: Algo) -> String {
    clap::ValueEnum::to_possible_value(&algo)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    /// `sparselin train ARGS…` as `main` parses it.
    fn parse(args: &[&str]) -> Args {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            train: Args,
        }
        let matches = Cli::command()
            .try_get_matches_from(["train"].iter().chain(args))
            .unwrap();
        let mut train = Cli::from_arg_matches(&matches).unwrap().train;
        train.given = given(&matches);
        train
    }

    fn refusal(args: &[&str]) -> String {
        let args = parse(&[&["d.svm", "-o", "m"], args].concat());
        refuse_flags_that_do_not_apply(&args).map_or_else(|e| e.to_string(), |()| String::new())
    }

    #[test]
    fn flags_for_other_algorithms_are_refused_by_name() {
        assert_eq!(
            refusal(&["--algo", "asgd", "--max-iter", "5"]),
            "--max-iter does not apply to --algo asgd: it is for the batch solvers (lbfgs, \
             sublbfgs, subgd, bfgs, dcd, cd, tron, newton)"
        );
        assert!(refusal(&["--algo", "cd", "--memory", "5"]).contains("L-BFGS memory"));
        assert_eq!(
            refusal(&["--algo", "cd", "--l1", "0.1", "--max-iter", "5"]),
            ""
        );
        assert!(refusal(&["--algo", "lbfgs", "--epochs", "3"]).starts_with("--epochs does not"));
        assert!(refusal(&["--algo", "lbfgs", "--exact-direction"]).contains("for sublbfgs"));
        assert!(refusal(&["--algo", "naive-sgd", "--average-start", "9"]).contains("averaging"));
        assert!(refusal(&["--algo", "sublbfgs", "--l1", "0.1"]).contains("for lbfgs, cd, sgd"));
        assert!(refusal(&["--algo", "asgd", "--l1", "0.1"]).contains("for lbfgs, cd, sgd"));
        assert!(refusal(&["--algo", "naive-asgd", "--hot-features", "3"]).contains("Hogwild"));
        assert!(refusal(&["--algo", "aerr", "--lambda", "5"]).starts_with("--lambda does not"));
        assert!(refusal(&["--algo", "aerr", "--threads", "2"]).starts_with("--threads"));
        assert!(refusal(&["--algo", "aesvr", "--trace", "t.csv"]).starts_with("--trace"));
        assert!(refusal(&["--algo", "aelr", "--plot", "t.svg"]).starts_with("--plot"));
        assert!(refusal(&["--algo", "aelr", "--smoothing", "0.5"]).contains("for aesvr"));
        assert!(refusal(&["--algo", "sgd", "--radius", "2"]).contains("attribute-efficient"));
        assert_eq!(
            refusal(&["--algo", "aerr", "--loss", "hinge"]),
            "--algo aerr learns the squared loss: --loss hinge does not apply"
        );
    }

    #[test]
    fn flags_an_algorithm_uses_and_defaults_pass() {
        for args in [
            &[
                "--algo",
                "asgd",
                "--epochs",
                "2",
                "--threads",
                "1",
                "--lambda",
                "1e-3",
            ][..],
            &[
                "--algo",
                "sublbfgs",
                "--max-iter",
                "5",
                "--exact-direction",
                "--threads",
                "2",
            ],
            &[
                "--algo",
                "aerr",
                "--loss",
                "squared",
                "--attributes",
                "2",
                "--seed",
                "3",
            ],
            &[
                "--algo",
                "aesvr",
                "--loss",
                "epsilon-insensitive:0.1",
                "--smoothing",
                "0.2",
            ],
            &["--algo", "aerr"],
            &[
                "--algo",
                "lbfgs",
                "--loss",
                "log",
                "--readable",
                "r.txt",
                "--quiet",
            ],
        ] {
            assert_eq!(refusal(args), "", "{args:?}");
        }
    }
}
