//! Running the `sparselin` binary from the command-line tests (included with `mod cli;`).
//! Each test binary uses the helpers it needs, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The binary run with `args`, its output captured.
pub fn sparselin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sparselin"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Standard output then standard error, as text.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The standard output of a run that must have succeeded.
pub fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", text(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The standard output of the binary run with `args`, which must succeed.
pub fn run(args: &[&str]) -> String {
    let out = sparselin(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The binary run with `args` must fail, saying `message` on standard error.
pub fn refused(args: &[&str], message: &str) {
    let out = sparselin(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} ran");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
}
