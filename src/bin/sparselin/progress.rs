//! Progress bars for the long-running commands (`convert`, `gen`, a cross-validated grid), on
//! standard error.

use std::io::IsTerminal;

use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// What a bar counts.
#[derive(Clone, Copy)]
pub enum Unit {
    /// Bytes of input text.
    Bytes,
    /// Rows written.
    Rows,
    /// Models fitted (a grid's folds × values).
    Fits,
}

/// A bar to `total` (a spinner when the total is unknown), hidden when `quiet` or when
/// standard error is not a terminal (logs and pipes get no control characters).
pub fn bar(total: Option<u64>, unit: Unit, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let template = match (total, unit) {
        (Some(_), Unit::Bytes) => {
            "{wide_bar} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}"
        }
        (None, Unit::Bytes) => "{spinner} {binary_bytes} {binary_bytes_per_sec} {elapsed}",
        (Some(_), Unit::Rows) => "{wide_bar} {human_pos}/{human_len} rows {rate} eta {eta}",
        (None, Unit::Rows) => "{spinner} {human_pos} rows {rate} {elapsed}",
        (_, Unit::Fits) => "{wide_bar} {pos}/{len} fits eta {eta}",
    };
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    bar.set_style(style(template));
    bar
}

/// The style of `template`, whose `{rate}` is a whole count per second with thousands
/// separators ("710,459/s"; indicatif's own `{per_sec}` prints four decimals).
pub fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("a valid progress template")
        .with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                // Before any time has passed the rate is infinite: nothing to show yet.
                let rate = state.per_sec();
                if rate.is_finite() {
                    let _ = write!(w, "{}/s", HumanCount(rate.round() as u64));
                }
            },
        )
}
