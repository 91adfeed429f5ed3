#!/usr/bin/env python3
"""subLBFGS against liblinear -s 3 in CPU seconds, interleaved (PERF.md "Batch solvers").

Each round runs, for every sparselin binary given, `sparselin train DATA --algo sublbfgs
--max-iter K` and `--max-iter 0` (solver CPU = the difference: the same loading and setup, plus
K iterations), then `liblinear-train -s 3 -B 1 -c C -e E SVM` for every E, timing only its
`train()` call (an LD_PRELOAD shim, compiled here with gcc, wraps it with getrusage: no
parsing, no model writing). CPU = user + sys of each child, so the ratios hold under load.
Choose K = the first subLBFGS iteration below the target suboptimality (from a `--trace`) and
E = liblinear's first -e that stops below it (check with `sparselin eval` on its model).

    python3 benches/sublbfgs_vs_liblinear.py --data /work/corpora/rcv1-100k/train \\
        --svm /work/corpora/rcv1-100k.train.svm --c 0.1 --lambda 1e-4 --iterations 16 \\
        --eps 0.2,0.3 --rounds 3 new=target/release/sparselin new1=target/release/sparselin:1
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import tempfile

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/resource.h>
static double cpu(void) {
  struct rusage r; getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + 1e-6 * (r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}
void *train(const void *prob, const void *param) {
  void *(*real)(const void *, const void *) =
      (void *(*)(const void *, const void *))dlsym(RTLD_NEXT, "train");
  double t0 = cpu();
  void *model = real(prob, param);
  fprintf(stderr, "liblinear train() cpu %.4f s\n", cpu() - t0);
  return model;
}
"""


def child_cpu(cmd, env):
    """Run cmd; return the user + sys seconds it used and its completed process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, done


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="sparselin dataset (or LIBSVM file)")
    parser.add_argument("--svm", required=True, help="the same data as LIBSVM text")
    parser.add_argument("--c", required=True, help="liblinear C = 1/(λm)")
    parser.add_argument("--lambda", dest="lam", required=True)
    parser.add_argument("--iterations", type=int, required=True, help="K")
    parser.add_argument("--eps", required=True, help="liblinear -e values, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("binaries", nargs="+", help="NAME=PATH[:threads] (default 2 threads)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="sublbfgs_vs_liblinear_")
    shim = os.path.join(work, "train_cpu.so")
    with open(os.path.join(work, "train_cpu.c"), "w") as f:
        f.write(SHIM)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", shim, f.name, "-ldl"], check=True)
    eps = args.eps.split(",")
    results = {}
    for r in range(args.rounds):
        for spec in args.binaries:
            name, path = spec.split("=", 1)
            path, _, threads = path.partition(":")
            env = dict(os.environ, RAYON_NUM_THREADS=threads or "2")
            used = {}
            for k in (args.iterations, 0):
                cmd = [path, "train", args.data, "--algo", "sublbfgs", "--loss", "hinge",
                       "--lambda", args.lam, "--max-iter", str(k), "--quiet",
                       "-o", os.path.join(work, f"{name}.model")]
                used[k], _ = child_cpu(cmd, env)
            results.setdefault(name, []).append(used[args.iterations] - used[0])
        for e in eps:
            cmd = ["liblinear-train", "-s", "3", "-c", args.c, "-B", "1", "-e", e, args.svm,
                   os.path.join(work, "liblinear.model")]
            _, done = child_cpu(cmd, dict(os.environ, LD_PRELOAD=shim))
            seconds = float(re.search(r"train\(\) cpu ([0-9.]+)", done.stderr).group(1))
            results.setdefault(f"liblinear -e {e}", []).append(seconds)
        row = "; ".join(f"{k} {v[-1]:.3f}" for k, v in results.items())
        print(f"round {r + 1}: {row} | load {os.getloadavg()[0]:.1f}", flush=True)
    reference = statistics.median(results[f"liblinear -e {eps[0]}"])
    for name, values in results.items():
        median = statistics.median(values)
        print(f"{name}: median {median:.3f} CPU-s (min {min(values):.3f}), "
              f"{median / reference:.2f}x liblinear -e {eps[0]}")


if __name__ == "__main__":
    main()
