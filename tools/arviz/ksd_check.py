"""The harness's IMQ kernel Stein discrepancy against a direct NumPy computation on fixed samples.

Usage: ksd_check.py HARNESS_BINARY. For a 3-d Gaussian target N(mu, Sigma) (score
-Sigma^{-1}(x - mu)) and samples drawn from it, from a shifted and from a too-wide law (fixed
seeds), computes KSD = sqrt(mean_ij k0(x_i, x_j)) with the IMQ Stein kernel of Gorham & Mackey
(2017) by broadcasting, and `harness ksd` on the same points and scores; exits non-zero if any
pair differs by more than 1e-6 (relative).
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def ksd_numpy(x, b, c=1.0, beta=-0.5):
    n, d = x.shape
    r = x[:, None, :] - x[None, :, :]                      # r_ij = x_i - x_j
    r2 = (r ** 2).sum(-1)
    s = c * c + r2
    bb = b @ b.T                                           # b_i . b_j
    bi_r = np.einsum("ik,ijk->ij", b, r)                   # b_i . r_ij
    bj_r = np.einsum("jk,ijk->ij", b, r)                   # b_j . r_ij
    k0 = (bb * s ** beta
          - 2 * beta * s ** (beta - 1) * bi_r
          + 2 * beta * s ** (beta - 1) * bj_r
          - 4 * beta * (beta - 1) * s ** (beta - 2) * r2
          - 2 * beta * d * s ** (beta - 1))
    return np.sqrt(max(k0.mean(), 0.0))


def main():
    harness = sys.argv[1]
    rng = np.random.default_rng(20261128)
    mu = np.array([1.0, -0.5, 0.25])
    a = rng.normal(size=(3, 3))
    sigma = a @ a.T + 3 * np.eye(3)
    precision = np.linalg.inv(sigma)
    chol = np.linalg.cholesky(sigma)
    cases = {
        "exact": mu + rng.normal(size=(400, 3)) @ chol.T,
        "shifted": mu + 0.7 + rng.normal(size=(400, 3)) @ chol.T,
        "too wide": mu + 1.5 * rng.normal(size=(250, 3)) @ chol.T,
    }
    kernels = [(1.0, -0.5), (0.5, -0.3)]
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, x in cases.items():
            b = -(x - mu) @ precision.T
            px, pb = Path(tmp) / "x.csv", Path(tmp) / "b.csv"
            np.savetxt(px, x, delimiter=",", fmt="%.17e")
            np.savetxt(pb, b, delimiter=",", fmt="%.17e")
            for c, beta in kernels:
                out = subprocess.run([harness, "ksd", str(px), str(pb), "--c", str(c), "--beta", str(beta)],
                                     capture_output=True, text=True, check=True)
                ours, direct = float(out.stdout), ksd_numpy(x, b, c, beta)
                rel = abs(ours - direct) / direct
                ok = rel <= 1e-6
                status |= not ok
                print(f"KSD {name:8s} c={c} beta={beta}: harness {ours:.12e}, NumPy {direct:.12e}, "
                      f"relative difference {rel:.1e} {'ok' if ok else 'FAILED'}")
    sys.exit(status)


if __name__ == "__main__":
    main()
