#!/usr/bin/env python3
"""The optima of Huber's loss, the modified Huber loss and the Poisson loss that
`tests/batch_solvers.rs` checks every smooth batch solver against, by SciPy's L-BFGS-B on the
same objective:

    J(w, b) = (1/m) Σ ℓ(w·x_i + b, y_i) + (λ/2)(‖w‖² + b²)

with the values read in double precision (as the test reads them) and the bias regularized.
Prints J at SciPy's solution and its certificate ‖∇J‖²/(2λ) ≥ J − J*.

    python3 benches/huber_reference.py ../shared/data/diabetes/train.svm.gz huber:20 1e-3
    python3 benches/smooth_loss_reference.py ../shared/data/mnist_3v5/train.svm.gz modified-huber 1e-3
    python3 benches/smooth_loss_reference.py ../shared/data/diabetes/train.svm.gz poisson 1e-3

The Poisson loss is e^p − y·p + y·ln y − y (half the deviance; MATH.md).
"""
import gzip
import sys

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import csr_matrix


def read(path):
    labels, rows, cols, values = [], [], [], []
    n = 0
    with gzip.open(path, "rt") as text:
        for i, line in enumerate(text):
            parts = line.split()
            labels.append(float(parts[0]))
            for entry in parts[1:]:
                index, value = entry.split(":")
                rows.append(i)
                cols.append(int(index) - 1)
                values.append(float(value))
                n = max(n, int(index))
    return csr_matrix((values, (rows, cols)), shape=(len(labels), n)), np.array(labels)


def main():
    path, loss, lam = sys.argv[1], sys.argv[2], float(sys.argv[3])
    x, y = read(path)
    m, n = x.shape
    if loss == "modified-huber":
        y = np.where(y > 0, 1.0, -1.0)
    elif loss != "poisson":
        delta = float(loss.split(":")[1])
    y_ln_y = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)

    def objective(theta):
        w, b = theta[:n], theta[n]
        p = x @ w + b
        if loss == "poisson":
            mean = np.exp(p)
            value = mean - y * p + y_ln_y - y
            derivative = mean - y
        elif loss.startswith("huber"):
            r = p - y
            value = np.where(np.abs(r) <= delta, 0.5 * r * r, delta * (np.abs(r) - 0.5 * delta))
            derivative = np.clip(r, -delta, delta)
        else:
            z = y * p
            value = np.where(z >= 1, 0.0, np.where(z >= -1, (1 - z) ** 2, -4 * z))
            derivative = np.where(z >= 1, 0.0, np.where(z >= -1, -2 * y * (1 - z), -4 * y))
        j = value.mean() + 0.5 * lam * (w @ w + b * b)
        g = np.concatenate([x.T @ derivative / m + lam * w, [derivative.mean() + lam * b]])
        return j, g

    options = dict(maxiter=100000, maxfun=200000, gtol=1e-13, ftol=1e-16, maxcor=50)
    found = minimize(objective, np.zeros(n + 1), jac=True, method="L-BFGS-B", options=options)
    gradient = objective(found.x)[1]
    print(f"J = {found.fun!r}, certificate {gradient @ gradient / (2 * lam):.3e}")


if __name__ == "__main__":
    main()
