#!/usr/bin/python3
"""Generate golden two-sample KS p-values for the Go tests of stats/ks.

Writes, next to this script:

  more_refs.csv          one row per sample pair (same column names as
                         shared/ks-reference/ks_reference.csv where they exist)
  more_refs_samples.csv  the samples as histograms: case_id,sample,value,count
  libm_golden.csv        elementary-function values the Go port relies on:
                         glibc exp (kind=exp), correctly rounded log, x^n and
                         x^1.5 (log, powi, pow15; exact via decimal/fractions)
                         and R's lgamma at integers (r_lgamma); hex floats

Tools (Debian bookworm): python3-scipy (SciPy 1.10.1, NumPy 1.24.2) and
r-base-core (R 4.2.2); make_refs.R is run through Rscript for the R columns.

    apt-get install -y python3-scipy r-base-core
    /usr/bin/python3 stats/ks/testdata/make_refs.py

Everything is deterministic: every case draws from its own
numpy.random.default_rng(seed). The CSV files are committed so the Go tests
never need SciPy or R.

NumPy dispatches float64 exp/log to AVX-512 code on CPUs that have it, which
rounds differently from glibc. The shared reference table was produced with
glibc's exp, so AVX-512 dispatch is disabled below (before NumPy is imported)
to make the output independent of the CPU that runs this script.
"""

import os

os.environ["NPY_DISABLE_CPU_FEATURES"] = (
    "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
)

import csv  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy import stats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHA = 0.05


class Case:
    def __init__(self, family, desc, x, y, value_max):
        self.family = family
        self.desc = desc
        self.x = np.asarray(x, dtype=np.int64)
        self.y = np.asarray(y, dtype=np.int64)
        self.value_max = int(value_max)
        assert self.x.min() >= 0 and self.y.min() >= 0
        assert self.x.max() <= value_max and self.y.max() <= value_max


def clip_draw(a, value_max):
    return np.clip(np.rint(a), 0, value_max).astype(np.int64)


def draw(rng, dist, n, value_max, shift=0.0):
    """Integer samples on 0..value_max from a named distribution."""
    r = value_max
    if dist == "uniform":
        a = rng.integers(0, r + 1, size=n).astype(float)
    elif dist == "binomial":
        a = rng.binomial(r, 0.35, size=n).astype(float)
    elif dist == "poisson":
        a = rng.poisson(max(r * 0.2, 0.5), size=n).astype(float)
    elif dist == "normal":
        a = rng.normal(r / 2.0, max(r / 6.0, 0.4), size=n)
    elif dist == "heavyzero":  # mostly zeros, a thin tail
        a = np.where(rng.random(n) < 0.85, 0, rng.integers(1, r + 1, size=n)).astype(float)
    else:
        raise ValueError(dist)
    return clip_draw(a + shift, r)


def random_walk(rng, n, value_max, start=None):
    x = np.empty(n, dtype=np.int64)
    v = value_max // 2 if start is None else start
    steps = rng.integers(-1, 2, size=n)
    for i in range(n):
        v = min(max(v + steps[i], 0), value_max)
        x[i] = v
    return x


def build_cases():
    cases = []
    seed = [1000]

    def rng():
        seed[0] += 1
        return np.random.default_rng(seed[0])

    R_SET = (1, 8, 32, 256)

    # Identical samples and constants (D = 0).
    for r, n in ((1, 5), (8, 40), (32, 1000), (256, 12000)):
        g = rng()
        x = draw(g, "uniform", n, r)
        cases.append(Case("identical", f"identical samples n={n}, 0..{r}", x, x.copy(), r))
    cases.append(Case("constant", "both constant (D=0), 9999 vs 3", [4] * 3, [4] * 9999, 8))

    # Disjoint supports (D = 1).
    for r, n1, n2 in ((1, 5, 6), (8, 50, 200), (256, 10001, 30)):
        g = rng()
        x = g.integers(0, r // 2 + 1, size=n1) if r > 1 else np.zeros(n1, dtype=int)
        y = g.integers(r // 2 + 1, r + 1, size=n2) if r > 1 else np.ones(n2, dtype=int)
        cases.append(Case("disjoint", f"disjoint supports {n1}/{n2}", x, y, r))

    # Same distribution, every value range, sizes 5..20000.
    sizes = [(5, 5), (5, 8), (12, 12), (20, 25), (37, 61), (80, 80), (150, 90),
             (400, 400), (700, 1300), (2500, 2500), (4000, 6100), (9000, 9000),
             (15000, 15000), (20000, 12000)]
    dists = ["uniform", "binomial", "poisson", "normal"]
    k = 0
    for r in R_SET:
        for (n1, n2) in sizes:
            d = dists[k % len(dists)]
            k += 1
            g = rng()
            cases.append(Case("same", f"same {d} 0..{r}, {n1}/{n2}",
                              draw(g, d, n1, r), draw(g, d, n2, r), r))

    # Shifted distributions: small shifts, so p lands on both sides of 0.05.
    for r in R_SET:
        for (n1, n2), shift in (((10, 12), 1.0), ((30, 30), 0.5), ((99, 101), 0.3),
                                ((600, 600), 0.08), ((3000, 2000), 0.05),
                                ((12000, 11000), 0.03)):
            g = rng()
            s = shift * max(r / 8.0, 0.6)
            cases.append(Case("shifted", f"normal 0..{r} shifted by {s:.3g}, {n1}/{n2}",
                              draw(g, "normal", n1, r), draw(g, "normal", n2, r, s), r))

    # Heavy ties: mostly zeros.
    for r in R_SET:
        for (n1, n2) in ((8, 9), (40, 60), (90, 110), (1000, 800), (10000, 10000), (20000, 6000)):
            g = rng()
            cases.append(Case("heavy_ties", f"85% zeros 0..{r}, {n1}/{n2}",
                              draw(g, "heavyzero", n1, r), draw(g, "heavyzero", n2, r), r))

    # Binary samples with different proportions.
    for (n1, n2), p1, p2 in (((20, 20), 0.5, 0.45), ((50, 199), 0.3, 0.45),
                             ((100, 100), 0.5, 0.62), ((5000, 5000), 0.5, 0.52)):
        g = rng()
        x = (g.random(n1) < p1).astype(int)
        y = (g.random(n2) < p2).astype(int)
        cases.append(Case("binary", f"binary p={p1}/{p2}, {n1}/{n2}", x, y, 1))

    # Switch points. R: exact iff n1*n2 < 10000. SciPy: exact iff max <= 10000.
    for (n1, n2) in ((99, 101), (101, 99), (9, 1111), (5, 1999), (100, 100), (10, 1000),
                     (5, 2000), (25, 400), (73, 137)):
        for r in (8, 32):
            g = rng()
            cases.append(Case("switch_r", f"R switch n1*n2={n1 * n2}, 0..{r}",
                              draw(g, "binomial", n1, r), draw(g, "binomial", n2, r, 0.3), r))
    for (n1, n2) in ((10000, 10000), (10000, 9999), (10001, 10000), (10000, 50),
                     (10001, 50), (10000, 7), (10001, 7), (5, 20000)):
        for r in (1, 32):
            g = rng()
            cases.append(Case("switch_scipy", f"SciPy switch max={max(n1, n2)}, 0..{r}",
                              draw(g, "normal", n1, r), draw(g, "normal", n2, r, 0.02 * r + 0.01), r))

    # SciPy's exact branch fails numerically for equal sizes with D = 1/n
    # (the two-sided formula gives 1.0000000000000002) and falls back to asymp.
    for n, r in ((5, 8), (7, 1), (13, 32), (30, 8), (36, 256), (100, 8), (999, 32),
                 (5000, 8), (10000, 256)):
        g = rng()
        x = draw(g, "uniform", n, r)
        y = x.copy()
        # Move one sample from the smallest value to the largest: D = 1/n.
        i = int(np.argmin(y))
        y[i] = r
        cases.append(Case("scipy_fallback", f"equal sizes n={n}, D=1/n, 0..{r}", x, y, r))

    # Consecutive windows of an autocorrelated random walk (the paper's signal).
    for r, w in ((8, 500), (32, 3000), (8, 9000), (32, 16000)):
        g = rng()
        s = random_walk(g, 2 * w, r)
        cases.append(Case("random_walk", f"consecutive windows w={w} of a random walk on 0..{r}",
                          s[:w], s[w:], r))
    for r, w in ((32, 40), (8, 90)):
        g = rng()
        s = random_walk(g, 2 * w, r)
        cases.append(Case("random_walk", f"consecutive windows w={w} of a random walk on 0..{r}",
                          s[:w], s[w:], r))

    # Regime change: the second window has a different level.
    for r, w in ((8, 200), (32, 5000), (256, 11000)):
        g = rng()
        cases.append(Case("regime_change", f"level shift between windows, w={w}, 0..{r}",
                          draw(g, "binomial", w, r), draw(g, "binomial", w, r, r * 0.1 + 1), r))

    # Imbalanced sizes.
    for (n1, n2), r in (((5, 15000), 8), ((7, 9000), 32), ((20000, 11), 256), ((6, 1600), 1)):
        g = rng()
        cases.append(Case("imbalanced", f"{n1} vs {n2}, 0..{r}",
                          draw(g, "poisson", n1, r), draw(g, "poisson", n2, r), r))

    # Near the decision boundary: search deterministic seeds for p near 0.05
    # under each method's regime.
    targets = [((15, 17), 8), ((40, 44), 1), ((99, 101), 32), ((300, 280), 8),
               ((2000, 2000), 32), ((12000, 12000), 8), ((20000, 15000), 256)]
    for (n1, n2), r in targets:
        found = 0
        for trial in range(4000):
            g = np.random.default_rng(900000 + 1000 * n1 + trial)
            s = 0.02 + 0.6 * (trial % 40) / 40 * max(r / 8.0, 0.5) / math.sqrt(min(n1, n2) / 10.0)
            x = draw(g, "normal", n1, r)
            y = draw(g, "normal", n2, r, s)
            p = stats.ks_2samp(x, y).pvalue
            if 0.03 < p < 0.08:
                cases.append(Case("borderline", f"p near 0.05 (trial {trial}), {n1}/{n2}, 0..{r}",
                                  x, y, r))
                found += 1
                if found == 2:
                    break
    return cases


def histogram(a, value_max):
    return np.bincount(a, minlength=value_max + 1)


def exact_d(h1, h2):
    n1, n2 = int(h1.sum()), int(h2.sum())
    c1, c2 = np.cumsum(h1), np.cumsum(h2)
    num = int(np.max(np.abs(n2 * c1 - n1 * c2)))
    return num, n1 * n2


def matlab_p(num, n1, n2):
    """MATLAB kstest2's two-sided asymptotic p-value, evaluated as the shared
    reference table did: 101-term series, libm exp, numpy.sum."""
    d = num / (n1 * n2)
    en = n1 * n2 / (n1 + n2)
    se = math.sqrt(en)
    lam = max((se + 0.12 + 0.11 / se) * d, 0)
    j = np.arange(1, 102)
    terms = (-1.0) ** (j - 1) * np.array([math.exp(v) for v in (-2 * lam * lam * j ** 2)])
    return min(max(2 * np.sum(terms), 0.0), 1.0)


def scipy_columns(x, y):
    out = {}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = stats.ks_2samp(x, y)
    fell_back = any("Exact calculation unsuccessful" in str(m.message) for m in w)
    n1, n2 = len(x), len(y)
    if fell_back:
        method = "asymp(fallback)"
    elif max(n1, n2) <= 10000:
        method = "exact"
    else:
        method = "asymp"
    out["d_scipy"] = repr(float(res.statistic))
    out["p_scipy_auto"] = repr(float(res.pvalue))
    out["scipy_auto_method"] = method
    out["p_scipy_asymp"] = repr(float(stats.ks_2samp(x, y, method="asymp").pvalue))
    out["p_scipy_exact"] = ""
    if max(n1, n2) <= 10000 and not fell_back:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["p_scipy_exact"] = repr(float(stats.ks_2samp(x, y, method="exact").pvalue))
    return out


def libm_golden(path):
    """Reference values for the Go elementary functions (deterministic)."""
    from decimal import Decimal, getcontext
    from fractions import Fraction

    getcontext().prec = 80
    g = np.random.default_rng(4242)
    rows = []
    # exp: glibc's own result, over the ranges the p-value code uses,
    # including |x| >= 512 (glibc's special case) and subnormal results.
    xs = list(-g.random(300) * 40) + list(-g.random(150) * 745.2) + list((g.random(100) - 0.5) * 8) \
        + list(g.random(50) * 709.7) + list((g.random(30) - 0.5) * 1e-9) + [0.0, -745.1, -744.5, 709.78]
    for x in xs:
        rows.append(("exp", float(x).hex(), 0, math.exp(x).hex()))
    # log: correctly rounded.
    for x in list(g.random(200) * 3) + list(1 + (g.random(100) - 0.5) * 0.06) + list(g.random(100) * 1e5) \
            + list(g.random(50) * 1e-6):
        x = float(x)
        if x > 0:
            rows.append(("log", x.hex(), 0, float(Decimal(x).ln()).hex()))
    # x^n: correctly rounded (exact rational, then one rounding).
    for _ in range(300):
        b = float(g.uniform(0.3, 1.0)) if g.random() < 0.8 else float(g.uniform(0, 3))
        n = int(g.integers(0, 40)) if g.random() < 0.6 else int(g.integers(40, 3000))
        try:
            want = float(Fraction(b) ** n)
        except OverflowError:
            continue
        rows.append(("powi", b.hex(), n, want.hex()))
    # x^1.5 = x*sqrt(x): correctly rounded.
    for x in list(g.random(100) * 2) + list(g.integers(1, 200000, 100).astype(float)):
        x = float(x)
        rows.append(("pow15", x.hex(), 0, float(Decimal(x) * Decimal(x).sqrt()).hex()))
    # scipy.stats.kstwo.sf(x, n) across all of _kolmogn's branches, and
    # scipy.special.smirnov(n, x) (the one-sided exact tail).
    from scipy import special
    for n in (1, 2, 3, 5, 10, 11, 50, 139, 140, 141, 300, 1000, 5000, 25000, 100000, 100001):
        xs = list(np.exp(g.uniform(np.log(0.2 / n), 0, 14))) + [0.5 / n, 1.0 / n, 1 - 1.0 / n, 0.5, 0.999]
        for x in xs:
            x = float(x)
            rows.append(("kstwo_sf", x.hex(), n, float(stats.kstwo.sf(x, n)).hex()))
        for x in list(np.exp(g.uniform(np.log(0.5 / n), 0, 6))) + [1.0 / n, 0.5]:
            x = float(x)
            rows.append(("smirnov", x.hex(), n, float(special.smirnov(n, x)).hex()))
    # R's lgamma at integers (R's own lgammafn), used by R's exact p-value.
    ns = list(range(1, 301)) + list(range(301, 20002, 97)) + [10001, 20001]
    out = subprocess.run(["Rscript", "-e",
                          "cat(sprintf('%a', lgamma(as.numeric(commandArgs(TRUE)))), sep='\\n')",
                          *map(str, ns)], check=True, capture_output=True, text=True).stdout.split()
    for n, v in zip(ns, out):
        rows.append(("r_lgamma", float(n).hex(), n, float.fromhex(v).hex()))
    with open(path, "w", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["kind", "x", "n", "want"])
        wr.writerows(rows)


def main():
    libm_golden(os.path.join(HERE, "libm_golden.csv"))
    cases = build_cases()
    samples_path = os.path.join(HERE, "more_refs_samples.csv")
    with open(samples_path, "w", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["case_id", "sample", "value", "count"])
        for i, c in enumerate(cases, 1):
            for s, a in ((1, c.x), (2, c.y)):
                h = histogram(a, c.value_max)
                for v in np.nonzero(h)[0]:
                    wr.writerow([i, s, int(v), int(h[v])])

    with tempfile.TemporaryDirectory() as tmp:
        rout = os.path.join(tmp, "r.csv")
        subprocess.run(["Rscript", os.path.join(HERE, "make_refs.R"), samples_path, rout], check=True)
        rrows = {row["case_id"]: row for row in csv.DictReader(open(rout))}

    cols = ["case_id", "family", "description", "n1", "n2", "value_max", "distinct_values_pooled",
            "d_num", "d_den", "d_scipy", "p_scipy_auto", "scipy_auto_method", "p_scipy_asymp",
            "p_scipy_exact", "p_matlab_style_asymp", "decision_scipy_auto", "r_version",
            "p_r_default", "r_default_method", "d_r", "decision_r_default", "decision_matlab",
            "scipy_version", "numpy_version"]
    out_path = os.path.join(HERE, "more_refs.csv")
    with open(out_path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        wr.writeheader()
        for i, c in enumerate(cases, 1):
            h1, h2 = histogram(c.x, c.value_max), histogram(c.y, c.value_max)
            num, den = exact_d(h1, h2)
            row = {
                "case_id": i, "family": c.family, "description": c.desc,
                "n1": len(c.x), "n2": len(c.y), "value_max": c.value_max,
                "distinct_values_pooled": int(np.count_nonzero(h1 + h2)),
                "d_num": num, "d_den": den,
            }
            row.update(scipy_columns(c.x, c.y))
            pm = matlab_p(num, len(c.x), len(c.y))
            row["p_matlab_style_asymp"] = repr(float(pm))
            rr = rrows[str(i)]
            row["r_version"] = rr["r_version"]
            row["p_r_default"] = rr["p_r_default"]
            row["r_default_method"] = rr["r_default_method"]
            row["d_r"] = rr["d_r"]
            # R 4.2.2 returns NA when its floating-point D exceeds 1 (cumsum
            # of 1/n steps can end at 1.0000000000000002); keep that visible.
            dec = lambda p: "NA" if p == "NA" else ("reject" if float(p) < ALPHA else "hit")  # noqa: E731
            row["decision_scipy_auto"] = dec(row["p_scipy_auto"])
            row["decision_r_default"] = dec(row["p_r_default"])
            row["decision_matlab"] = dec(pm)
            row["scipy_version"] = scipy.__version__
            row["numpy_version"] = np.__version__
            wr.writerow(row)
    print(f"wrote {len(cases)} cases to {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
