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

use rand_core::Rng;
use rand_pcg::Pcg64;
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
fn below(rng: &mut Pcg64, n: usize) -> usize {
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

/// One chain's evaluator of a built-in model: its minibatch generator and index buffers (its
/// whole state: a clone continues the same minibatch sequence).
#[derive(Clone, Debug)]
pub struct BuiltinChain {
    model: Arc<Builtin>,
    rng: Pcg64,
    permutation: Vec<usize>,
    rows: Vec<usize>,
    /// One example's gradient, for the per-example moments (allocated once, not per step).
    example_gradient: Vec<f64>,
    /// Whether `rows` holds the minibatch of the last gradient (for the energy at that θ).
    drawn: bool,
}

impl BuiltinChain {
    /// The evaluator of `model` with the minibatch generator `rng`.
    pub fn new(model: Arc<Builtin>, rng: Pcg64) -> Self {
        let (permutation, rows) = match &*model {
            Builtin::Data(m) => ((0..m.examples).collect(), Vec::with_capacity(m.examples)),
            Builtin::Gaussian(_) => (Vec::new(), Vec::new()),
        };
        let example_gradient = vec![0.0; model.dim()];
        BuiltinChain {
            model,
            rng,
            permutation,
            example_gradient,
            rows,
            drawn: false,
        }
    }

    /// Draws the next minibatch into `rows` (all rows for the full data).
    fn draw(&mut self, m: &DataModel) {
        self.rows.clear();
        match m.batch {
            Some(b) if b < m.examples => {
                if m.replace {
                    for _ in 0..b {
                        let i = below(&mut self.rng, m.examples);
                        self.rows.push(i);
                    }
                } else {
                    // A partial Fisher–Yates shuffle: the first b entries are a uniform random
                    // b-subset whatever order the permutation was left in by the last call.
                    for j in 0..b {
                        let k = j + below(&mut self.rng, m.examples - j);
                        self.permutation.swap(j, k);
                    }
                    self.rows.extend_from_slice(&self.permutation[..b]);
                }
            }
            _ => self.rows.extend(0..m.examples),
        }
        self.drawn = true;
    }

    /// The minibatch's scale N/b.
    fn scale(&self, m: &DataModel) -> f64 {
        m.examples as f64 / self.rows.len() as f64
    }

    /// Writes ∇Ũ(θ) on a fresh minibatch into `grad`.
    pub fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        let model = Arc::clone(&self.model);
        match &*model {
            Builtin::Gaussian(g) => gaussian_gradient(g, theta, grad),
            Builtin::Data(m) => {
                self.draw(m);
                grad.fill(0.0);
                for &i in &self.rows {
                    add_example_gradient(m, i, theta, grad, 1.0);
                }
                let (scale, inv) = (self.scale(m), 1.0 / m.prior_variance);
                for (g, t) in grad.iter_mut().zip(theta) {
                    *g = scale * *g + inv * t;
                }
            }
        }
    }

    /// Ũ(θ) on the minibatch of the last gradient (a fresh one if there was none): the full U
    /// for a full-batch model.
    pub fn energy(&mut self, theta: &[f64]) -> f64 {
        let model = Arc::clone(&self.model);
        match &*model {
            Builtin::Gaussian(g) => gaussian_energy(g, theta),
            Builtin::Data(m) => {
                if !self.drawn {
                    self.draw(m);
                }
                let sum: f64 = self.rows.iter().map(|&i| example_energy(m, i, theta)).sum();
                let prior = 0.5 * theta.iter().map(|t| t * t).sum::<f64>() / m.prior_variance;
                self.scale(m) * sum + prior
            }
        }
    }

    /// The diagonal of ∇²Ũ at θ on the minibatch of the last gradient (pSGLD's Γ correction).
    pub fn hessian_diagonal(&mut self, theta: &[f64], diagonal: &mut [f64]) {
        let model = Arc::clone(&self.model);
        match &*model {
            Builtin::Gaussian(g) => {
                let d = theta.len();
                for (i, h) in diagonal.iter_mut().enumerate() {
                    *h = g.precision[i * d + i];
                }
            }
            Builtin::Data(m) => {
                if !self.drawn {
                    self.draw(m);
                }
                diagonal.fill(0.0);
                for &i in &self.rows {
                    let x = &m.x[i * m.dim..(i + 1) * m.dim];
                    match m.likelihood {
                        Likelihood::Logistic => {
                            let s = sigmoid(dot(x, theta));
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
                let (scale, inv) = (self.scale(m), 1.0 / m.prior_variance);
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
        let model = Arc::clone(&self.model);
        let Builtin::Data(m) = &*model else {
            return None;
        };
        self.draw(m);
        let d = theta.len();
        moments.sum.fill(0.0);
        moments.squares.fill(0.0);
        for &i in &self.rows {
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
        let (scale, inv) = (self.scale(m), 1.0 / m.prior_variance);
        for ((g, s), t) in grad.iter_mut().zip(moments.sum.iter()).zip(theta) {
            *g = scale * s + inv * t;
        }
        Some(Batch {
            size: self.rows.len(),
            population: m.examples,
            sampling: if m.replace {
                Sampling::WithReplacement
            } else {
                Sampling::WithoutReplacement
            },
        })
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

/// 1/(1 + e⁻ᶻ), exponentiating a non-positive number only.
fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Adds `weight` ∇uᵢ(θ) to `acc`.
fn add_example_gradient(m: &DataModel, i: usize, theta: &[f64], acc: &mut [f64], weight: f64) {
    let x = &m.x[i * m.dim..(i + 1) * m.dim];
    match m.likelihood {
        Likelihood::Logistic => {
            let r = weight * (sigmoid(dot(x, theta)) - m.y[i]);
            for (a, xa) in acc.iter_mut().zip(x) {
                *a += r * xa;
            }
        }
        Likelihood::Linear { noise_variance } => {
            let r = weight * (dot(x, theta) - m.y[i]) / noise_variance;
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
            let z = dot(x, theta);
            softplus(z) - m.y[i] * z
        }
        Likelihood::Linear { noise_variance } => {
            let r = dot(x, theta) - m.y[i];
            0.5 * r * r / noise_variance
        }
        Likelihood::GaussianMean { noise_variance } => {
            let s: f64 = x.iter().zip(theta).map(|(xa, t)| (t - xa) * (t - xa)).sum();
            0.5 * s / noise_variance
        }
    }
}
