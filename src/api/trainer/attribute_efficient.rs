//! The attribute-efficient learners' runs ([`crate::lao`]): one pass, reading k attributes
//! of each example.

use serde_json::json;

use super::{Run, Trainer};
use crate::api::{Error, ExampleSet, Examples, Learner, Loss};
use crate::lao::{self, LaoConfig, SmoothedInsensitive};
use crate::online;

impl Trainer {
    /// An attribute-efficient learner's one pass over `data` with `loss` (squared, or
    /// ε-insensitive for AESVR).
    pub(super) fn train_lao(
        &self,
        algo: lao::Algo,
        loss: Loss,
        data: &ExampleSet,
    ) -> Result<(Run, serde_json::Value), Error> {
        let insensitivity = match (algo, loss) {
            (lao::Algo::Aesvr, Loss::EpsilonInsensitive(eps)) => eps,
            (lao::Algo::Aerr | lao::Algo::Aelr, Loss::Squared) => 0.0,
            _ => {
                return Err(Error::Config(format!(
                    "{algo} learns with {} loss, not {loss}",
                    Learner::AttributeEfficient(algo).default_loss()
                )));
            }
        };
        if data.n_rows() == 0 {
            return Err(online::ConfigError::NoRows.into());
        }
        if data.n_features() == 0 {
            return Err(Error::Config(format!(
                "{algo} reads attributes of the examples, and the data have no features"
            )));
        }
        let default_k = lao::DEFAULT_ATTRIBUTES.min(data.n_features());
        let (k, radius) = (
            self.attributes.unwrap_or(default_k),
            self.radius.unwrap_or(1.0),
        );
        if k == 0 || k > data.n_features() {
            return Err(Error::Config(format!(
                "{algo} reads k attributes per example: k = {k} is not within 1..={}",
                data.n_features()
            )));
        }
        let positive = |name: &str, value: f64| {
            if value > 0.0 && value.is_finite() {
                Ok(())
            } else {
                Err(Error::Config(format!(
                    "{name} must be positive and finite, got {value}"
                )))
            }
        };
        positive("the radius B", radius)?;
        if algo != lao::Algo::Aelr && radius > lao::MAX_L2_RADIUS {
            return Err(Error::Config(format!(
                "{algo} holds weights up to the radius B = {radius:e}, whose squares would \
                 overflow: B must be at most {:e}",
                lao::MAX_L2_RADIUS
            )));
        }
        if let Some(eta) = self.eta {
            positive("the step size η", eta)?;
        }
        let smoothing = self.smoothing.unwrap_or(lao::DEFAULT_SMOOTHING);
        positive("the smoothing width ε", smoothing)?;
        let config = LaoConfig {
            algo,
            k,
            radius,
            eta: self.eta,
            svr: SmoothedInsensitive {
                smoothing,
                insensitivity,
            },
            seed: self.seed,
        };
        let started = std::time::Instant::now();
        let fit = lao::train(data, &config)?;
        let seconds = started.elapsed().as_secs_f64();
        let details = json!({
            "attributes_per_example": k,
            "radius": radius,
            "eta": fit.eta,
            "smoothing": (algo == lao::Algo::Aesvr).then_some(smoothing),
            "seed": self.seed,
            "examples": fit.examples,
            "attributes_observed": fit.attributes_observed,
            "attributes_observed_per_example":
                fit.attributes_observed as f64 / fit.examples.max(1) as f64,
        });
        let run = Run {
            weights: fit.weights,
            bias: 0.0,
            seconds,
            examples: fit.examples,
            resume: None,
            dual: None,
        };
        Ok((run, details))
    }
}
