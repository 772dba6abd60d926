//! The built-in models: a Gaussian target, and logistic regression, linear regression and a Gaussian mean on data copied once from numpy, with minibatches drawn in Rust.
//!
//! Every data model has the potential
//!
//! ```text
//! U(θ) = ‖θ‖²/(2σ₀²) + Σᵢ uᵢ(θ),     ∇Ũ(θ) = θ/σ₀² + (N/b) Σ_{i∈B} ∇uᵢ(θ)
//! ```
//!
//! on a minibatch B of b of the N examples (Ding et al. 2014, eq. 2), drawn with or without
//! replacement from the chain's own minibatch generator. The per-example terms:
//!
//! | model | uᵢ(θ) | ∇uᵢ(θ) |
//! | --- | --- | --- |
//! | logistic regression, yᵢ ∈ {0, 1} | softplus(xᵢᵀθ) − yᵢxᵢᵀθ | (σ(xᵢᵀθ) − yᵢ) xᵢ |
//! | linear regression | (xᵢᵀθ − yᵢ)²/(2σ²) | (xᵢᵀθ − yᵢ) xᵢ/σ² |
//! | Gaussian mean, xᵢ ~ N(θ, σ²I) | ‖θ − xᵢ‖²/(2σ²) | (θ − xᵢ)/σ² |
//!
//! The Gaussian target N(μ, Σ) has no data: U(θ) = ½(θ − μ)ᵀΣ⁻¹(θ − μ), its gradient exact.
//!
//! Tested from Python (`tests/test_models.py`: gradients against central differences of the
//! potential, minibatch gradients unbiased with and without replacement).

use crate::rng::CountedPcg;
use rand_core::Rng;
use sgmcmc::{Batch, Moments, Sampling};
use std::sync::Arc;

/// The likelihood of a data model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Likelihood {
    /// Bernoulli with the logistic link; labels 0 or 1.
    Logistic,
    /// Gaussian noise of variance σ² around xᵢᵀθ.
    Linear { noise_variance: f64 },
    /// The examples are points xᵢ ~ N(θ, σ²I) (no labels).
    GaussianMean { noise_variance: f64 },
}

/// A data model: N examples of d features, row-major, a Gaussian prior N(0, σ₀²I) and the
/// minibatch it draws.
#[derive(Clone, Debug)]
pub struct DataModel {
    pub likelihood: Likelihood,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub examples: usize,
    pub dim: usize,
    pub prior_variance: f64,
    /// b; `None` or ≥ N for the full data.
    pub batch: Option<usize>,
    pub replace: bool,
}

/// N(μ, Σ) given by μ and the precision Σ⁻¹ (row-major), with its diagonal when Σ is diagonal.
#[derive(Clone, Debug)]
pub struct GaussianTarget {
    pub mean: Vec<f64>,
    pub precision: Vec<f64>,
    pub diagonal: Option<Vec<f64>>,
}

/// A built-in model.
#[derive(Clone, Debug)]
pub enum Builtin {
    Gaussian(GaussianTarget),
    Data(DataModel),
}

impl Builtin {
    /// The dimension of θ.
    pub fn dim(&self) -> usize {
        match self {
            Builtin::Gaussian(g) => g.mean.len(),
            Builtin::Data(m) => m.dim,
        }
    }

    /// Whether it has examples (per-example gradients, for calibration).
    pub fn has_examples(&self) -> bool {
        matches!(self, Builtin::Data(_))
    }

    /// Whether each gradient is exact (no minibatch).
    pub fn full_batch(&self) -> bool {
        match self {
            Builtin::Gaussian(_) => true,
            Builtin::Data(m) => m.batch.is_none_or(|b| b >= m.examples),
        }
    }
}

/// A uniform integer in [0, n), n ≥ 1 (Lemire 2019's multiply-and-reject: unbiased).
fn below(rng: &mut CountedPcg, n: usize) -> usize {
    let n = n as u64;
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as usize
}

/// A minibatch sequence, saved: the generator, the permutation the partial shuffles have
/// left, the last minibatch and whether there was one.
#[derive(Clone, Debug)]
pub struct MinibatchState {
    pub rng: CountedPcg,
    pub permutation: Vec<usize>,
    pub rows: Vec<usize>,
    pub drawn: bool,
}

/// One chain's minibatches of b of N examples, drawn with or without replacement from its own
/// generator (the built-in data models', and a `CFunction` given `examples`): its whole state,
/// so a clone continues the same sequence.
#[derive(Clone, Debug)]
pub struct Minibatches {
    rng: CountedPcg,
    examples: usize,
    /// b; `None` or ≥ N for the full data.
    batch: Option<usize>,
    replace: bool,
    permutation: Vec<usize>,
    /// The rows of the last gradient.
    pub rows: Vec<usize>,
    /// Whether `rows` holds the minibatch of the last gradient (for the energy at that θ).
    pub drawn: bool,
}

impl Minibatches {
    pub fn new(examples: usize, batch: Option<usize>, replace: bool, rng: CountedPcg) -> Self {
        Minibatches {
            rng,
            examples,
            batch,
            replace,
            permutation: (0..examples).collect(),
            rows: Vec::with_capacity(examples),
            drawn: false,
        }
    }

    /// Where the sequence stands, for a saved chain.
    pub fn state(&self) -> MinibatchState {
        MinibatchState {
            rng: self.rng.clone(),
            permutation: self.permutation.clone(),
            rows: self.rows.clone(),
            drawn: self.drawn,
        }
    }

    /// This sequence continued from `state`; `None` when the state was not saved from a
    /// sequence over as many examples (its permutation is not one of 0..N, or a row is out of
    /// range).
    pub fn resumed(mut self, state: &MinibatchState) -> Option<Self> {
        let examples = self.examples;
        let mut seen = vec![false; examples];
        let is_permutation = state.permutation.len() == examples
            && state
                .permutation
                .iter()
                .all(|&i| i < examples && !std::mem::replace(&mut seen[i], true));
        if !is_permutation || state.rows.iter().any(|&i| i >= examples) {
            return None;
        }
        self.rng = state.rng.clone();
        self.permutation.clone_from(&state.permutation);
        self.rows.clone_from(&state.rows);
        self.drawn = state.drawn;
        Some(self)
    }

    /// Draws the next minibatch into `rows` (all rows for the full data).
    pub fn draw(&mut self) {
        self.rows.clear();
        match self.batch {
            Some(b) if b < self.examples => {
                if self.replace {
                    for _ in 0..b {
                        let i = below(&mut self.rng, self.examples);
                        self.rows.push(i);
                    }
                } else {
                    // A partial Fisher–Yates shuffle: the first b entries are a uniform random
                    // b-subset whatever order the permutation was left in by the last call.
                    for j in 0..b {
                        let k = j + below(&mut self.rng, self.examples - j);
                        self.permutation.swap(j, k);
                    }
                    self.rows.extend_from_slice(&self.permutation[..b]);
                }
            }
            _ => self.rows.extend(0..self.examples),
        }
        self.drawn = true;
    }

    /// Draws a minibatch unless the last gradient's is still there (for the energy).
    pub fn draw_if_none(&mut self) {
        if !self.drawn {
            self.draw();
        }
    }

    /// The scale N/b of the last minibatch.
    pub fn scale(&self) -> f64 {
        self.examples as f64 / self.rows.len() as f64
    }

    /// How the last minibatch was drawn, for the calibration's moments.
    pub fn batch(&self) -> Batch {
        Batch {
            size: self.rows.len(),
            population: self.examples,
            sampling: if self.replace {
                Sampling::WithReplacement
            } else {
                Sampling::WithoutReplacement
            },
        }
    }
}

/// One chain's evaluator of a built-in model: its minibatches (its whole state: a clone
/// continues the same minibatch sequence).
#[derive(Clone, Debug)]
pub struct BuiltinChain {
    model: Arc<Builtin>,
    batches: Minibatches,
    /// One example's gradient, for the per-example moments (allocated once, not per step).
    example_gradient: Vec<f64>,
}

impl BuiltinChain {
    /// The evaluator of `model` with the minibatch generator `rng`.
    pub fn new(model: Arc<Builtin>, rng: CountedPcg) -> Self {
        let batches = match &*model {
            Builtin::Data(m) => Minibatches::new(m.examples, m.batch, m.replace, rng),
            Builtin::Gaussian(_) => Minibatches::new(0, None, false, rng),
        };
        let example_gradient = vec![0.0; model.dim()];
        BuiltinChain {
            model,
            batches,
            example_gradient,
        }
    }

    /// Where its minibatch sequence stands, for a saved chain.
    pub fn minibatch_state(&self) -> MinibatchState {
        self.batches.state()
    }

    /// The evaluator of `model` continuing a saved minibatch sequence; `None` when the state
    /// was not saved from a model with as many examples.
    pub fn resumed(model: Arc<Builtin>, state: &MinibatchState) -> Option<Self> {
        let mut chain = BuiltinChain::new(model, state.rng.clone());
        chain.batches = chain.batches.resumed(state)?;
        Some(chain)
    }

    /// Writes ∇Ũ(θ) on a fresh minibatch into `grad`.
    pub fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        match &*self.model {
            Builtin::Gaussian(g) => gaussian_gradient(g, theta, grad),
            Builtin::Data(m) => {
                self.batches.draw();
                grad.fill(0.0);
                batch_gradient_sum(m, &self.batches.rows, theta, grad);
                let (scale, inv) = (self.batches.scale(), 1.0 / m.prior_variance);
                for (g, t) in grad.iter_mut().zip(theta) {
                    *g = scale * *g + inv * t;
                }
            }
        }
    }

    /// Ũ(θ) on the minibatch of the last gradient (a fresh one if there was none): the full U
    /// for a full-batch model.
    pub fn energy(&mut self, theta: &[f64]) -> f64 {
        match &*self.model {
            Builtin::Gaussian(g) => gaussian_energy(g, theta),
            Builtin::Data(m) => {
                self.batches.draw_if_none();
                let sum: f64 = (self.batches.rows.iter())
                    .map(|&i| example_energy(m, i, theta))
                    .sum();
                let prior = 0.5 * theta.iter().map(|t| t * t).sum::<f64>() / m.prior_variance;
                self.batches.scale() * sum + prior
            }
        }
    }

    /// The diagonal of ∇²Ũ at θ on the minibatch of the last gradient (pSGLD's Γ correction).
    pub fn hessian_diagonal(&mut self, theta: &[f64], diagonal: &mut [f64]) {
        match &*self.model {
            Builtin::Gaussian(g) => {
                let d = theta.len();
                for (i, h) in diagonal.iter_mut().enumerate() {
                    *h = g.precision[i * d + i];
                }
            }
            Builtin::Data(m) => {
                self.batches.draw_if_none();
                diagonal.fill(0.0);
                for &i in &self.batches.rows {
                    let x = &m.x[i * m.dim..(i + 1) * m.dim];
                    match m.likelihood {
                        Likelihood::Logistic => {
                            let s = sigmoid(dot_lanes(x, theta));
                            let w = s * (1.0 - s);
                            for (h, xa) in diagonal.iter_mut().zip(x) {
                                *h += w * xa * xa;
                            }
                        }
                        Likelihood::Linear { noise_variance } => {
                            for (h, xa) in diagonal.iter_mut().zip(x) {
                                *h += xa * xa / noise_variance;
                            }
                        }
                        Likelihood::GaussianMean { noise_variance } => {
                            for h in diagonal.iter_mut() {
                                *h += 1.0 / noise_variance;
                            }
                        }
                    }
                }
                let (scale, inv) = (self.batches.scale(), 1.0 / m.prior_variance);
                for h in diagonal.iter_mut() {
                    *h = scale * *h + inv;
                }
            }
        }
    }

    /// ∇Ũ(θ) and the per-example moments of its minibatch, for calibrated sampling; `None` for
    /// a model without examples (the Gaussian target).
    pub fn gradient_with_moments(
        &mut self,
        theta: &[f64],
        grad: &mut [f64],
        moments: Moments<'_, f64>,
    ) -> Option<Batch> {
        let Builtin::Data(m) = &*self.model else {
            return None;
        };
        self.batches.draw();
        let d = theta.len();
        moments.sum.fill(0.0);
        moments.squares.fill(0.0);
        for &i in &self.batches.rows {
            let gi = &mut self.example_gradient;
            gi.fill(0.0);
            add_example_gradient(m, i, theta, gi, 1.0);
            let gi: &[f64] = gi;
            for (a, &ga) in gi.iter().enumerate() {
                moments.sum[a] += ga;
                if moments.dense {
                    for (q, &gb) in moments.squares[a * d..(a + 1) * d].iter_mut().zip(gi) {
                        *q += ga * gb;
                    }
                } else {
                    moments.squares[a] += ga * ga;
                }
            }
        }
        let (scale, inv) = (self.batches.scale(), 1.0 / m.prior_variance);
        for ((g, s), t) in grad.iter_mut().zip(moments.sum.iter()).zip(theta) {
            *g = scale * s + inv * t;
        }
        Some(self.batches.batch())
    }
}

fn gaussian_gradient(g: &GaussianTarget, theta: &[f64], grad: &mut [f64]) {
    let d = theta.len();
    match &g.diagonal {
        Some(p) => {
            for (((gi, t), m), p) in grad.iter_mut().zip(theta).zip(&g.mean).zip(p) {
                *gi = p * (t - m);
            }
        }
        None => {
            for (i, gi) in grad.iter_mut().enumerate() {
                let row = &g.precision[i * d..(i + 1) * d];
                *gi = row
                    .iter()
                    .zip(theta.iter().zip(&g.mean))
                    .map(|(p, (t, m))| p * (t - m))
                    .sum();
            }
        }
    }
}

fn gaussian_energy(g: &GaussianTarget, theta: &[f64]) -> f64 {
    let d = theta.len();
    let mut u = 0.0;
    for i in 0..d {
        let ri = theta[i] - g.mean[i];
        let row = &g.precision[i * d..(i + 1) * d];
        let pr: f64 = row
            .iter()
            .zip(theta.iter().zip(&g.mean))
            .map(|(p, (t, m))| p * (t - m))
            .sum();
        u += ri * pr;
    }
    0.5 * u
}

/// log(1 + eᶻ) without overflow.
fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

/// σ(z) = 1/(1 + e⁻ᶻ) for z ≥ 0 and eᶻ/(1 + eᶻ) below, from e = exp(−|z|) ≤ 1 so that
/// nothing overflows; a select rather than a branch, so that [`logistic_sum`]'s loop
/// vectorises.
#[inline(always)]
fn sigmoid(z: f64) -> f64 {
    let e = exp_nonpositive(-z.abs());
    let numerator = if z >= 0.0 { 1.0 } else { e };
    numerator / (1.0 + e)
}

/// Rows per chunk of [`logistic_sum`]: its buffers of dot products live on the stack.
const CHUNK: usize = 64;

/// Partial sums of [`dot_lanes`]: 4, AVX2's width in f64.
const LANES: usize = 4;

/// Adds Σ_{i∈rows} ∇uᵢ(θ) to `acc`, rows in order: the hot loop of every minibatch gradient.
///
/// For logistic regression this is where a step's time goes (a minibatch of 32 on Pima: 32 dot
/// products of 8, 32 exponentials, 32 axpys), so it runs [`logistic_sum`]'s vectorised form,
/// compiled a second time for AVX2, which runs when the kernel's dispatch runs its steps at
/// AVX2 or wider (so `set_max_isa` caps it too). The two copies give the same bits:
/// neither fuses multiply-adds (Rust never contracts `a * b + c`), and their lane sums are
/// written out, so vector width changes nothing but speed.
fn batch_gradient_sum(m: &DataModel, rows: &[usize], theta: &[f64], acc: &mut [f64]) {
    match m.likelihood {
        Likelihood::Logistic => {
            #[cfg(target_arch = "x86_64")]
            if sgmcmc::dispatch::active() >= sgmcmc::dispatch::Isa::Avx2 {
                // SAFETY: `logistic_sum_avx2` enables AVX2 only, and the kernel's dispatch
                // reports Avx2 or wider only after `is_x86_feature_detected!` found AVX2 (and
                // FMA, …) on this CPU; the function touches memory through safe slices only.
                unsafe { logistic_sum_avx2(m, rows, theta, acc) };
                return;
            }
            logistic_sum(m, rows, theta, acc);
        }
        _ => {
            for &i in rows {
                add_example_gradient(m, i, theta, acc, 1.0);
            }
        }
    }
}

/// [`logistic_sum`] compiled for AVX2 (4 × f64 lanes; no FMA, so the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn logistic_sum_avx2(m: &DataModel, rows: &[usize], theta: &[f64], acc: &mut [f64]) {
    logistic_sum(m, rows, theta, acc);
}

/// Σ_{i∈rows} (σ(xᵢᵀθ) − yᵢ) xᵢ added to `acc`, rows in order, in chunks of [`CHUNK`] rows:
/// first every dot product of the chunk, then every σ in one loop over an array (so that the
/// exponentials' long polynomial chains are independent and vectorise), then the axpys.
#[inline(always)]
fn logistic_sum(m: &DataModel, rows: &[usize], theta: &[f64], acc: &mut [f64]) {
    let d = m.dim;
    let mut z = [0.0; CHUNK];
    for chunk in rows.chunks(CHUNK) {
        for (zk, &i) in z.iter_mut().zip(chunk) {
            *zk = dot_lanes(&m.x[i * d..(i + 1) * d], theta);
        }
        let z = &mut z[..chunk.len()];
        for zk in z.iter_mut() {
            *zk = sigmoid(*zk);
        }
        // Four rows per pass over `acc`, added to each entry in row order, so the same sums as
        // one row at a time, with a quarter of the loads and stores of `acc`.
        let (quads, rest) = chunk.as_chunks::<4>();
        let (z_quads, z_rest) = z.as_chunks::<4>();
        for (rows4, s4) in quads.iter().zip(z_quads) {
            let r: [f64; 4] = [0, 1, 2, 3].map(|l| s4[l] - m.y[rows4[l]]);
            let x0 = &m.x[rows4[0] * d..(rows4[0] + 1) * d];
            let x1 = &m.x[rows4[1] * d..(rows4[1] + 1) * d];
            let x2 = &m.x[rows4[2] * d..(rows4[2] + 1) * d];
            let x3 = &m.x[rows4[3] * d..(rows4[3] + 1) * d];
            for ((((a, a0), a1), a2), a3) in acc.iter_mut().zip(x0).zip(x1).zip(x2).zip(x3) {
                *a = (((*a + r[0] * a0) + r[1] * a1) + r[2] * a2) + r[3] * a3;
            }
        }
        for (&s, &i) in z_rest.iter().zip(rest) {
            let r = s - m.y[i];
            for (a, xa) in acc.iter_mut().zip(&m.x[i * d..(i + 1) * d]) {
                *a += r * xa;
            }
        }
    }
}

/// xᵀθ summed in [`LANES`] interleaved partial sums, added pairwise at the end: the order is
/// fixed by the source, so every vector width rounds alike (and the loop is not one long
/// dependency chain of adds).
#[inline(always)]
fn dot_lanes(x: &[f64], theta: &[f64]) -> f64 {
    let mut partial = [0.0; LANES];
    let mut xc = x.chunks_exact(LANES);
    let mut tc = theta.chunks_exact(LANES);
    for (xa, ta) in (&mut xc).zip(&mut tc) {
        for l in 0..LANES {
            partial[l] += xa[l] * ta[l];
        }
    }
    for (l, (xa, ta)) in xc.remainder().iter().zip(tc.remainder()).enumerate() {
        partial[l] += xa * ta;
    }
    (partial[0] + partial[1]) + (partial[2] + partial[3])
}

/// eˣ for x ≤ 0, branch-free so that lanes vectorise: x = k ln 2 + r with |r| ≤ ln 2 / 2
/// (Cody and Waite 1980's two-part ln 2, so k ln 2 is exact), eʳ by its Taylor series to r¹³
/// (remainder |r|¹⁴/14! < 5·10⁻¹⁸, below half an ulp), times 2ᵏ built in the exponent bits.
/// x is clamped at −708, where eˣ ≈ 3·10⁻³⁰⁸ is still normal: below it the result is that
/// instead of something smaller, an absolute error under 3·10⁻³⁰⁸ in a logistic residual.
/// Accuracy against `f64::exp`: `tests/test_models.py`.
#[inline(always)]
fn exp_nonpositive(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    // ln 2 split so that k · LN2_HI is exact for |k| < 2¹¹ (fdlibm's constants).
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // Adding 1.5·2⁵² rounds to an integer (to nearest, ties to even) and leaves it in the
    // low mantissa bits.
    const SHIFTER: f64 = 6_755_399_441_055_744.0;
    let x = x.max(-708.0);
    let shifted = x * LOG2E + SHIFTER;
    let k = shifted - SHIFTER;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    // Horner on the Taylor coefficients 1/n!, n = 13 down to 0.
    const INV_FACT: [f64; 14] = [
        1.0,
        1.0,
        0.5,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5_040.0,
        1.0 / 40_320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    let mut p = INV_FACT[13];
    for c in INV_FACT[..13].iter().rev() {
        p = p * r + c;
    }
    // 2ᵏ: k (in −1022..=0 after the clamp) from the shifted mantissa, plus the bias, shifted
    // into the exponent field.
    let k_int = (shifted.to_bits() as i64).wrapping_sub(SHIFTER.to_bits() as i64);
    let scale = f64::from_bits(((k_int + 1023) as u64) << 52);
    p * scale
}

/// Adds `weight` ∇uᵢ(θ) to `acc`.
fn add_example_gradient(m: &DataModel, i: usize, theta: &[f64], acc: &mut [f64], weight: f64) {
    let x = &m.x[i * m.dim..(i + 1) * m.dim];
    match m.likelihood {
        Likelihood::Logistic => {
            let r = weight * (sigmoid(dot_lanes(x, theta)) - m.y[i]);
            for (a, xa) in acc.iter_mut().zip(x) {
                *a += r * xa;
            }
        }
        Likelihood::Linear { noise_variance } => {
            let r = weight * (dot_lanes(x, theta) - m.y[i]) / noise_variance;
            for (a, xa) in acc.iter_mut().zip(x) {
                *a += r * xa;
            }
        }
        Likelihood::GaussianMean { noise_variance } => {
            let w = weight / noise_variance;
            for ((a, xa), t) in acc.iter_mut().zip(x).zip(theta) {
                *a += w * (t - xa);
            }
        }
    }
}

/// uᵢ(θ).
fn example_energy(m: &DataModel, i: usize, theta: &[f64]) -> f64 {
    let x = &m.x[i * m.dim..(i + 1) * m.dim];
    match m.likelihood {
        Likelihood::Logistic => {
            let z = dot_lanes(x, theta);
            softplus(z) - m.y[i] * z
        }
        Likelihood::Linear { noise_variance } => {
            let r = dot_lanes(x, theta) - m.y[i];
            0.5 * r * r / noise_variance
        }
        Likelihood::GaussianMean { noise_variance } => {
            let s: f64 = x.iter().zip(theta).map(|(xa, t)| (t - xa) * (t - xa)).sum();
            0.5 * s / noise_variance
        }
    }
}
