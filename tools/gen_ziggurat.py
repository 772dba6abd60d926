#!/usr/bin/env python3
"""Generate the ziggurat tables of `src/ziggurat/tables.rs` (standard normal, f64 and f32).

Usage (from the crate root):

    python3 tools/gen_ziggurat.py > src/ziggurat/tables.rs          # regenerate
    python3 tools/gen_ziggurat.py --check src/ziggurat/tables.rs    # exit 1 if stale

Only the Python standard library is used (`decimal` at 80 significant digits), so the output is
byte-for-byte reproducible on any Python 3.8+. The integration test
`tests/rng_distribution.rs::ziggurat_tables_are_reproducible` runs the `--check` form.

The math (Marsaglia & Tsang 2000, Doornik 2005 "ZIGNOR" layout, as in rand_distr):

* f(x) = exp(-x^2/2) is the unnormalised half-normal density on [0, inf).
* n layers of equal area v. Layer 0 is the base strip: the rectangle [0, r] x [0, f(r)] plus the
  tail {x > r, 0 < y < f(x)}, so v = r f(r) + T(r) with T(r) = sqrt(pi/2) erfc(r/sqrt 2).
* Layers 1..n-1 are rectangles [0, x_i] x [f(x_i), f(x_{i+1})] with x_i (f(x_{i+1}) - f(x_i)) = v,
  i.e. x_1 = r, x_{i+1} = f^-1(f(x_i) + v/x_i), and the top one must close exactly at f = 1:
  f(x_{n-1}) + v/x_{n-1} = 1, which fixes r (solved by bisection).
* The tables are X[0] = v/f(r) (the width of a rectangle of area v and height f(r): a uniform
  point in [0, X[0]) falls beyond r with probability T(r)/v, exactly the tail's share), X[i] = x_i
  for 1 <= i < n, X[n] = 0; F[i] = f(X[i]), with F[n] = 1. Each table therefore has n + 1 entries.

Each value is rounded correctly (round-half-even) from the 80-digit result to f64, or directly to
f32 for the f32 tables (no double rounding through f64), and printed as the shortest decimal string
that reads back as the same float, so clippy's `excessive_precision` lint stays quiet.
"""

import sys
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 80
ONE = Decimal(1)
TWO = Decimal(2)


def pi():
    """pi to the current precision (the recipe from the `decimal` module documentation)."""
    getcontext().prec += 2
    three = Decimal(3)
    lasts, t, s, n, na, d, da = 0, three, 3, 1, 0, 0, 24
    while s != lasts:
        lasts = s
        n, na = n + na, na + 8
        d, da = d + da, da + 32
        t = (t * n) / d
        s += t
    getcontext().prec -= 2
    return +s


PI = pi()


def f(x):
    """Unnormalised half-normal density exp(-x^2/2)."""
    return (-(x * x) / TWO).exp()


def f_inv(y):
    """Inverse of f on (0, 1]: sqrt(-2 ln y)."""
    return (-TWO * y.ln()).sqrt()


def erfc(z):
    """erfc(z) for moderate z > 0 by the positive series
    erf(z) = 2/sqrt(pi) exp(-z^2) sum_k 2^k z^(2k+1) / (1*3*...*(2k+1)),
    evaluated with 40 extra digits to absorb the cancellation in 1 - erf."""
    getcontext().prec += 40
    z2 = z * z
    term = z
    total = term
    k = 0
    eps = Decimal(10) ** (-(getcontext().prec + 5))
    while term > eps * total:
        k += 1
        term = term * 2 * z2 / (2 * k + 1)
        total += term
    erf = 2 / PI.sqrt() * (-z2).exp() * total
    result = 1 - erf
    getcontext().prec -= 40
    return +result


def tail_area(r):
    """Integral of f over (r, inf) = sqrt(pi/2) erfc(r / sqrt 2)."""
    return (PI / TWO).sqrt() * erfc(r / TWO.sqrt())


def layers(r, n):
    """Returns (v, [x_1 .. x_{n-1}], closure) for a trial r; closure = f(x_{n-1}) + v/x_{n-1} - 1,
    or +1 if some layer already overshoots f = 1 before the top (r too small)."""
    v = r * f(r) + tail_area(r)
    xs = [r]
    x = r
    for _ in range(n - 2):
        y = f(x) + v / x
        if y >= ONE:
            return v, xs, ONE
        x = f_inv(y)
        xs.append(x)
    return v, xs, f(x) + v / x - ONE


def solve(n, lo, hi):
    """Root r of the closure in [lo, hi]: bisection until both ends close without overshooting
    (where the closure is smooth in r), then the secant method to 70 digits."""
    _, _, c_lo = layers(lo, n)
    _, _, c_hi = layers(hi, n)
    assert c_lo > 0 > c_hi, "bracket does not contain the root"
    while c_lo == ONE or hi - lo > Decimal("1e-6"):
        mid = (lo + hi) / TWO
        _, _, c = layers(mid, n)
        if c > 0:
            lo, c_lo = mid, c
        else:
            hi, c_hi = mid, c
    r0, c0, r1, c1 = lo, c_lo, hi, c_hi
    for _ in range(100):
        r2 = r1 - c1 * (r1 - r0) / (c1 - c0)
        r0, c0 = r1, c1
        r1 = r2
        _, _, c1 = layers(r1, n)
        if abs(r1 - r0) < Decimal("1e-70") or c1 == 0:
            break
    else:
        raise AssertionError("secant iteration did not converge")
    assert lo <= r1 <= hi
    return r1


def tables(n, r):
    v, xs, closure = layers(r, n)
    x_tab = [v / f(r)] + xs + [Decimal(0)]
    f_tab = [f(x) for x in x_tab[:-1]] + [ONE]
    assert len(x_tab) == n + 1 and len(f_tab) == n + 1
    return v, x_tab, f_tab, closure


# ---- correct rounding and shortest printing -------------------------------------------------


def round_binary(d, mant_bits, min_exp):
    """Round the positive (or zero) Decimal d to the nearest binary float with `mant_bits`
    significand bits (ties to even); min_exp is the exponent of the smallest normal. Returns an
    exact Fraction. No overflow handling is needed for these tables."""
    q = Fraction(d)
    if q == 0:
        return Fraction(0)
    assert q > 0
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    # now 2^e <= q < 2^(e+1)
    e = max(e, min_exp)
    ulp = Fraction(2) ** (e - (mant_bits - 1))
    m = q / ulp
    lo = m.numerator // m.denominator
    rem = m - lo
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1):
        lo += 1
    return lo * ulp


def to_f64(d):
    return round_binary(d, 53, -1022)


def to_f32(d):
    return round_binary(d, 24, -126)


def shortest(value, rounder):
    """Shortest scientific-notation string s with rounder(Decimal(s)) == value (value exact)."""
    if value == 0:
        return "0.0"
    dv = Decimal(value.numerator) / Decimal(value.denominator)
    for digits in range(1, 20):
        s = "{:.{}e}".format(dv, digits - 1)
        if rounder(Decimal(s)) == value:
            return rust_literal(s)
    raise AssertionError("no round-trip representation")


def rust_literal(s):
    """Scientific string ('4.9286e-03') -> plain Rust float literal ('0.0049286')."""
    mant, exp = s.split("e")
    e = int(exp)
    digits = mant.replace(".", "")
    assert digits.isdigit() and -8 <= e < 8, s
    if e < 0:
        return "0." + "0" * (-e - 1) + digits
    int_part = digits[: e + 1].ljust(e + 1, "0")
    frac_part = digits[e + 1 :] or "0"
    return int_part + "." + frac_part


def f64s(d):
    return shortest(to_f64(d), to_f64)


def f32s(d):
    return shortest(to_f32(d), to_f32)


def emit_array(name, ty, values, fmt, doc):
    lines = []
    for line in doc:
        lines.append("/// " + line if line else "///")
    lines.append("#[rustfmt::skip]")
    lines.append("pub(crate) static {}: [{}; {}] = [".format(name, ty, len(values)))
    row = []
    for v in values:
        row.append(fmt(v) + ",")
        if len(row) == 4:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append("];")
    return lines


HEADER = """
//! Ziggurat tables for the standard normal (generated; do not edit by hand).
//!
//! Generated by `python3 tools/gen_ziggurat.py > src/ziggurat/tables.rs`; the test
//! `ziggurat_tables_are_reproducible` in `tests/rng_distribution.rs` re-runs the script
//! with `--check`. Layout (Doornik's ZIGNOR, as in rand_distr): `X[0] = v/f(r)`,
//! `X[1] = r`, `X[i+1] = f⁻¹(f(X[i]) + v/X[i])`, `X[n] = 0`,
//! `F[i] = f(X[i]) = exp(-X[i]²/2)`, `F[n] = 1`; every layer has area `v`.
//! Values are correctly rounded from 80-digit results.
"""


def generate():
    out = []
    out.extend(HEADER.strip("\n").split("\n"))
    specs = [
        ("64", 256, "f64", f64s, Decimal("3.6"), Decimal("3.7")),
        ("32", 128, "f32", f32s, Decimal("3.4"), Decimal("3.5")),
    ]
    for suffix, n, ty, fmt, lo, hi in specs:
        r = solve(n, lo, hi)
        v, x_tab, f_tab, closure = tables(n, r)
        assert abs(closure) < Decimal(10) ** -60, closure
        out.append("")
        out.append("/// Number of layers of the {} ziggurat.".format(ty))
        out.append("pub(crate) const N{}: usize = {};".format(suffix, n))
        out.append("/// Right edge `r` of the {} base layer (start of the tail).".format(ty))
        out.append("/// 40 digits: {}".format(format(r, ".40")))
        out.append("pub(crate) const R{}: {} = {};".format(suffix, ty, fmt(r)))
        out.append("/// Common area `v` of the {} layers under `exp(-x²/2)`.".format(ty))
        out.append("/// 40 digits: {}".format(format(v, ".40")))
        out.append("#[cfg_attr(not(test), allow(dead_code))] // read by the unit tests only")
        out.append("pub(crate) const V{}: {} = {};".format(suffix, ty, fmt(v)))
        out.extend(
            emit_array(
                "X{}".format(suffix),
                ty,
                x_tab,
                fmt,
                ["Layer right edges `X[i]` ({} layers, decreasing, `X[{}] = 0`).".format(n, n)],
            )
        )
        out.extend(
            emit_array(
                "F{}".format(suffix),
                ty,
                f_tab,
                fmt,
                ["`F[i] = exp(-X[i]²/2)` (increasing, `F[{}] = 1`).".format(n)],
            )
        )
    return "\n".join(out) + "\n"


def main(argv):
    text = generate()
    if len(argv) == 3 and argv[1] == "--check":
        with open(argv[2], encoding="utf-8") as fh:
            current = fh.read()
        if current != text:
            sys.stderr.write("{} is stale: re-run tools/gen_ziggurat.py\n".format(argv[2]))
            return 1
        print("{} is up to date".format(argv[2]))
        return 0
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
