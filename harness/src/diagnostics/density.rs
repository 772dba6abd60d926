//! Density estimates and their distance to a known density: 1-d and 2-d histograms (KL divergence, RMSE with per-bin Gauss–Legendre quadrature) and MATLAB `ksdensity`'s normal-kernel estimate (RMSE at its points).
//!
//! # Histograms
//!
//! An [`Axis`] cuts `[lo, hi]` into `bins` equal bins of width `w = (hi − lo)/bins`; bin `i` is
//! `[lo + i·w, lo + (i+1)·w)`, the last one closed at `hi`. A sample below `lo` or above `hi` is
//! counted as out of range ([`Histogram::below`], [`Histogram::above`],
//! [`Histogram2d::outside`]), never dropped silently. With `N` samples in total, `N_in` of them
//! in range, and count `c_i` in bin `i`:
//!
//! * the density estimate is `p̂_i = c_i / (N·w)` ([`Normalization::Normalized`]: `p̂` is a
//!   density on the whole line and the out-of-range samples are the missing mass) or
//!   `c_i / (N_in·w)` ([`Normalization::OverRange`]: `p̂` is the density of the samples
//!   conditioned on the range); in 2-d replace `w` by the cell area `w_x·w_y`;
//! * the reference `p` (a closure, possibly unnormalised) enters through its bin masses
//!   `M_i = ∫_{bin i} p`, computed by 8-point Gauss–Legendre quadrature on each bin (the tensor
//!   rule, 64 nodes, on each 2-d cell). The rule is exact for polynomials of degree ≤ 15; for a
//!   smooth `p` its error on a bin of width `w` is `O(w¹⁶ sup|p⁽¹⁶⁾|)` — for the standard normal with
//!   `w ≤ 0.5`, below 10⁻¹³ relative. Every node value must be finite and `≥ 0`.
//!
//! # KL divergence (Kullback & Leibler 1951; Cover & Thomas 2006, §2.3)
//!
//! [`Histogram::kl_divergence`] is the divergence of the binned, range-conditioned laws,
//!
//! ```text
//! KL(p̂ ‖ p) = Σ_{i : c_i > 0} p̂_i ln(p̂_i / q_i),   p̂_i = c_i / N_in,   q_i = M_i / Σ_j M_j.
//! ```
//!
//! * **Mass outside the range** is excluded from both sides: `p` is normalised over `[lo, hi]`
//!   only and out-of-range samples are left out of `p̂`, so `p` may be unnormalised and the result
//!   compares the two laws *conditioned on the range*. Choose a range holding all but a negligible
//!   part of both (and check [`Histogram::below`]/[`Histogram::above`]).
//! * **Empty bins** contribute `0·ln 0 = 0`; **no smoothing** is applied. A bin with `c_i > 0` but
//!   `q_i = 0` makes the divergence `+∞`.
//! * **Bias** of this plug-in estimator with exact samples: `2·N_in·KL` is the likelihood-ratio
//!   (G) statistic of the multinomial goodness-of-fit test, asymptotically `χ²` with `B − 1`
//!   degrees of freedom (`B` = bins of non-negligible mass; Wilks 1938), so
//!   `E[KL] ≈ (B − 1)/(2N_in)` and `sd[KL] ≈ √(2(B − 1))/(2N_in)`. A divergence is only
//!   meaningful well above that floor.
//! * Discretisation: the binned divergence is at most the continuous one (data-processing
//!   inequality); for smooth densities they differ by `O(w²)`.
//!
//! # RMSE of the density estimate (Ding et al. 2014, Table 1)
//!
//! ```text
//! RMSE = √( (1/B) Σ_{i=1}^{B} (p̂_i − p̄_i)² ),   p̄_i = M_i / w     (Normalized, p a density)
//!                                               p̄_i = M_i / (w Σ_j M_j)   (OverRange)
//! ```
//!
//! over all `B` bins (cells in 2-d), empty ones included. This is the root mean squared
//! difference between the histogram density `count/(n·width)` and the true density over the
//! bins of a fixed grid — the definition Ding et al. (2014, Table 1) most plausibly use. We
//! compare with the bin *average* `p̄_i` rather than the value at the bin centre, because
//! the histogram estimates the average: the centre value differs by `p''·w²/24`, a bias that
//! would not vanish with more samples. For exact samples each bin is binomial, so
//! `E[RMSE²] = (1/B) Σ_i P_i(1 − P_i)/(N w²)` with `P_i` the bin probability (with
//! `Normalized`); the tests check this.
//!
//! # Kernel density estimate (MATLAB `ksdensity`'s defaults)
//!
//! [`ksdensity`] reproduces what `[f, xi] = ksdensity(x)` returns for a sample `x` of size `n`:
//!
//! * a normal kernel, `f̂(x) = (1/(n u)) Σ_i φ((x − x_i)/u)`;
//! * the bandwidth `u = σ̂ (4/(3n))^{1/5}` with `σ̂ = median(|x_i − median(x)|)/0.6745`, the
//!   normal reference rule (Silverman 1986, §3.4; optimal for normal data) with the median
//!   absolute deviation as a robust sd (Bowman & Azzalini 1997) — [`ksdensity_bandwidth`];
//! * 100 equally spaced points from `min(x) − 3u` to `max(x) + 3u` (MATLAB pads the sample's
//!   range by 3 bandwidths on an unbounded support).
//!
//! [`KernelDensity::rmse`] is then `√((1/100) Σ_j (f̂(x_j) − p(x_j))²)` against a known density.
//! For exact samples of a density `p` its two parts are the smoothing bias `E f̂ − p ≈ u² p''/2`
//! and the sampling sd `√(p/(2√π n u))` (Wand & Jones 1995, §2.5): both `O(n^{−2/5})`.
//!
//! **Linear binning.** The direct sum ([`kde`]) costs `n·m` kernel evaluations, 10⁸ for 10⁶
//! draws; [`kde_binned`] instead splits each sample's unit mass between the two nearest nodes of
//! a grid of spacing `δ` (weights linear in the distance) and sums the kernel over the nodes
//! (Fan & Marron 1994; Wand & Jones 1995, App. D). Replacing `K(x − x_i)` by its linear
//! interpolation between the nodes changes it by at most `δ²/8 · sup|K''| = (δ/u)² φ(0)/(8u)`,
//! so `|f̂_binned − f̂| ≤ 0.05 (δ/u)²/u`; with `δ = u/256` that is `< 10⁻⁶/u` — under `3·10⁻⁵`
//! of the peak of a normal density at `n = 10⁶` (where `u ≈ 0.066` sd). The kernel is cut at
//! `10u` (`φ(10) < 10⁻²²`).
//!
//! # References
//!
//! * S. Kullback, R. A. Leibler (1951), "On information and sufficiency", *Ann. Math. Stat.* 22.
//! * T. M. Cover, J. A. Thomas (2006), *Elements of Information Theory*, 2nd ed., Wiley, §2.3.
//! * S. S. Wilks (1938), "The large-sample distribution of the likelihood ratio for testing
//!   composite hypotheses", *Ann. Math. Stat.* 9, 60–62.
//! * N. Ding, Y. Fang, R. Babbush, C. Chen, R. D. Skeel, H. Neven (2014), "Bayesian sampling
//!   using stochastic gradient thermostats", *NIPS 27*, Table 1.
//! * B. W. Silverman (1986), *Density Estimation for Statistics and Data Analysis*, Chapman &
//!   Hall, §3.4.
//! * A. W. Bowman, A. Azzalini (1997), *Applied Smoothing Techniques for Data Analysis*, Oxford
//!   (the bandwidth MATLAB's `ksdensity` documents).
//! * M. P. Wand, M. C. Jones (1995), *Kernel Smoothing*, Chapman & Hall, §2.5 and App. D.
//! * J. Fan, J. S. Marron (1994), "Fast implementations of nonparametric curve estimators",
//!   *J. Comput. Graph. Stat.* 3, 35–56.
//! * P. J. Davis, P. Rabinowitz (1984), *Methods of Numerical Integration*, 2nd ed., §2.7
//!   (Gauss–Legendre nodes and weights).

use sgmcmc_diagnostics::DiagnosticError;

/// How the histogram and the reference density are normalised for [`Histogram::rmse`] and
/// [`Histogram2d::rmse`] (the KL divergence always uses [`Normalization::OverRange`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normalization {
    /// `p` integrates to 1 over its whole support; `p̂_i = c_i/(N·w)` with `N` counting the
    /// out-of-range samples too.
    Normalized,
    /// `p` may be unnormalised; both sides are normalised to unit mass over the range:
    /// `p̂_i = c_i/(N_in·w)`, `p̄_i = M_i/(w·Σ_j M_j)`.
    OverRange,
}

/// `[lo, hi]` cut into `bins` equal bins (see the module docs for the edge convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    lo: f64,
    hi: f64,
    bins: usize,
}

/// Where a value falls on an [`Axis`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    /// Below `lo`.
    Below,
    /// In bin `i`.
    In(usize),
    /// Above `hi`.
    Above,
}

impl Axis {
    /// Requires `lo < hi`, both finite, `bins ≥ 1` and a finite, positive bin width.
    pub fn new(lo: f64, hi: f64, bins: usize) -> Result<Self, DiagnosticError> {
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(DiagnosticError::NonFinite);
        }
        if lo >= hi {
            return Err(DiagnosticError::InvalidArgument("the range needs lo < hi"));
        }
        if bins == 0 {
            return Err(DiagnosticError::InvalidArgument(
                "a histogram needs at least one bin",
            ));
        }
        let w = (hi - lo) / bins as f64;
        if !(w.is_finite() && w > 0.0) {
            return Err(DiagnosticError::InvalidArgument(
                "the bin width is 0 or not finite",
            ));
        }
        Ok(Axis { lo, hi, bins })
    }

    /// Lower end of the range.
    pub fn lo(&self) -> f64 {
        self.lo
    }

    /// Upper end of the range.
    pub fn hi(&self) -> f64 {
        self.hi
    }

    /// Number of bins.
    pub fn bins(&self) -> usize {
        self.bins
    }

    /// Bin width `(hi − lo)/bins`.
    pub fn width(&self) -> f64 {
        (self.hi - self.lo) / self.bins as f64
    }

    /// Edges `(a, b)` of bin `i` (`i < bins`; larger `i` extrapolate the grid).
    pub fn edges(&self, i: usize) -> (f64, f64) {
        let w = self.width();
        let a = self.lo + i as f64 * w;
        let b = if i + 1 == self.bins {
            self.hi
        } else {
            self.lo + (i + 1) as f64 * w
        };
        (a, b)
    }

    /// Centre of bin `i`.
    pub fn center(&self, i: usize) -> f64 {
        let (a, b) = self.edges(i);
        0.5 * (a + b)
    }

    /// The bin of a finite `x` (a NaN falls [`Bin::Above`]; callers check finiteness first).
    pub fn locate(&self, x: f64) -> Bin {
        if x < self.lo {
            Bin::Below
        } else if x <= self.hi {
            let i = ((x - self.lo) / self.width()) as usize;
            Bin::In(i.min(self.bins - 1))
        } else {
            Bin::Above
        }
    }
}

/// A 1-d histogram: an [`Axis`], the counts per bin and the out-of-range counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    axis: Axis,
    counts: Vec<u64>,
    below: u64,
    above: u64,
}

impl Histogram {
    /// An empty histogram on `axis`.
    pub fn new(axis: Axis) -> Self {
        Histogram {
            axis,
            counts: vec![0; axis.bins],
            below: 0,
            above: 0,
        }
    }

    /// The histogram of `samples` on `axis`. Requires every sample finite (else
    /// [`DiagnosticError::NonFinite`]); an empty slice gives an empty histogram.
    pub fn from_samples(axis: Axis, samples: &[f64]) -> Result<Self, DiagnosticError> {
        let mut h = Histogram::new(axis);
        h.extend(samples)?;
        Ok(h)
    }

    /// Counts one sample. Requires `x` finite; a non-finite `x` is rejected and not counted.
    pub fn add(&mut self, x: f64) -> Result<(), DiagnosticError> {
        if !x.is_finite() {
            return Err(DiagnosticError::NonFinite);
        }
        match self.axis.locate(x) {
            Bin::Below => self.below += 1,
            Bin::In(i) => self.counts[i] += 1,
            Bin::Above => self.above += 1,
        }
        Ok(())
    }

    /// Counts every sample. Requires all finite; otherwise nothing is counted.
    pub fn extend(&mut self, samples: &[f64]) -> Result<(), DiagnosticError> {
        if samples.iter().any(|x| !x.is_finite()) {
            return Err(DiagnosticError::NonFinite);
        }
        for &x in samples {
            self.add(x)?;
        }
        Ok(())
    }

    /// The axis.
    pub fn axis(&self) -> &Axis {
        &self.axis
    }

    /// Counts per bin.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Samples below `lo`.
    pub fn below(&self) -> u64 {
        self.below
    }

    /// Samples above `hi`.
    pub fn above(&self) -> u64 {
        self.above
    }

    /// Samples in range, `N_in`.
    pub fn in_range(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// All samples counted, `N = N_in + below + above`.
    pub fn total(&self) -> u64 {
        self.in_range() + self.below + self.above
    }

    /// Density estimate per bin, `c_i/(N·w)` or `c_i/(N_in·w)` (see [`Normalization`]).
    /// Requires a non-zero `N` (resp. `N_in`), else [`DiagnosticError::EmptyHistogram`].
    pub fn densities(&self, norm: Normalization) -> Result<Vec<f64>, DiagnosticError> {
        let n = match norm {
            Normalization::Normalized => self.total(),
            Normalization::OverRange => self.in_range(),
        };
        densities(&self.counts, n, self.axis.width())
    }

    /// Bin masses `M_i = ∫_{bin i} p` by 8-point Gauss–Legendre quadrature. Requires `p` finite
    /// and `≥ 0` at every node (else [`DiagnosticError::InvalidDensity`]).
    pub fn bin_masses<F: Fn(f64) -> f64>(&self, p: F) -> Result<Vec<f64>, DiagnosticError> {
        (0..self.axis.bins)
            .map(|i| {
                let (a, b) = self.axis.edges(i);
                gauss_legendre(a, b, &p)
            })
            .collect()
    }

    /// `KL(p̂ ‖ p)` of the range-conditioned binned laws, in nats (module docs). `p` may be
    /// unnormalised. Requires at least one sample in range ([`DiagnosticError::EmptyHistogram`])
    /// and `p` finite, `≥ 0` at every quadrature node with positive mass over the range
    /// ([`DiagnosticError::InvalidDensity`]). Returns `+∞` if a non-empty bin has zero mass.
    pub fn kl_divergence<F: Fn(f64) -> f64>(&self, p: F) -> Result<f64, DiagnosticError> {
        if self.in_range() == 0 {
            return Err(DiagnosticError::EmptyHistogram);
        }
        kl(&self.counts, &self.bin_masses(p)?)
    }

    /// RMSE between the density estimate and the bin averages of `p` over all bins (module
    /// docs). With [`Normalization::Normalized`], `p` must integrate to 1. Requires a non-empty
    /// histogram and a valid `p` as for [`Histogram::kl_divergence`].
    pub fn rmse<F: Fn(f64) -> f64>(
        &self,
        p: F,
        norm: Normalization,
    ) -> Result<f64, DiagnosticError> {
        let est = self.densities(norm)?;
        rmse(&est, &self.bin_masses(p)?, self.axis.width(), norm)
    }
}

/// A 2-d histogram on the cells of two axes, counts row-major (`ix·ny + iy`), plus the count of
/// samples outside the rectangle.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram2d {
    x: Axis,
    y: Axis,
    counts: Vec<u64>,
    outside: u64,
}

impl Histogram2d {
    /// An empty histogram on `x × y`. Requires `x.bins()·y.bins()` not to overflow.
    pub fn new(x: Axis, y: Axis) -> Result<Self, DiagnosticError> {
        let cells = x
            .bins
            .checked_mul(y.bins)
            .ok_or(DiagnosticError::InvalidArgument("too many cells"))?;
        Ok(Histogram2d {
            x,
            y,
            counts: vec![0; cells],
            outside: 0,
        })
    }

    /// The histogram of the pairs `(xs[k], ys[k])`. Requires `xs.len() = ys.len()` and every value
    /// finite.
    pub fn from_samples(x: Axis, y: Axis, xs: &[f64], ys: &[f64]) -> Result<Self, DiagnosticError> {
        if xs.len() != ys.len() {
            return Err(DiagnosticError::MismatchedLengths {
                expected: xs.len(),
                got: ys.len(),
            });
        }
        if xs.iter().chain(ys).any(|v| !v.is_finite()) {
            return Err(DiagnosticError::NonFinite);
        }
        let mut h = Histogram2d::new(x, y)?;
        for (&a, &b) in xs.iter().zip(ys) {
            h.add(a, b)?;
        }
        Ok(h)
    }

    /// Counts one sample. Requires both coordinates finite; otherwise it is not counted.
    pub fn add(&mut self, x: f64, y: f64) -> Result<(), DiagnosticError> {
        if !(x.is_finite() && y.is_finite()) {
            return Err(DiagnosticError::NonFinite);
        }
        match (self.x.locate(x), self.y.locate(y)) {
            (Bin::In(i), Bin::In(j)) => self.counts[i * self.y.bins + j] += 1,
            _ => self.outside += 1,
        }
        Ok(())
    }

    /// The first axis.
    pub fn x_axis(&self) -> &Axis {
        &self.x
    }

    /// The second axis.
    pub fn y_axis(&self) -> &Axis {
        &self.y
    }

    /// Counts per cell, row-major: cell `(ix, iy)` at `ix·ny + iy`.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Count of cell `(ix, iy)`, or `None` out of the grid.
    pub fn count(&self, ix: usize, iy: usize) -> Option<u64> {
        (ix < self.x.bins && iy < self.y.bins).then(|| self.counts[ix * self.y.bins + iy])
    }

    /// Samples outside the rectangle.
    pub fn outside(&self) -> u64 {
        self.outside
    }

    /// Samples inside the rectangle, `N_in`.
    pub fn in_range(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// All samples counted, `N`.
    pub fn total(&self) -> u64 {
        self.in_range() + self.outside
    }

    /// Cell area `w_x·w_y`.
    pub fn cell_area(&self) -> f64 {
        self.x.width() * self.y.width()
    }

    /// Density estimate per cell (row-major), `c/(N·A)` or `c/(N_in·A)`. Requires a non-zero
    /// `N` (resp. `N_in`).
    pub fn densities(&self, norm: Normalization) -> Result<Vec<f64>, DiagnosticError> {
        let n = match norm {
            Normalization::Normalized => self.total(),
            Normalization::OverRange => self.in_range(),
        };
        densities(&self.counts, n, self.cell_area())
    }

    /// Cell masses `∫∫_cell p` (row-major) by the 8×8 tensor Gauss–Legendre rule. Requires `p`
    /// finite and `≥ 0` at every node.
    pub fn cell_masses<F: Fn(f64, f64) -> f64>(&self, p: F) -> Result<Vec<f64>, DiagnosticError> {
        let mut out = Vec::with_capacity(self.counts.len());
        for i in 0..self.x.bins {
            let (xa, xb) = self.x.edges(i);
            for j in 0..self.y.bins {
                let (ya, yb) = self.y.edges(j);
                out.push(gauss_legendre_2d((xa, xb), (ya, yb), &p)?);
            }
        }
        Ok(out)
    }

    /// `KL(p̂ ‖ p)` of the rectangle-conditioned cell laws, as [`Histogram::kl_divergence`].
    pub fn kl_divergence<F: Fn(f64, f64) -> f64>(&self, p: F) -> Result<f64, DiagnosticError> {
        if self.in_range() == 0 {
            return Err(DiagnosticError::EmptyHistogram);
        }
        kl(&self.counts, &self.cell_masses(p)?)
    }

    /// RMSE between the density estimate and the cell averages of `p`, over all cells, as
    /// [`Histogram::rmse`].
    pub fn rmse<F: Fn(f64, f64) -> f64>(
        &self,
        p: F,
        norm: Normalization,
    ) -> Result<f64, DiagnosticError> {
        let est = self.densities(norm)?;
        rmse(&est, &self.cell_masses(p)?, self.cell_area(), norm)
    }
}

/// Points at which [`ksdensity`] evaluates its estimate (MATLAB's default).
pub const KSDENSITY_POINTS: usize = 100;

/// How far, in bandwidths, [`ksdensity`]'s evaluation grid extends beyond the smallest and the
/// largest sample (MATLAB's default for an unbounded support).
pub const KSDENSITY_EXTEND: f64 = 3.0;

/// Grid spacing of [`kde_binned`] in bandwidths, `δ = u/KDE_BINS_PER_BANDWIDTH` (module docs:
/// the binning error is then below `10⁻⁶/u`).
pub const KDE_BINS_PER_BANDWIDTH: f64 = 256.0;

/// Largest grid [`kde_binned`] uses (a wider sample range coarsens the grid; module docs).
const KDE_MAX_GRID: usize = 1 << 22;

/// Kernel offsets beyond which [`kde_binned`] drops the normal kernel (`φ(10) < 10⁻²²`).
const KDE_CUTOFF: f64 = 10.0;

/// A normal-kernel density estimate evaluated at a list of points.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelDensity {
    /// The bandwidth `u` (the standard deviation of the kernel).
    pub bandwidth: f64,
    /// The evaluation points `x_j`.
    pub points: Vec<f64>,
    /// The estimate `f̂(x_j)` at each point.
    pub density: Vec<f64>,
}

impl KernelDensity {
    /// RMSE against `p` at the evaluation points, `√((1/m) Σ_j (f̂(x_j) − p(x_j))²)`. Requires
    /// `p` finite at every point (else [`DiagnosticError::InvalidDensity`]).
    pub fn rmse<F: Fn(f64) -> f64>(&self, p: F) -> Result<f64, DiagnosticError> {
        let mut ss = 0.0;
        for (&x, &f) in self.points.iter().zip(&self.density) {
            let v = p(x);
            if !v.is_finite() {
                return Err(DiagnosticError::InvalidDensity(
                    "not finite at an evaluation point",
                ));
            }
            ss += (f - v).powi(2);
        }
        Ok((ss / self.points.len().max(1) as f64).sqrt())
    }
}

/// The median of `v` (the mean of the two middle values for an even length); `v` non-empty.
fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    let (lower, &mut mid, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        mid
    } else {
        let below = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (below + mid)
    }
}

/// MATLAB `ksdensity`'s default bandwidth for a normal kernel,
/// `u = σ̂ · (4/(3n))^{1/5}` with the robust scale `σ̂ = median(|x − median(x)|)/0.6745`
/// (Silverman's normal reference rule with the median absolute deviation for the sd; Bowman &
/// Azzalini 1997). Requires at least 2 finite samples not mostly equal (σ̂ > 0).
pub fn ksdensity_bandwidth(samples: &[f64]) -> Result<f64, DiagnosticError> {
    if samples.len() < 2 {
        return Err(DiagnosticError::TooFewSamples {
            needed: 2,
            got: samples.len(),
        });
    }
    if samples.iter().any(|x| !x.is_finite()) {
        return Err(DiagnosticError::NonFinite);
    }
    let mut v = samples.to_vec();
    let m = median_in_place(&mut v);
    for (d, &x) in v.iter_mut().zip(samples) {
        *d = (x - m).abs();
    }
    let sigma = median_in_place(&mut v) / 0.6745;
    if sigma <= 0.0 {
        return Err(DiagnosticError::InvalidArgument(
            "the median absolute deviation is 0 (more than half the samples are equal)",
        ));
    }
    Ok(sigma * (4.0 / (3.0 * samples.len() as f64)).powf(0.2))
}

/// Checks the input of a kernel density estimate: non-empty finite samples, a finite positive
/// bandwidth and finite points.
fn check_kde(samples: &[f64], bandwidth: f64, points: &[f64]) -> Result<(), DiagnosticError> {
    if samples.is_empty() {
        return Err(DiagnosticError::TooFewSamples { needed: 1, got: 0 });
    }
    if samples.iter().chain(points).any(|x| !x.is_finite()) {
        return Err(DiagnosticError::NonFinite);
    }
    if !(bandwidth.is_finite() && bandwidth > 0.0) {
        return Err(DiagnosticError::InvalidArgument(
            "a kernel bandwidth must be finite and positive",
        ));
    }
    Ok(())
}

/// The normal-kernel density estimate `f̂(x) = (1/(n u)) Σ_i φ((x − x_i)/u)` at each point, by
/// the direct `O(n·m)` sum. Requires non-empty finite samples and points and `u > 0` finite.
pub fn kde(samples: &[f64], bandwidth: f64, points: &[f64]) -> Result<Vec<f64>, DiagnosticError> {
    check_kde(samples, bandwidth, points)?;
    let norm = 1.0 / (samples.len() as f64 * bandwidth * (2.0 * std::f64::consts::PI).sqrt());
    Ok(points
        .iter()
        .map(|&x| {
            norm * samples
                .iter()
                .map(|&s| (-0.5 * ((x - s) / bandwidth).powi(2)).exp())
                .sum::<f64>()
        })
        .collect())
}

/// [`kde`] by linear binning (module docs): the samples' unit masses are split between the two
/// nearest nodes of a grid of spacing `δ = u/256` over `[min, max]` of the samples (coarser if
/// that would exceed 2²² nodes), and the kernel sum runs over the nodes within 10 `u` of each
/// point — `O(n + m·2560)` instead of `O(n·m)`. Same requirements as [`kde`].
pub fn kde_binned(
    samples: &[f64],
    bandwidth: f64,
    points: &[f64],
) -> Result<Vec<f64>, DiagnosticError> {
    check_kde(samples, bandwidth, points)?;
    let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let norm = 1.0 / (samples.len() as f64 * bandwidth * (2.0 * std::f64::consts::PI).sqrt());
    let kernel = |d: f64| (-0.5 * (d / bandwidth).powi(2)).exp();
    if hi == lo {
        // All mass at one point: the estimate is one kernel, no binning needed.
        return Ok(points
            .iter()
            .map(|&x| norm * samples.len() as f64 * kernel(x - lo))
            .collect());
    }
    let wanted = ((hi - lo) / bandwidth * KDE_BINS_PER_BANDWIDTH).ceil();
    let nodes = (wanted.min((KDE_MAX_GRID - 1) as f64) as usize) + 1;
    let delta = (hi - lo) / (nodes - 1) as f64;
    let mut weight = vec![0.0; nodes];
    for &s in samples {
        let t = (s - lo) / delta;
        let j = (t.floor() as usize).min(nodes - 2);
        let frac = t - j as f64;
        weight[j] += 1.0 - frac;
        weight[j + 1] += frac;
    }
    let reach = KDE_CUTOFF * bandwidth;
    Ok(points
        .iter()
        .map(|&x| {
            let first = ((x - reach - lo) / delta).ceil().max(0.0);
            let last = ((x + reach - lo) / delta).floor().min((nodes - 1) as f64);
            if last < first {
                return 0.0;
            }
            let sum: f64 = (first as usize..=last as usize)
                .map(|j| weight[j] * kernel(x - (lo + j as f64 * delta)))
                .sum();
            norm * sum
        })
        .collect())
}

/// MATLAB `ksdensity(x)` with its defaults: a normal kernel, [`ksdensity_bandwidth`], and
/// [`KSDENSITY_POINTS`] equally spaced points from `min(x) − 3u` to `max(x) + 3u`; evaluated by
/// [`kde_binned`]. Requires at least 2 finite samples with a positive median absolute deviation.
pub fn ksdensity(samples: &[f64]) -> Result<KernelDensity, DiagnosticError> {
    let u = ksdensity_bandwidth(samples)?;
    let lo = samples.iter().copied().fold(f64::INFINITY, f64::min) - KSDENSITY_EXTEND * u;
    let hi = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max) + KSDENSITY_EXTEND * u;
    let m = KSDENSITY_POINTS;
    let points: Vec<f64> = (0..m)
        .map(|j| lo + (hi - lo) * j as f64 / (m - 1) as f64)
        .collect();
    let density = kde_binned(samples, u, &points)?;
    Ok(KernelDensity {
        bandwidth: u,
        points,
        density,
    })
}

/// Nodes (positive half) and weights of the 8-point Gauss–Legendre rule on [−1, 1]
/// (Davis & Rabinowitz 1984, Table 2.7.1; the unit test recomputes them as roots of P₈).
const GL8: [(f64, f64); 4] = [
    (0.183_434_642_495_649_8, 0.362_683_783_378_362),
    (0.525_532_409_916_329, 0.313_706_645_877_887_3),
    (0.796_666_477_413_626_7, 0.222_381_034_453_374_5),
    (0.960_289_856_497_536_3, 0.101_228_536_290_376_3),
];

/// The 8 nodes and weights of the rule mapped to `[a, b]` (weights include the Jacobian).
fn gl_nodes(a: f64, b: f64) -> impl Iterator<Item = (f64, f64)> {
    let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
    GL8.iter()
        .flat_map(move |&(x, w)| [(mid - half * x, w * half), (mid + half * x, w * half)])
}

/// A density value at a quadrature node: finite and `≥ 0`.
fn checked(v: f64) -> Result<f64, DiagnosticError> {
    if !v.is_finite() {
        Err(DiagnosticError::InvalidDensity(
            "not finite at a quadrature node",
        ))
    } else if v < 0.0 {
        Err(DiagnosticError::InvalidDensity(
            "negative at a quadrature node",
        ))
    } else {
        Ok(v)
    }
}

/// `∫_a^b f` by the 8-point rule.
fn gauss_legendre<F: Fn(f64) -> f64>(a: f64, b: f64, f: F) -> Result<f64, DiagnosticError> {
    gl_nodes(a, b).try_fold(0.0, |sum, (x, w)| Ok(sum + w * checked(f(x))?))
}

/// `∫∫ f` over the rectangle `x × y` by the 8×8 tensor rule.
fn gauss_legendre_2d<F: Fn(f64, f64) -> f64>(
    x: (f64, f64),
    y: (f64, f64),
    f: F,
) -> Result<f64, DiagnosticError> {
    gl_nodes(x.0, x.1).try_fold(0.0, |sum, (xi, wx)| {
        gl_nodes(y.0, y.1).try_fold(sum, |sum, (yj, wy)| Ok(sum + wx * wy * checked(f(xi, yj))?))
    })
}

fn densities(counts: &[u64], n: u64, size: f64) -> Result<Vec<f64>, DiagnosticError> {
    if n == 0 {
        return Err(DiagnosticError::EmptyHistogram);
    }
    let scale = 1.0 / (n as f64 * size);
    Ok(counts.iter().map(|&c| c as f64 * scale).collect())
}

fn total_mass(masses: &[f64]) -> Result<f64, DiagnosticError> {
    let z: f64 = masses.iter().sum();
    if z > 0.0 && z.is_finite() {
        Ok(z)
    } else {
        Err(DiagnosticError::InvalidDensity(
            "no finite positive mass over the range",
        ))
    }
}

fn kl(counts: &[u64], masses: &[f64]) -> Result<f64, DiagnosticError> {
    let z = total_mass(masses)?;
    let n = counts.iter().sum::<u64>() as f64;
    let mut sum = 0.0;
    for (&c, &m) in counts.iter().zip(masses) {
        if c == 0 {
            continue;
        }
        if m <= 0.0 {
            return Ok(f64::INFINITY);
        }
        let ph = c as f64 / n;
        sum += ph * (ph / (m / z)).ln();
    }
    // Gibbs' inequality: a negative value is round-off.
    Ok(sum.max(0.0))
}

fn rmse(
    est: &[f64],
    masses: &[f64],
    size: f64,
    norm: Normalization,
) -> Result<f64, DiagnosticError> {
    // Node values are finite, so a mass can only be infinite by overflow.
    if masses.iter().any(|m| !m.is_finite()) {
        return Err(DiagnosticError::InvalidDensity(
            "its integral over a bin overflows",
        ));
    }
    let z = match norm {
        Normalization::Normalized => 1.0,
        Normalization::OverRange => total_mass(masses)?,
    };
    let ss: f64 = est
        .iter()
        .zip(masses)
        .map(|(e, m)| (e - m / (z * size)).powi(2))
        .sum();
    Ok((ss / est.len() as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::testing::{gamma, normals};
    use rand_pcg::Pcg64;
    use sgmcmc::rng::standard_normal_f64;
    use std::f64::consts::PI;

    fn std_normal(x: f64) -> f64 {
        (-0.5 * x * x).exp() / (2.0 * PI).sqrt()
    }

    #[test]
    fn gauss_legendre_nodes_are_the_roots_of_p8_and_exact_to_degree_15() {
        // P₈ by the three-term recurrence.
        let p8 = |x: f64| {
            let (mut p0, mut p1) = (1.0, x);
            for k in 1..8 {
                let p2 = ((2 * k + 1) as f64 * x * p1 - k as f64 * p0) / (k + 1) as f64;
                (p0, p1) = (p1, p2);
            }
            p1
        };
        for &(x, _) in &GL8 {
            assert!(p8(x).abs() < 1e-15, "P8({x}) = {}", p8(x));
        }
        // ∫_{−1}^{3} (x^d + 3^d) dx: the shift keeps the integrand ≥ 0, as the rule requires.
        for deg in 0..=15 {
            let shift = 3f64.powi(deg);
            let exact =
                (3f64.powi(deg + 1) - (-1f64).powi(deg + 1)) / (deg + 1) as f64 + 4.0 * shift;
            let q = gauss_legendre(-1.0, 3.0, |x| x.powi(deg) + shift).unwrap();
            assert!(
                (q - exact).abs() < 1e-13 * exact,
                "degree {deg}: {q} vs {exact}"
            );
        }
        // The standard normal over [−8, 8] in bins of width 0.5: mass 1 − 2Φ(−8) = 1 − 1.2e-15.
        let axis = Axis::new(-8.0, 8.0, 32).unwrap();
        let total: f64 = Histogram::new(axis)
            .bin_masses(std_normal)
            .unwrap()
            .iter()
            .sum();
        assert!((total - 1.0).abs() < 1e-14, "{total}");
        assert_eq!(
            gauss_legendre(0.0, 1.0, |_| -1.0),
            Err(DiagnosticError::InvalidDensity(
                "negative at a quadrature node"
            ))
        );
    }

    /// Relative sd of the RMSE of exact samples, ½·√(2ΣP_i²)/ΣP_i (see the RMSE tests).
    fn relative_sd_of_rmse(probs: &[f64]) -> f64 {
        let (s1, s2) = probs
            .iter()
            .fold((0.0, 0.0), |(a, b), p| (a + p, b + p * p));
        0.5 * (2.0 * s2).sqrt() / s1
    }

    /// Bin probabilities of a normalised density (the quadrature of `bin_masses`).
    fn bin_probabilities(axis: &Axis, p: impl Fn(f64) -> f64) -> Vec<f64> {
        Histogram::new(*axis).bin_masses(p).unwrap()
    }

    #[test]
    fn axis_edges_and_out_of_range_counts() {
        let axis = Axis::new(0.0, 1.0, 4).unwrap();
        assert_eq!(axis.width(), 0.25);
        assert_eq!(axis.edges(3), (0.75, 1.0));
        assert_eq!(axis.center(0), 0.125);
        assert_eq!(axis.locate(0.0), Bin::In(0));
        assert_eq!(axis.locate(0.25), Bin::In(1));
        assert_eq!(axis.locate(1.0), Bin::In(3));
        assert_eq!(axis.locate(-1e-300), Bin::Below);
        assert_eq!(axis.locate(1.0 + 1e-15), Bin::Above);
        let h = Histogram::from_samples(axis, &[-1.0, 0.1, 0.1, 0.5, 0.99, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(h.counts(), &[2, 0, 1, 2]);
        assert_eq!(
            (h.below(), h.above(), h.in_range(), h.total()),
            (1, 2, 5, 8)
        );
        // c/(N·w): 2/(8·0.25) = 1; over the range: 2/(5·0.25) = 1.6.
        assert_eq!(h.densities(Normalization::Normalized).unwrap()[0], 1.0);
        assert_eq!(h.densities(Normalization::OverRange).unwrap()[0], 1.6);
        assert!(Axis::new(1.0, 1.0, 3).is_err());
        assert!(Axis::new(0.0, 1.0, 0).is_err());
        assert_eq!(
            Axis::new(0.0, f64::INFINITY, 3),
            Err(DiagnosticError::NonFinite)
        );
    }

    /// KL and RMSE by hand on two bins of [0, 2] against p(x) = x (unnormalised; mass ½ on
    /// [0, 1], 3/2 on [1, 2], so q = (¼, ¾)). Counts (1, 3): p̂ = q, KL = 0. Counts (3, 1):
    /// KL = ¾ ln(¾/¼) + ¼ ln(¼/¾) = ½ ln 3. RMSE over the range: p̂ = (¾, ¼) per unit width vs
    /// p̄ = (¼, ¾), so RMSE = ½.
    #[test]
    fn kl_and_rmse_hand_computed() {
        let axis = Axis::new(0.0, 2.0, 2).unwrap();
        let p = |x: f64| x;
        let h = Histogram::from_samples(axis, &[0.5, 1.5, 1.5, 1.5]).unwrap();
        assert!(h.kl_divergence(p).unwrap().abs() < 1e-15);
        let h = Histogram::from_samples(axis, &[0.5, 0.5, 0.5, 1.5]).unwrap();
        assert!((h.kl_divergence(p).unwrap() - 0.5 * 3f64.ln()).abs() < 1e-15);
        assert!((h.rmse(p, Normalization::OverRange).unwrap() - 0.5).abs() < 1e-15);
        // Zero reference mass under a non-empty bin: infinite divergence.
        assert_eq!(
            h.kl_divergence(|x| if x > 1.0 { 1.0 } else { 0.0 }),
            Ok(f64::INFINITY)
        );
    }

    #[test]
    fn density_rejects_bad_input() {
        let axis = Axis::new(-1.0, 1.0, 4).unwrap();
        let empty = Histogram::new(axis);
        assert_eq!(
            empty.kl_divergence(std_normal),
            Err(DiagnosticError::EmptyHistogram)
        );
        assert_eq!(
            empty.rmse(std_normal, Normalization::Normalized),
            Err(DiagnosticError::EmptyHistogram)
        );
        let outside = Histogram::from_samples(axis, &[5.0]).unwrap();
        assert_eq!(
            outside.kl_divergence(std_normal),
            Err(DiagnosticError::EmptyHistogram)
        );
        assert_eq!(
            Histogram::from_samples(axis, &[0.0, f64::NAN]),
            Err(DiagnosticError::NonFinite)
        );
        let h = Histogram::from_samples(axis, &[0.0, 0.5]).unwrap();
        assert!(matches!(
            h.kl_divergence(|x| x),
            Err(DiagnosticError::InvalidDensity(_))
        ));
        assert!(matches!(
            h.kl_divergence(|_| f64::NAN),
            Err(DiagnosticError::InvalidDensity(_))
        ));
        assert!(matches!(
            h.kl_divergence(|_| 0.0),
            Err(DiagnosticError::InvalidDensity(_))
        ));
        let y = Axis::new(0.0, 1.0, 2).unwrap();
        assert!(matches!(
            Histogram2d::from_samples(axis, y, &[0.0], &[]),
            Err(DiagnosticError::MismatchedLengths { .. })
        ));
        assert_eq!(
            Histogram2d::from_samples(axis, y, &[0.0], &[f64::INFINITY]),
            Err(DiagnosticError::NonFinite)
        );
        let h2 = Histogram2d::new(axis, y).unwrap();
        assert_eq!(
            h2.kl_divergence(|_, _| 1.0),
            Err(DiagnosticError::EmptyHistogram)
        );
    }

    /// Exact N(0,1) samples on [−3, 3] with B = 30 bins: `2·N_in·KL` is the G statistic,
    /// ≈ χ²₂₉ (mean 29, variance 58; the smallest expected bin count at n = 10⁴ is ≈ 12, enough
    /// for the χ² approximation). The mean over R = 10 replicates has sd √(58/10) = 2.4, so we
    /// assert |mean − 29| < 4·2.4 at each n = 10⁴, 10⁵, 10⁶ — i.e. KL ≈ 29/(2n), the 1/n rate.
    #[test]
    fn kl_of_exact_samples_decays_like_bins_over_2n() {
        let axis = Axis::new(-3.0, 3.0, 30).unwrap();
        let mut rng = Pcg64::new(2024, 3);
        let reps = 10;
        let dof = 29.0;
        for n in [10_000, 100_000, 1_000_000] {
            let mut sum_g = 0.0;
            let mut sum_kl = 0.0;
            for _ in 0..reps {
                let h = Histogram::from_samples(axis, &normals(n, 0.0, 1.0, &mut rng)).unwrap();
                let kl = h.kl_divergence(std_normal).unwrap();
                sum_kl += kl;
                sum_g += 2.0 * h.in_range() as f64 * kl;
            }
            let mean_g = sum_g / reps as f64;
            println!(
                "n = {n}: mean KL {:.3e} (expected ≈ {:.3e}), mean 2·N_in·KL = {mean_g:.2} (29)",
                sum_kl / reps as f64,
                dof / (2.0 * n as f64)
            );
            assert!(
                (mean_g - dof).abs() < 4.0 * (2.0 * dof / reps as f64).sqrt(),
                "n = {n}"
            );
        }
    }

    /// Samples of N(δ, 1), δ = 0.5, against p = N(0, 1): KL(N(δ,1) ‖ N(0,1)) = δ²/2 = 0.125.
    /// Range [−7, 7.5] (truncated mass < 10⁻¹¹), w = 0.05, B = 290 bins, n = 10⁶.
    /// Error budget: sampling sd ≈ √(var_q[ln(q/p)]/n) = δ/√n = 5·10⁻⁴; plug-in bias
    /// ≤ (B−1)/(2n) = 1.4·10⁻⁴; binning lowers the divergence by ≈ w²δ²/24 = 2.6·10⁻⁵ and the
    /// quadrature error is < 10⁻¹³. Assert |KL̂ − δ²/2| < 4 sd + bias bound = 2.1·10⁻³ (1.7 %).
    /// The divergence is also invariant to the normalisation of p.
    #[test]
    fn kl_of_shifted_samples_matches_the_analytic_normal_kl() {
        let (delta, n) = (0.5, 1_000_000);
        let axis = Axis::new(-7.0, 7.5, 290).unwrap();
        let mut rng = Pcg64::new(11, 4);
        let h = Histogram::from_samples(axis, &normals(n, delta, 1.0, &mut rng)).unwrap();
        let kl = h.kl_divergence(std_normal).unwrap();
        let truth = delta * delta / 2.0;
        let tol = 4.0 * delta / (n as f64).sqrt() + 289.0 / (2.0 * n as f64);
        println!("shifted KL {kl:.6} vs analytic {truth} (tolerance {tol:.2e})");
        assert!((kl - truth).abs() < tol);
        let unnormalised = h.kl_divergence(|x| 7.3 * (-0.5 * x * x).exp()).unwrap();
        assert!((unnormalised - kl).abs() < 1e-12);
    }

    /// RMSE of exact N(0,1) samples (n = 10⁵, [−4, 4], B = 100, w = 0.08) against its
    /// expectation E[RMSE²] = (1/B) Σ P_i(1 − P_i)/(n w²) (binomial bins). Each squared error
    /// (c_i − nP_i)² has variance ≈ 2(nP_i)², so RMSE² has relative sd √(2ΣP_i²)/ΣP_i and RMSE
    /// half that (here ≈ 10.6 %, `relative_sd`); assert |ratio − 1| < 4 of those. Samples of N(0.3, 1)
    /// against N(0, 1) must be far off: their RMSE is about the deterministic
    /// √((1/B) Σ (p̄_δ,i − p̄_i)²) (≈ 0.039 here, 10× the sampling RMSE); assert within 15 % of it
    /// and > 5× the exact-sample RMSE.
    #[test]
    fn rmse_separates_exact_from_wrong_samples() {
        let (n, w) = (100_000, 0.08);
        let axis = Axis::new(-4.0, 4.0, 100).unwrap();
        let mut rng = Pcg64::new(8, 8);
        let exact = Histogram::from_samples(axis, &normals(n, 0.0, 1.0, &mut rng)).unwrap();
        let rmse_exact = exact.rmse(std_normal, Normalization::Normalized).unwrap();
        let probs = bin_probabilities(&axis, std_normal);
        let expected =
            (probs.iter().map(|p| p * (1.0 - p)).sum::<f64>() / (100.0 * n as f64 * w * w)).sqrt();
        let wrong = Histogram::from_samples(axis, &normals(n, 0.3, 1.0, &mut rng)).unwrap();
        let rmse_wrong = wrong.rmse(std_normal, Normalization::Normalized).unwrap();
        let shifted = bin_probabilities(&axis, |x| std_normal(x - 0.3));
        let deterministic = (probs
            .iter()
            .zip(&shifted)
            .map(|(p, q)| ((p - q) / w).powi(2))
            .sum::<f64>()
            / 100.0)
            .sqrt();
        println!(
            "RMSE exact {rmse_exact:.5} (expected {expected:.5}), wrong {rmse_wrong:.5} \
             (deterministic part {deterministic:.5})"
        );
        let relative_sd = relative_sd_of_rmse(&probs);
        println!(
            "ratio {:.3}, relative sd {relative_sd:.3}",
            rmse_exact / expected
        );
        assert!((rmse_exact / expected - 1.0).abs() < 4.0 * relative_sd);
        assert!((rmse_wrong / deterministic - 1.0).abs() < 0.15);
        assert!(rmse_wrong > 5.0 * rmse_exact);
        // Over the range with an unnormalised p: the same up to the (tiny) mass outside [−4, 4].
        let over = exact
            .rmse(|x| 3.0 * std_normal(x), Normalization::OverRange)
            .unwrap();
        assert!((over - rmse_exact).abs() < 0.05 * rmse_exact);
    }

    /// Independent N(0,1) pairs on [−2, 2]², 8 × 8 cells (smallest cell ≈ 2·10⁻³ of the mass):
    /// `2·N_in·KL ≈ χ²₆₃`. Mean over 5 replicates of n = 2·10⁵: sd √(126/5) = 5.0, assert
    /// within 4 sd of 63.
    #[test]
    fn kl_2d_of_exact_samples_matches_the_chi_square_floor() {
        let x = Axis::new(-2.0, 2.0, 8).unwrap();
        let p = |a: f64, b: f64| std_normal(a) * std_normal(b);
        let mut rng = Pcg64::new(3, 30);
        let reps = 5;
        let mut sum_g = 0.0;
        for _ in 0..reps {
            let xs = normals(200_000, 0.0, 1.0, &mut rng);
            let ys = normals(200_000, 0.0, 1.0, &mut rng);
            let h = Histogram2d::from_samples(x, x, &xs, &ys).unwrap();
            sum_g += 2.0 * h.in_range() as f64 * h.kl_divergence(p).unwrap();
        }
        let mean_g = sum_g / reps as f64;
        println!("2-d: mean 2·N_in·KL = {mean_g:.2} (63)");
        assert!((mean_g - 63.0).abs() < 4.0 * (126.0f64 / reps as f64).sqrt());
    }

    /// Normal–Gamma (μ, γ): γ ~ Gamma(α = 3, rate β = 2), μ | γ ~ N(μ₀ = 1, 1/(κγ)), κ = 2, with
    /// density β^α/Γ(α) γ^{α−1} e^{−βγ} · √(κγ/2π) e^{−κγ(μ−μ₀)²/2} (Γ(3) = 2). Grid
    /// μ ∈ [−2, 4] × γ ∈ [0, 5], 30 × 25 cells, n = 10⁶ exact draws: the RMSE is checked against
    /// its binomial expectation (as in 1-d, within 4 relative sd of ≈ 5.7 %). Draws with
    /// γ ~ Gamma(3, 2.4) instead must give an RMSE > 3× larger.
    #[test]
    fn rmse_2d_normal_gamma() {
        let (alpha, beta, mu0, kappa): (f64, f64, f64, f64) = (3.0, 2.0, 1.0, 2.0);
        let density = |mu: f64, g: f64| {
            if g <= 0.0 {
                return 0.0;
            }
            beta.powf(alpha) / 2.0
                * g.powf(alpha - 1.0)
                * (-beta * g).exp()
                * (kappa * g / (2.0 * PI)).sqrt()
                * (-0.5 * kappa * g * (mu - mu0) * (mu - mu0)).exp()
        };
        let (mu_axis, g_axis) = (
            Axis::new(-2.0, 4.0, 30).unwrap(),
            Axis::new(0.0, 5.0, 25).unwrap(),
        );
        let draw = |rate: f64, n: usize, rng: &mut Pcg64| {
            let mut mus = Vec::with_capacity(n);
            let mut gs = Vec::with_capacity(n);
            for _ in 0..n {
                let g = gamma(alpha, rate, rng);
                mus.push(mu0 + standard_normal_f64(rng) / (kappa * g).sqrt());
                gs.push(g);
            }
            (mus, gs)
        };
        let n = 1_000_000;
        let mut rng = Pcg64::new(42, 42);
        let (mus, gs) = draw(beta, n, &mut rng);
        let h = Histogram2d::from_samples(mu_axis, g_axis, &mus, &gs).unwrap();
        let rmse = h.rmse(density, Normalization::Normalized).unwrap();
        let probs = h.cell_masses(density).unwrap();
        let cells = probs.len() as f64;
        let area = h.cell_area();
        let expected = (probs.iter().map(|p| p * (1.0 - p)).sum::<f64>()
            / (cells * n as f64 * area * area))
            .sqrt();
        let total_mass: f64 = probs.iter().sum();
        let (wm, wg) = draw(2.4, n, &mut rng);
        let wrong = Histogram2d::from_samples(mu_axis, g_axis, &wm, &wg)
            .unwrap()
            .rmse(density, Normalization::Normalized)
            .unwrap();
        println!(
            "Normal–Gamma: RMSE exact {rmse:.5} (expected {expected:.5}), wrong {wrong:.5}; \
             grid mass {total_mass:.5}, outside {}",
            h.outside()
        );
        let relative_sd = relative_sd_of_rmse(&probs);
        println!("ratio {:.3}, relative sd {relative_sd:.3}", rmse / expected);
        assert!((rmse / expected - 1.0).abs() < 4.0 * relative_sd);
        assert!(wrong > 3.0 * rmse);
        // The grid holds all but ≈ 0.5 % of the mass, and the out-of-range count agrees.
        let outside_share = h.outside() as f64 / n as f64;
        assert!(
            (outside_share - (1.0 - total_mass)).abs()
                < 5.0 * (outside_share / n as f64).sqrt() + 1e-4
        );
    }

    /// `ksdensity_bandwidth` by hand: for (1, 2, 3, 4, 10) the median is 3, the absolute
    /// deviations (2, 1, 0, 1, 7) have median 1, so u = (1/0.6745)·(4/15)^{1/5}; for the even,
    /// unsorted (4, 1, 3, 2) the median is 2.5, the deviations (1.5, 1.5, 0.5, 0.5) have median 1
    /// (the mean of the two middle values), so u = (1/0.6745)·(4/12)^{1/5}.
    #[test]
    fn ksdensity_bandwidth_hand_computed() {
        let u = ksdensity_bandwidth(&[1.0, 2.0, 3.0, 4.0, 10.0]).unwrap();
        assert!(
            (u - (4.0f64 / 15.0).powf(0.2) / 0.6745).abs() < 1e-15,
            "{u}"
        );
        let u = ksdensity_bandwidth(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert!((u - (1.0f64 / 3.0).powf(0.2) / 0.6745).abs() < 1e-15, "{u}");
        assert!(matches!(
            ksdensity_bandwidth(&[1.0, 1.0, 1.0, 2.0]),
            Err(DiagnosticError::InvalidArgument(_))
        ));
        assert_eq!(
            ksdensity_bandwidth(&[1.0]),
            Err(DiagnosticError::TooFewSamples { needed: 2, got: 1 })
        );
        assert_eq!(
            ksdensity_bandwidth(&[1.0, f64::NAN]),
            Err(DiagnosticError::NonFinite)
        );
        assert!(kde(&[0.0], 0.0, &[0.0]).is_err());
        assert!(kde_binned(&[], 1.0, &[0.0]).is_err());
    }

    /// Linear binning against the direct sum on 2·10⁴ draws of a two-component mixture (so the
    /// estimate has curvature everywhere), at 200 points spanning and overhanging the sample:
    /// the module docs bound the difference by 0.05 (δ/u)²/u with δ ≤ u/256.
    #[test]
    fn kde_binned_matches_the_direct_sum() {
        let mut rng = Pcg64::new(5, 55);
        let mut x = normals(10_000, 0.0, 1.0, &mut rng);
        x.extend(normals(10_000, 3.0, 0.5, &mut rng));
        let u = ksdensity_bandwidth(&x).unwrap();
        let points: Vec<f64> = (0..200).map(|j| -6.0 + 12.0 * j as f64 / 199.0).collect();
        let direct = kde(&x, u, &points).unwrap();
        let binned = kde_binned(&x, u, &points).unwrap();
        let bound = 0.05 / (256.0f64 * 256.0) / u;
        let worst = direct
            .iter()
            .zip(&binned)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!("u = {u:.4}, largest |binned − direct| = {worst:.2e} (bound {bound:.2e})");
        assert!(worst <= bound, "{worst} > {bound}");
        // A single repeated value: one kernel of unit mass.
        let one = kde_binned(&[2.0; 5], 0.5, &[2.0]).unwrap()[0];
        assert!((one - 1.0 / (0.5 * (2.0 * PI).sqrt())).abs() < 1e-15);
    }

    /// `ksdensity` of n = 10⁵ exact N(0, 1) draws against φ, R = 16 replicates. With a normal
    /// kernel everything is Gaussian: E f̂(x) = φ_s(x), s² = 1 + u², and
    /// E[K_u(x − X)²] = φ_r(x)/(2√π u), r² = 1 + u²/2, so the expected squared error at a point
    /// is (φ_s − φ)² + (φ_r/(2√π u) − φ_s²)/n (mostly the second, sampling part here). The
    /// errors at the 100 points are correlated over a few bandwidths and concentrated where φ is
    /// large, so one replicate's mean squared error averages only a handful of independent values
    /// and scatters around its expectation with a relative sd ≈ 0.4 (measured: 0.35–1.7 over the
    /// 16 replicates). The test is therefore
    /// a t-test: the mean over R of (mean squared error / expectation) within 4 of its standard
    /// errors (sample sd/√R) of 1. Draws of N(0.3, 1) are far off: their RMSE is at least 5× that
    /// of exact draws (≈ 0.04 against ≈ 0.002).
    #[test]
    fn ksdensity_of_normal_draws_matches_its_expected_error() {
        let n = 100_000;
        let mut rng = Pcg64::new(77, 7);
        let normal = |x: f64, sd: f64| (-0.5 * (x / sd).powi(2)).exp() / (sd * (2.0 * PI).sqrt());
        let reps = 16;
        let mut ratios = Vec::with_capacity(reps);
        let mut rmse_exact = 0.0;
        for _ in 0..reps {
            let x = normals(n, 0.0, 1.0, &mut rng);
            let est = ksdensity(&x).unwrap();
            let u = est.bandwidth;
            // The MAD-based sd has relative sd ≈ 1.17/√n (37 % efficiency), 0.37 % at
            // n = 10⁵: within 2 % is > 5 sd.
            let reference = (4.0 / (3.0 * n as f64)).powf(0.2);
            assert!((u / reference - 1.0).abs() < 0.02, "{u} vs {reference}");
            assert_eq!(est.points.len(), KSDENSITY_POINTS);
            let lo = x.iter().copied().fold(f64::INFINITY, f64::min);
            assert!((est.points[0] - (lo - 3.0 * u)).abs() < 1e-12);
            let (s, r) = ((1.0 + u * u).sqrt(), (1.0 + 0.5 * u * u).sqrt());
            let expected = est
                .points
                .iter()
                .map(|&p| {
                    let bias = normal(p, s) - normal(p, 1.0);
                    let var =
                        (normal(p, r) / (2.0 * PI.sqrt() * u) - normal(p, s).powi(2)) / n as f64;
                    bias * bias + var
                })
                .sum::<f64>()
                / est.points.len() as f64;
            let rmse = est.rmse(|p| normal(p, 1.0)).unwrap();
            ratios.push(rmse * rmse / expected);
            rmse_exact += rmse / reps as f64;
        }
        let k = reps as f64;
        let mean = ratios.iter().sum::<f64>() / k;
        let sd = (ratios.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
        println!("ratios of squares {ratios:.3?}: mean {mean:.3}, sd {sd:.3}");
        assert!(
            (mean - 1.0).abs() < 4.0 * sd / k.sqrt(),
            "mean squared error ratio {mean} ± {}",
            sd / k.sqrt()
        );
        let shifted = ksdensity(&normals(n, 0.3, 1.0, &mut rng)).unwrap();
        let wrong = shifted.rmse(|p| normal(p, 1.0)).unwrap();
        println!("shifted draws: RMSE {wrong:.5} against {rmse_exact:.5}");
        assert!(wrong > 5.0 * rmse_exact);
    }
}
