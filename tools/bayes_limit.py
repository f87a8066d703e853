#!/usr/bin/env python3
"""bayes_limit.py — how well any modeler could extrapolate a gen_pmnf set.

A numerical study, not part of the product or of `make test`: it bounds what
the choice among PMNF hypotheses can gain on the one-parameter sets of
../shared/tools/gen_pmnf.py (points 4..64, five repetitions, held-out points
128, 256, 512). For each series it computes the Bayesian posterior over every
building block of Extra-P's search space (the 42 of gen_pmnf.py) times
{c0 = 0, c0 > 0} times a grid of coefficients (c0, c1), and predicts each
held-out point by the posterior median of the prediction. The likelihood is
Gaussian on the mean of the repetitions, with the relative noise pooled from
their spread (what a modeler can know). Two priors on the coefficients:

  generator   exactly gen_pmnf's: c0 = 0 or uniform on [1, 100] (one half
              each), c1 uniform on [0.5, 20]. Knowledge no real modeler has:
              the figure is the limit for this generator, not a target.
  scale-free  positivity only: c0 = 0 (one half) or log-uniform on
              [0.01, 1e4], c1 log-uniform on [0.005, 2000], 100 times wider
              than the generator's ranges on each side.

usage: bayes_limit.py PREFIX [PREFIX ...] [--prior generator|scale-free]
                      [--grid-c0 N] [--grid-c1 N]
PREFIX.txt and PREFIX.truth.json as gen_pmnf.py writes them. Prints one JSON
line per set and one for all, with the median and p90 absolute percentage
error at the held-out points, scored as score_models.py scores a modeler.
Needs numpy (Debian: python3-numpy); minutes per 300 series.
"""
import argparse
import json
import math

import numpy as np

BLOCKS = [(0, 1, 1), (0, 1, 2), (1, 4, 0), (1, 3, 0), (1, 4, 1), (1, 3, 1), (1, 4, 2), (1, 3, 2),
          (1, 2, 0), (1, 2, 1), (1, 2, 2), (2, 3, 0), (3, 4, 0), (2, 3, 1), (3, 4, 1), (4, 5, 0),
          (2, 3, 2), (3, 4, 2), (1, 1, 0), (1, 1, 1), (1, 1, 2), (5, 4, 0), (5, 4, 1), (4, 3, 0),
          (4, 3, 1), (3, 2, 0), (3, 2, 1), (3, 2, 2), (5, 3, 0), (7, 4, 0), (2, 1, 0), (2, 1, 1),
          (2, 1, 2), (9, 4, 0), (7, 3, 0), (5, 2, 0), (5, 2, 1), (5, 2, 2), (8, 3, 0), (11, 4, 0),
          (3, 1, 0), (3, 1, 1)]
MODEL_X = [4, 8, 16, 32, 64]
EVAL_X = [128, 256, 512]


def term(x, b):
    n, d, l = b
    return x ** (n / d) * (math.log2(x) ** l if l else 1.0)


def grids(prior, n0, n1):
    """Coefficient grids; equal prior mass per grid point within a branch."""
    if prior == "generator":
        return np.linspace(1, 100, n0), np.linspace(0.5, 20, n1)
    return np.geomspace(0.01, 1e4, n0), np.geomspace(0.005, 2000, n1)


def posterior(reps, c0g, c1g, tm, te):
    """Weights and predictions at EVAL_X of every (block, c0, c1) cell."""
    m = reps.mean(1)
    sd = reps.std(1, ddof=1)
    rel = math.sqrt(((sd / m) ** 2).mean())
    logw, pred = [], []
    for bi in range(len(BLOCKS)):
        for c0s, mass in ((np.zeros(1), 0.5), (c0g, 0.5 / len(c0g))):
            f = c0s[:, None, None] + c1g[None, :, None] * tm[bi][None, None, :]
            s = rel * f / math.sqrt(reps.shape[1])
            lw = (-0.5 * ((m - f) / s) ** 2 - np.log(s)).sum(-1)
            logw.append((lw + math.log(mass / len(c1g))).ravel())
            p = c0s[:, None, None] + c1g[None, :, None] * te[bi][None, None, :]
            pred.append(p.reshape(-1, len(EVAL_X)))
    logw = np.concatenate(logw)
    w = np.exp(logw - logw.max())
    return w / w.sum(), np.concatenate(pred)


def weighted_median(values, w):
    o = np.argsort(values)
    c = np.cumsum(w[o])
    return values[o[min(np.searchsorted(c, 0.5), len(o) - 1)]]


def score(prefix, c0g, c1g, tm, te):
    truth = json.load(open(prefix + ".truth.json"))
    rows = [l.split()[1:] for l in open(prefix + ".txt") if l.startswith("DATA")]
    npts = len(MODEL_X)
    errs = []
    for k, c in enumerate(truth["callpaths"]):
        reps = np.array([[float(v) for v in rows[k * npts + i]] for i in range(npts)])
        w, p = posterior(reps, c0g, c1g, tm, te)
        for j, e in enumerate(c["eval"]):
            y = weighted_median(p[:, j], w)
            errs.append(abs(y - e["value"]) / abs(e["value"]) * 100)
    return errs


def summary(name, errs, prior):
    e = sorted(errs)
    return json.dumps({"set": name, "prior": prior, "errors": len(e),
                       "extrapolation_ape_median": round(e[len(e) // 2], 3),
                       "extrapolation_ape_p90": round(e[int(len(e) * 0.9)], 3)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix", nargs="+")
    ap.add_argument("--prior", choices=["generator", "scale-free"], default="scale-free")
    ap.add_argument("--grid-c0", type=int, default=200)
    ap.add_argument("--grid-c1", type=int, default=800)
    a = ap.parse_args()
    c0g, c1g = grids(a.prior, a.grid_c0, a.grid_c1)
    tm = np.array([[term(x, b) for x in MODEL_X] for b in BLOCKS])
    te = np.array([[term(x, b) for x in EVAL_X] for b in BLOCKS])
    every = []
    for prefix in a.prefix:
        errs = score(prefix, c0g, c1g, tm, te)
        every += errs
        print(summary(prefix, errs, a.prior), flush=True)
    if len(a.prefix) > 1:
        print(summary("all", every, a.prior))


if __name__ == "__main__":
    main()
