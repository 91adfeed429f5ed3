#!/usr/bin/env python3
"""The standard comparisons of PERF.md on one corpus, as a Markdown report with plots.

    python3 benches/run.py --corpus /work/corpora/rcv1-like --out bench-out/    # a named corpus
    python3 benches/run.py --quick --out bench-out/        # ~1–2 minutes, generated corpus

A corpus is a prefix P as `sparselin gen P --text P` writes it: dataset directories P/train and
P/test, and LIBSVM text P.train.svm and P.test.svm (the text is what the peers read). --quick
generates a small one under OUT/quick-corpus and shrinks every sweep.

Writes OUT/README.md (every table with the exact command behind it), OUT/step_cost.svg,
OUT/objective.svg and the raw outputs under OUT/raw/. Sections: O(n + Tk) vs O(Tn) step cost
(examples/online_step_cost.rs), kernel paths (each SIMD path this CPU has, forced with
SPARSELIN_ISA, on an ASGD epoch and a batch evaluation), threads (Hogwild ASGD and the batch
evaluation at 1 and 2 threads), batch solvers, one-vs-rest ASGD with the classes in one pass
and in separate passes (on a generated corpus of --classes classes), and peers when installed
(scikit-learn's averaged SGD, Vowpal Wabbit, liblinear). Times are medians of --repeats runs; CPU seconds are
user + sys of the child processes (robust to other load on the machine, unlike wall time).
"""
import argparse
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Runner:
    """Runs commands, times them, and remembers each command line for the report."""

    def __init__(self, raw):
        self.raw = raw
        self.commands = []

    def run(self, cmd, log=None, env=None, quiet_log=False):
        """(stdout, wall seconds, CPU seconds of the child) of `cmd`; fails loudly, naming it."""
        line = shlex.join(show(c) for c in cmd)
        if env:
            line = " ".join(f"{k}={v}" for k, v in env.items()) + " " + line
        if not quiet_log:
            self.commands.append(line)
        print(f"$ {line}", file=sys.stderr, flush=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [str(c) for c in cmd],
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if log:
            (self.raw / log).write_text(done.stdout + done.stderr)
        if done.returncode != 0:
            sys.exit(f"benches/run.py: `{line}` failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done.stdout, wall, cpu


def show(arg):
    """A command-line argument as the report prints it: paths inside the repository relative to
    it, the Python interpreter as `python3`."""
    text = str(arg)
    if text == sys.executable:
        return "python3"
    return text.removeprefix(f"{ROOT}/")


def median(values):
    return statistics.median(values)


def table(header, rows):
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt(x, digits=3):
    return "–" if x is None else f"{x:.{digits}g}"


def binaries(profile):
    """Build the CLI and the examples the report runs, in `profile`; their paths."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    out = target / ("debug" if profile in ("dev", "test") else profile)
    return out / "sparselin", out / "examples"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, help="prefix P of P/train, P/test, P.{train,test}.svm")
    parser.add_argument("--quick", action="store_true", help="small generated corpus, short sweeps")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created)")
    parser.add_argument("--profile", default="release", help="cargo profile to build and run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing (median)")
    parser.add_argument("--epochs", type=int, help="ASGD epochs (default 5 quick, 3 otherwise)")
    parser.add_argument("--lambda", dest="lam", type=float, default=1e-4)
    parser.add_argument("--no-peers", action="store_true", help="skip scikit-learn, VW, liblinear")
    parser.add_argument("--no-build", action="store_true", help="use the binaries as built")
    parser.add_argument("--classes", type=int, help="one-vs-rest classes (default 5 quick, 10)")
    args = parser.parse_args()
    if args.corpus is None and not args.quick:
        parser.error("name a corpus with --corpus, or use --quick")
    out = args.out.resolve()
    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    runner = Runner(raw)
    epochs = args.epochs or (5 if args.quick else 3)
    repeats = max(1, args.repeats)

    if not args.no_build:
        runner.run(["cargo", "build", "--profile", args.profile, "--bin", "sparselin",
                    "--example", "online_step_cost", "--example", "batch_eval"], quiet_log=True)
    cli, examples = binaries(args.profile)
    for path in (cli, examples / "online_step_cost", examples / "batch_eval"):
        if not path.is_file():
            sys.exit(f"benches/run.py: {path} is missing (build it, or drop --no-build)")

    if args.corpus is None:
        prefix = out / "quick-corpus"
        if not (prefix / "train").is_dir():
            runner.run([cli, "gen", prefix, "--preset", "small", "--train-rows", "20000",
                        "--test-rows", "2000", "--text", prefix])
    else:
        prefix = args.corpus.resolve()
    train, test = prefix / "train", prefix / "test"
    train_svm, test_svm = Path(f"{prefix}.train.svm"), Path(f"{prefix}.test.svm")
    for path in (train, test):
        if not path.is_dir():
            sys.exit(f"benches/run.py: {path}: no dataset directory (see --help for the layout)")
    info = json.loads(runner.run([cli, "info", train, "--json"], quiet_log=True)[0])
    rows, n_features, nnz = info["rows"], info["columns"], info["nnz"]
    load_start = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    kernels = json.loads(runner.run([cli, "kernels", "--json"], quiet_log=True)[0])

    report = [f"# Benchmarks: {prefix.name}", ""]
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "?"
    report += [
        f"`python3 benches/run.py {' '.join(sys.argv[1:])}` at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"commit {commit}, cargo profile `{args.profile}`, {os.cpu_count()} CPUs, load average "
        f"{load_start} at the start (LOAD_END at the end), kernel path {kernels['isa']} "
        f"(available: {' '.join(kernels['available'])}).",
        "",
        f"Corpus `{prefix}`: {rows:,} training rows, {n_features:,} features, {nnz:,} non-zeros; "
        f"λ = {args.lam:g}, hinge loss unless said otherwise. Times are medians of {repeats} "
        "runs; CPU seconds are user + sys of the process (wall time is inflated by other load).",
        "",
    ]

    def train_json(extra, log, env=None):
        """Median over the repeats of `sparselin train --json`: (summary of the last run,
        median training seconds, median wall, median CPU)."""
        runs = []
        for r in range(repeats):
            cmd = [cli, "train", train, "--lambda", args.lam, *extra, "--test", test,
                   "--json", "--quiet", "-o", raw / "model.bin"]
            stdout, wall, cpu = runner.run(cmd, log=f"{log}.{r}.txt", env=env, quiet_log=r > 0)
            runs.append((json.loads(stdout), wall, cpu))
        summary = runs[-1][0]
        return (summary, median([s["seconds"] for s, _, _ in runs]),
                median([w for _, w, _ in runs]), median([c for _, _, c in runs]))

    # 1. Step cost as n grows: the O(k) learners against their O(n) baselines.
    max_exponent = 4 if args.quick else 6
    stdout, _, _ = runner.run([examples / "online_step_cost", out / "step_cost.svg", max_exponent],
                              log="step_cost.txt")
    report += ["## O(n + Tk) vs O(Tn): time per step as n grows", "",
               f"    {runner.commands[-1]}", "", stdout.strip(), "",
               "![step cost](step_cost.svg)", ""]

    # 2. Kernel paths: each SIMD path forced, on one ASGD epoch and one batch evaluation.
    isa_rows = []
    for isa in kernels["available"]:
        env = {"SPARSELIN_ISA": isa}
        _, seconds, _, _ = train_json(["--algo", "asgd", "--epochs", "1", "--sampling",
                                       "file-order", "--threads", "1"], f"isa-{isa}", env)
        evaluation, _, _ = runner.run([examples / "batch_eval", train, repeats],
                                      log=f"batch_eval-{isa}.txt", env=env)
        ev = dict(re.findall(r"threads (\d): evaluation ([\d.]+) s", evaluation))
        limit = re.search(r"kernel limit.*?: ([\d.]+) s", evaluation).group(1)
        isa_rows.append([isa, fmt(seconds), fmt(seconds / nnz * 1e9), ev["1"], ev["2"],
                         fmt(float(ev["1"]) / float(ev["2"])), limit])
    report += [
        "## Kernel paths and threads", "",
        "Each SIMD path this CPU has, forced with `SPARSELIN_ISA`: one ASGD epoch in file order "
        "on one thread (training seconds from `--json`), and one batch evaluation of J and ∇J "
        "(`examples/batch_eval.rs`: Xw then Xᵀℓ′, at 1 and 2 rayon threads; the kernel limit "
        "is a serial `sparse::dot` over every row).", "",
        "    SPARSELIN_ISA=I sparselin train TRAIN --algo asgd --epochs 1 --sampling file-order "
        f"--threads 1 --lambda {args.lam:g} --test TEST --json --quiet -o M",
        f"    SPARSELIN_ISA=I {show(examples / 'batch_eval')} TRAIN {repeats}", "",
        table(["path", "ASGD epoch (s)", "ns / nnz", "evaluation, 1 thread (s)",
               "2 threads (s)", "speed-up", "dot limit (s)"], isa_rows), ""]

    # 3. Hogwild threads; the traces feed the objective plot.
    thread_rows, traces, base = [], [], None
    for threads in (1, 2):
        trace = raw / f"asgd-{threads}-thread{'s' if threads > 1 else ''}.csv"
        summary, seconds, _, cpu = train_json(
            ["--algo", "asgd", "--epochs", epochs, "--threads", threads, "--trace", trace],
            f"hogwild-{threads}")
        traces.append(trace)
        base = base or seconds
        thread_rows.append([threads, fmt(seconds), fmt(base / seconds), fmt(cpu),
                            fmt(nnz * epochs / seconds / 1e6),
                            f"{summary['train']['objective']:.6f}",
                            fmt(summary["test"].get("error_rate"))])
    report += [
        f"Hogwild ASGD, {epochs} epochs, uniform sampling (training seconds from `--json`; "
        "CPU seconds of the whole process, including loading and the final evaluation):", "",
        f"    sparselin train TRAIN --algo asgd --epochs {epochs} --threads 1|2 "
        f"--lambda {args.lam:g} --trace T.csv --test TEST --json --quiet -o M", "",
        table(["threads", "training (s)", "speed-up", "process CPU (s)", "M nnz/s",
               "train objective", "test error"], thread_rows), ""]

    # 4. Batch solvers.
    batch_rows = []
    for algo, loss in (("sublbfgs", "hinge"), ("lbfgs", "log")):
        trace = raw / f"{algo}.csv"
        extra = ["--algo", algo, "--loss", loss, "--tol", "1e-6", "--max-iter", 200, "--trace", trace]
        summary, seconds, _, cpu = train_json(extra, algo)
        if loss == "hinge":
            traces.append(trace)
        details = summary["details"]
        batch_rows.append([algo, loss, details["iterations"], details["stop"], fmt(seconds),
                           f"{summary['train']['objective']:.6f}",
                           fmt(summary["test"].get("error_rate"))])
    report += [
        "## Batch solvers", "",
        f"    sparselin train TRAIN --algo sublbfgs|lbfgs --loss hinge|log --tol 1e-6 --max-iter 200 "
        f"--lambda {args.lam:g} --trace T.csv --test TEST --json --quiet -o M", "",
        table(["solver", "loss", "iterations", "stop", "training (s)", "train objective",
               "test error"], batch_rows), ""]
    runner.run([cli, "plot", *traces, "-o", out / "objective.svg", "--title",
                f"hinge objective against time, {prefix.name}"])
    report += [f"    {runner.commands[-1]}", "", "![objective](objective.svg)", ""]

    # 5. One-vs-rest: ASGD with the classes in one pass and in passes of their own.
    report += one_vs_rest(args, runner, cli, out, epochs, repeats)

    # 6. Peers, end to end on the text files: load, train, evaluate on the test set.
    if not args.no_peers:
        report += peers(args, runner, cli, train_svm, test_svm, rows, n_features, repeats, raw)

    load_end = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    text = "\n".join(report).replace("LOAD_END", load_end) + "\n"
    temporary = out / "README.md.tmp"
    temporary.write_text(text)
    temporary.replace(out / "README.md")
    print(f"report written to {out / 'README.md'}", file=sys.stderr)


def one_vs_rest(args, runner, cli, out, epochs, repeats):
    """The one-vs-rest table: ASGD on a generated corpus of more than two classes, the classes
    in one pass (the default) and in separate passes, on 1 and 2 threads."""
    classes = args.classes or (5 if args.quick else 10)
    prefix = out / f"classes-corpus-{classes}"
    preset, rows = ("small", 20000) if args.quick else ("rcv1-like", 100000)
    if not (prefix / "train").is_dir():
        runner.run([cli, "gen", prefix, "--preset", preset, "--train-rows", rows,
                    "--test-rows", rows // 10, "--classes", classes, "--quiet"])
    table_rows = []
    for flags in ([], ["--separate-class-passes"]):
        for threads in (1, 2):
            seconds = []
            for r in range(repeats):
                cmd = [cli, "train", prefix / "train", "--algo", "asgd", "--lambda", args.lam,
                       "--epochs", epochs, "--threads", threads, *flags, "--test",
                       prefix / "test", "--json", "--quiet", "-o", out / "raw" / "classes.bin"]
                stdout, _, _ = runner.run(cmd, log=f"classes-{len(flags)}-{threads}.{r}.txt",
                                          quiet_log=r > 0)
                summary = json.loads(stdout)
                seconds.append(summary["seconds"])
            mode = "separate passes" if flags else "one pass"
            table_rows.append([mode, threads, fmt(median(seconds)),
                               fmt(summary["test"]["error_rate"])])
    return [
        "## One-vs-rest: the classes in one pass", "",
        f"ASGD on `{prefix.name}` (`gen --preset {preset} --train-rows {rows} --classes "
        f"{classes}`), {epochs} epochs, hinge loss; training seconds from `--json`:", "",
        f"    sparselin train TRAIN --algo asgd --epochs {epochs} --threads 1|2 "
        f"[--separate-class-passes] --lambda {args.lam:g} --test TEST --json --quiet -o M", "",
        table(["classes in", "threads", "training (s)", "test error"], table_rows), ""]


def peers(args, runner, cli, train_svm, test_svm, rows, n_features, repeats, raw):
    """The peer table: each tool end to end on the text (parse, train, predict the test set)."""
    for path in (train_svm, test_svm):
        if not path.is_file():
            return ["## Peers", "", f"Skipped: {path} does not exist.", ""]
    lam = args.lam
    found, missing = [], []
    first_command = len(runner.commands)

    def timed(name, learner, commands, result_of):
        """Median wall and CPU over the repeats of running `commands` in sequence; `result_of`
        maps the last repeat's outputs to (seconds of training by the tool's own clock, or
        None, test error)."""
        walls, cpus = [], []
        for r in range(repeats):
            wall = cpu = 0.0
            outputs = []
            for k, cmd in enumerate(commands):
                stdout, w, c = runner.run(cmd, log=f"peer-{name}-{r}-{k}.txt", quiet_log=r > 0)
                outputs.append(stdout)
                wall, cpu = wall + w, cpu + c
            walls.append(wall)
            cpus.append(cpu)
        seconds, error = result_of(outputs)
        found.append([name, learner, fmt(median(walls)), fmt(median(cpus)), fmt(seconds),
                      fmt(error)])

    sparselin_train = [cli, "train", train_svm, "--features", n_features, "--lambda", lam,
                       "--test", test_svm, "--json", "--quiet", "-o", raw / "peer.model"]
    def sparselin_result(outputs):
        summary = json.loads(outputs[-1])
        return summary["seconds"], summary["test"]["error_rate"]

    timed("sparselin", "ASGD, 1 epoch, file order, 1 thread",
          [sparselin_train + ["--algo", "asgd", "--epochs", 1, "--sampling", "file-order",
                              "--threads", 1]], sparselin_result)
    timed("sparselin", "subLBFGS hinge, tol 1e-4, ≤ 200 iterations",
          [sparselin_train + ["--algo", "sublbfgs", "--tol", "1e-4", "--max-iter", 200]],
          sparselin_result)
    python = sys.executable
    try:
        import sklearn  # noqa: F401
        timed("scikit-learn", "SGDClassifier(average=True), 1 epoch, file order",
              [[python, ROOT / "benches" / "peer_sklearn.py", train_svm, test_svm, n_features,
                lam, 1]],
              lambda outputs: (json.loads(outputs[-1])["fit_seconds"],
                               json.loads(outputs[-1])["test_error"]))
    except ImportError:
        missing.append("scikit-learn")
    try:
        import vowpalwabbit  # noqa: F401
        vw_files = [raw / "train.vw", raw / "test.vw"]
        for svm, vw in zip((train_svm, test_svm), vw_files):
            with open(svm) as source, open(vw, "w") as target:
                for line in source:
                    label, _, rest = line.partition(" ")
                    target.write(f"{1 if float(label) > 0 else -1} | {rest}")
        predictions = raw / "vw.predictions"
        # VW's defaults, without --l2: its L2 acts per update, scaled by the adaptive and
        # normalized steps, so no value corresponds to λ (--l2 1e-4 is far too strong).
        timed("Vowpal Wabbit", "defaults (adaptive, normalized), hinge, 1 pass",
              [[python, "-m", "vowpalwabbit", "-d", vw_files[0], "--loss_function", "hinge",
                "-b", 22, "--binary", "-f", raw / "vw.model", "--quiet"],
               [python, "-m", "vowpalwabbit", "-t", "-i", raw / "vw.model", "-d", vw_files[1],
                "--binary", "-p", predictions, "--quiet"]],
              lambda _: (None, vw_error(predictions, vw_files[1])))
    except ImportError:
        missing.append("vowpalwabbit")
    if shutil.which("liblinear-train") and shutil.which("liblinear-predict"):
        c = 1.0 / (lam * rows)
        for solver, what in (("3", "dual coordinate descent, hinge (-s 3), -e 0.1"),
                             ("0", "trust-region Newton, log (-s 0), -e 0.01")):
            timed("liblinear", what,
                  [["liblinear-train", "-q", "-s", solver, "-c", f"{c:.6g}", "-B", 1,
                    train_svm, raw / "ll.model"],
                   ["liblinear-predict", test_svm, raw / "ll.model", raw / "ll.predictions"]],
                  lambda outputs: (None, liblinear_error(outputs[-1])))
    else:
        missing.append("liblinear-tools")
    notes = f"Not installed, skipped: {', '.join(missing)}." if missing else ""
    return [
        "## Peers", "",
        "Each tool end to end on the LIBSVM text: parse the training and test files, train, "
        "predict the test set (VW: its own text format, converted beforehand, untimed). Wall "
        f"and CPU seconds of all its processes (the Python peers' include starting the "
        f"interpreter and importing their modules), median of {repeats}; training seconds by "
        "the tool's own clock where it reports one (sparselin: `seconds` of `--json`; "
        f"scikit-learn: `fit()`); liblinear's C = 1/(λm) = {1.0 / (lam * rows):.6g}.", "",
        *(f"    {line}" for line in runner.commands[first_command:]), "",
        table(["tool", "learner", "wall (s)", "CPU (s)", "training only (s)", "test error"],
              found), "", notes, ""]


def vw_error(predictions, test_vw):
    """Error rate of VW's ±1 predictions against the test labels."""
    predicted = [float(line.split()[0]) for line in open(predictions)]
    labels = [float(line.split()[0]) for line in open(test_vw)]
    return sum(p != y for p, y in zip(predicted, labels)) / len(labels)


def liblinear_error(stdout):
    """1 − accuracy, from liblinear-predict's 'Accuracy = 97.5% (x/y)'."""
    found = re.search(r"Accuracy = [\d.]+% \((\d+)/(\d+)\)", stdout)
    return 1.0 - int(found.group(1)) / int(found.group(2))


if __name__ == "__main__":
    main()
