//! Bayesian logistic regression with a Gaussian prior on real data sets (Zhang et al. 2017 §4.2).
//!
//! Labels yᵢ ∈ {0, 1}, p(yᵢ = 1 | xᵢ, w) = σ(wᵀxᵢ) with σ(z) = 1/(1 + e⁻ᶻ), prior
//! w ~ N(0, σ₀² I) with σ₀² = [`PRIOR_VARIANCE`] = 10 (the paper says only "Gaussian priors";
//! 10 is weak next to the likelihood of standardised features, and none of the data sets needs
//! more: the one close to separable, breast cancer, stays proper with it). The potential is
//!
//! ```text
//! U(w) = Σᵢ [softplus(wᵀxᵢ) − yᵢ wᵀxᵢ] + ‖w‖²/(2σ₀²),   softplus(z) = log(1 + eᶻ),
//! ∇U(w) = Σᵢ (σ(wᵀxᵢ) − yᵢ) xᵢ + w/σ₀²,
//! ```
//!
//! since −log p(y | x, w) = softplus(z) − yz for z = wᵀx. softplus is evaluated as
//! max(z, 0) + log1p(e^{−|z|}) and σ on the branch that exponentiates a non-positive number, so
//! neither overflows for any finite z. On a minibatch B of rows drawn without replacement the
//! likelihood sum is scaled by N/|B| (Ding et al. 2014, eq. 2). Both the full and the minibatch
//! potential and gradient go through one batched function over a list of row indices,
//! [`LogisticRegression::batch`].
//!
//! # Features
//!
//! Every feature is standardised with the mean and sd (divisor n − 1) of the *training* split;
//! a column with sd 0 on the training split is only centred. An intercept column of ones is
//! prepended. For Ripley, the two raw features are standardised, expanded to
//! [x₁, x₂, x₁², x₂², x₁³, x₂³] (powers per feature, no cross terms: the polynomial-basis
//! expansion of Girolami & Calderhead's 2011 BLR benchmarks, which this paper's data-set list and
//! dimensions follow; our reading, the paper does not say) and the six columns standardised
//! again, giving the paper's 7 weights with the intercept.
//!
//! # Splits ([`DataSet::load`])
//!
//! * Pima (P, 8 weights): MASS `Pima.tr` and `Pima.te` stacked (532 rows), a fixed random 20 %
//!   (106 rows) held out.
//! * Ripley (R, 7 weights): the given `synth.tr` (250 rows) for training, `synth.te` (1000 rows)
//!   held out.
//! * Caravan (C, 86 weights: 85 features and the intercept; the paper says 87, we do not know
//!   what its extra column is): a fixed random 20 % (1164 of 5822 rows) held out.
//! * Breast cancer (B, 31 weights: 30 features and the intercept; not in the paper's Table 1):
//!   a fixed random 20 % (114 of 569 rows) held out.
//!
//! "Fixed random" means a Fisher–Yates shuffle of the row indices by a PCG64 seeded with
//! [`SPLIT_SEED`], independent of the experiment's `--seed`, so every run sees the same split.
//!
//! # Synthetic (N = 20 000; the `cv` experiment, issue 34)
//!
//! [`synthetic`] draws [`SYNTHETIC_ROWS`] = 25 000 rows in code from a PCG64 seeded with
//! [`SYNTHETIC_SEED`]: nine features from a stationary AR(1) across the columns,
//! x₁ ~ N(0, 1), x_j = ρx_{j−1} + √(1 − ρ²) z_j with ρ = [`SYNTHETIC_CORRELATION`] = 0.5 (so
//! every feature is N(0, 1) and corr(x_j, x_k) = ρ^|j−k|), and the label
//! y ~ Bernoulli(σ(β₀ + xᵀβ)) with the fixed [`SYNTHETIC_WEIGHTS`] (β₀ first). 20 % (5 000
//! rows) are held out as for Pima ([`SPLIT_SEED`]), leaving N = 20 000 training rows, and the
//! features are standardised on them and given an intercept like every other data set:
//! 10 weights.
//!
//! # Paired minibatches (control variates)
//!
//! [`PairedMinibatches`] is the minibatch model as [`sgmcmc::gradient::PairedGradient`] wants it
//! for [`sgmcmc::variance::ControlVariate`] (Baker et al. 2019; SVRG, Dubey et al. 2016): one
//! minibatch S at θ and at the centring value θ̂, and the full gradient; it is also the plain
//! minibatch [`sgmcmc::Gradient`], and counts the per-example gradients it evaluates (the
//! passes through the data).
//!
//! # Laplace approximation
//!
//! [`LogisticRegression::laplace`] gives the mode and the marginal sds of N(ŵ, H⁻¹), the
//! reference the `blr` experiment compares its samples' spread with. Checked once against
//! full-gradient HMC (diagonal mass from the Laplace sds; 10 000 draws, 1 500 for Caravan): the
//! median over the weights of HMC sd / Laplace sd was 1.02 (Pima), 1.05 (Ripley), 1.04 (breast
//! cancer) and 1.04 (Caravan, whose rare binary features make single weights skewed: 0.89 –
//! 1.78).

use super::gaussian_mean::MinibatchSampler;
use rand_pcg::Pcg64;
use sgmcmc::linalg::{cholesky_in_place, cholesky_solve_in_place, spd_inverse};
use sgmcmc::rng::{standard_normal_f64, uniform_f64};
use std::fmt;
use std::path::{Path, PathBuf};

/// Prior variance σ₀² of every weight.
pub const PRIOR_VARIANCE: f64 = 10.0;
/// Seed of the fixed random hold-out splits.
pub const SPLIT_SEED: u64 = 2017;
/// Fraction held out where the data set has no test split of its own.
pub const HOLDOUT_FRACTION: f64 = 0.2;

/// Why a data set could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataError(pub String);

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DataError {}

/// A CSV file as read: feature rows and 0/1 labels (the last column).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawData {
    /// One vector of features per row.
    pub rows: Vec<Vec<f64>>,
    /// Labels, 0 or 1.
    pub labels: Vec<f64>,
}

impl RawData {
    /// Reads a CSV file with a header row; every column a number, the last the 0/1 label.
    pub fn read_csv(path: &Path) -> Result<Self, DataError> {
        let err = |e: &dyn fmt::Display| DataError(format!("{}: {e}", path.display()));
        let mut reader = csv::Reader::from_path(path).map_err(|e| err(&e))?;
        let mut out = RawData::default();
        for (line, record) in reader.records().enumerate() {
            let record = record.map_err(|e| err(&e))?;
            let mut values = record
                .iter()
                .map(|f| f.trim().parse::<f64>())
                .collect::<Result<Vec<f64>, _>>()
                .map_err(|e| err(&format!("row {}: {e}", line + 2)))?;
            let label = values
                .pop()
                .ok_or_else(|| err(&format!("row {}: empty", line + 2)))?;
            if label != 0.0 && label != 1.0 {
                return Err(err(&format!(
                    "row {}: label {label} is not 0 or 1",
                    line + 2
                )));
            }
            if values.iter().any(|v| !v.is_finite()) {
                return Err(err(&format!("row {}: non-finite feature", line + 2)));
            }
            if let Some(first) = out.rows.first()
                && first.len() != values.len()
            {
                return Err(err(&format!("row {}: ragged", line + 2)));
            }
            out.rows.push(values);
            out.labels.push(label);
        }
        if out.rows.is_empty() {
            return Err(err(&"no data rows"));
        }
        Ok(out)
    }

    /// Appends another data set's rows (same number of features).
    pub fn stack(mut self, other: RawData) -> Self {
        self.rows.extend(other.rows);
        self.labels.extend(other.labels);
        self
    }

    /// Splits off a random `fraction` of the rows (a seeded Fisher–Yates shuffle; both parts
    /// keep the file order): returns (kept, held out).
    pub fn holdout(&self, fraction: f64, seed: u64) -> (RawData, RawData) {
        let n = self.rows.len();
        let mut perm: Vec<usize> = (0..n).collect();
        let mut rng = Pcg64::new(seed as u128, 0x5b11);
        for i in (1..n).rev() {
            let j = ((uniform_f64(&mut rng) * (i + 1) as f64) as usize).min(i);
            perm.swap(i, j);
        }
        let n_out = (fraction * n as f64).round() as usize;
        let mut held = vec![false; n];
        for &i in &perm[..n_out] {
            held[i] = true;
        }
        let (mut keep, mut out) = (RawData::default(), RawData::default());
        for ((row, &label), &h) in self.rows.iter().zip(&self.labels).zip(&held) {
            let dst = if h { &mut out } else { &mut keep };
            dst.rows.push(row.clone());
            dst.labels.push(label);
        }
        (keep, out)
    }
}

/// Per-column mean and sd of a training split, applied to any split.
#[derive(Clone, Debug, PartialEq)]
pub struct Standardizer {
    /// Column means.
    pub mean: Vec<f64>,
    /// Column sds (divisor n − 1; 1 for a constant column, which is then only centred).
    pub sd: Vec<f64>,
}

impl Standardizer {
    /// Fits the column means and sds of `rows` (at least one row).
    pub fn fit(rows: &[Vec<f64>]) -> Self {
        let d = rows.first().map_or(0, Vec::len);
        let n = rows.len() as f64;
        let mean: Vec<f64> = (0..d)
            .map(|j| rows.iter().map(|r| r[j]).sum::<f64>() / n)
            .collect();
        let sd = (0..d)
            .map(|j| {
                let ss: f64 = rows.iter().map(|r| (r[j] - mean[j]).powi(2)).sum();
                let s = (ss / (n - 1.0).max(1.0)).sqrt();
                if s > 0.0 { s } else { 1.0 }
            })
            .collect();
        Standardizer { mean, sd }
    }

    /// Standardises `rows` in place.
    pub fn apply(&self, rows: &mut [Vec<f64>]) {
        for r in rows {
            for (j, v) in r.iter_mut().enumerate() {
                *v = (*v - self.mean[j]) / self.sd[j];
            }
        }
    }
}

/// Feature expansion applied after the first standardisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// The features as they are.
    Linear,
    /// [x, x², x³] per feature, no cross terms (Ripley).
    Cubic,
}

impl Basis {
    fn expand(self, rows: &mut [Vec<f64>]) {
        if self == Basis::Cubic {
            for r in rows {
                let sq: Vec<f64> = r.iter().map(|x| x * x).collect();
                let cu: Vec<f64> = r.iter().map(|x| x * x * x).collect();
                r.extend(sq);
                r.extend(cu);
            }
        }
    }
}

/// A design matrix with the intercept column, and 0/1 labels.
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    /// Row-major N × d.
    pub x: Vec<f64>,
    /// Labels, 0 or 1.
    pub y: Vec<f64>,
    /// Columns d (weights), intercept included.
    pub d: usize,
}

impl Design {
    /// Rows N.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// No rows?
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Row i.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// Labels as booleans (1 = true).
    pub fn positives(&self) -> Vec<bool> {
        self.y.iter().map(|&y| y == 1.0).collect()
    }

    fn from_rows(rows: Vec<Vec<f64>>, labels: Vec<f64>) -> Self {
        let d = rows.first().map_or(0, Vec::len) + 1;
        let mut x = Vec::with_capacity(rows.len() * d);
        for r in rows {
            x.push(1.0);
            x.extend(r);
        }
        Design { x, y: labels, d }
    }
}

/// Standardises both splits with the training split's statistics, expands by `basis`
/// (standardising the expanded columns again, on the training split), prepends the intercept.
pub fn prepare(train: RawData, test: RawData, basis: Basis) -> (Design, Design) {
    let (mut tr, mut te) = (train.rows, test.rows);
    let s = Standardizer::fit(&tr);
    s.apply(&mut tr);
    s.apply(&mut te);
    if basis != Basis::Linear {
        basis.expand(&mut tr);
        basis.expand(&mut te);
        let s = Standardizer::fit(&tr);
        s.apply(&mut tr);
        s.apply(&mut te);
    }
    (
        Design::from_rows(tr, train.labels),
        Design::from_rows(te, test.labels),
    )
}

/// The data sets of the `blr` experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataSet {
    /// Pima Indians diabetes (P).
    Pima,
    /// Ripley's synthetic two-class data (R).
    Ripley,
    /// Caravan insurance (C).
    Caravan,
    /// Breast cancer Wisconsin, diagnostic (not in the paper).
    BreastCancer,
}

impl DataSet {
    /// All four, in the order of the tables.
    pub const ALL: [DataSet; 4] = [
        DataSet::Pima,
        DataSet::Ripley,
        DataSet::Caravan,
        DataSet::BreastCancer,
    ];

    /// The paper's letter (B for breast cancer, which the paper does not use).
    pub fn letter(self) -> &'static str {
        match self {
            DataSet::Pima => "P",
            DataSet::Ripley => "R",
            DataSet::Caravan => "C",
            DataSet::BreastCancer => "B",
        }
    }

    /// A lowercase name for file names.
    pub fn name(self) -> &'static str {
        match self {
            DataSet::Pima => "pima",
            DataSet::Ripley => "ripley",
            DataSet::Caravan => "caravan",
            DataSet::BreastCancer => "breast-cancer",
        }
    }

    /// Weights (intercept included) after [`DataSet::load`].
    pub fn dim(self) -> usize {
        match self {
            DataSet::Pima => 8,
            DataSet::Ripley => 7,
            DataSet::Caravan => 86,
            DataSet::BreastCancer => 31,
        }
    }

    /// All of the data set's labelled rows pooled (Ripley: its training and test files
    /// stacked), the fraction [`DataSet::load`] holds out (Ripley: 1000 of 1250) and the basis:
    /// what a random re-split with the same proportions needs.
    pub fn pooled(self, dir: &Path) -> Result<(RawData, f64, Basis), DataError> {
        let read = |f: &str| RawData::read_csv(&dir.join(f));
        Ok(match self {
            DataSet::Pima => (
                read("pima_train.csv")?.stack(read("pima_test.csv")?),
                HOLDOUT_FRACTION,
                Basis::Linear,
            ),
            DataSet::Ripley => (
                read("ripley_train.csv")?.stack(read("ripley_test.csv")?),
                0.8,
                Basis::Cubic,
            ),
            DataSet::Caravan => (read("caravan.csv")?, HOLDOUT_FRACTION, Basis::Linear),
            DataSet::BreastCancer => (read("breast_cancer.csv")?, HOLDOUT_FRACTION, Basis::Linear),
        })
    }

    /// The training and held-out designs (see the module docs for the splits), read from `dir`
    /// (normally [`data_dir`]).
    pub fn load(self, dir: &Path) -> Result<(Design, Design), DataError> {
        let read = |f: &str| RawData::read_csv(&dir.join(f));
        let (train, test, basis) = match self {
            DataSet::Pima => {
                let all = read("pima_train.csv")?.stack(read("pima_test.csv")?);
                let (tr, te) = all.holdout(HOLDOUT_FRACTION, SPLIT_SEED);
                (tr, te, Basis::Linear)
            }
            DataSet::Ripley => (
                read("ripley_train.csv")?,
                read("ripley_test.csv")?,
                Basis::Cubic,
            ),
            DataSet::Caravan | DataSet::BreastCancer => {
                let file = if self == DataSet::Caravan {
                    "caravan.csv"
                } else {
                    "breast_cancer.csv"
                };
                let (tr, te) = read(file)?.holdout(HOLDOUT_FRACTION, SPLIT_SEED);
                (tr, te, Basis::Linear)
            }
        };
        let (tr, te) = prepare(train, test, basis);
        if tr.d != self.dim() {
            return Err(DataError(format!(
                "{}: {} weights, expected {}",
                self.name(),
                tr.d,
                self.dim()
            )));
        }
        Ok((tr, te))
    }
}

/// Rows [`synthetic`] draws (training and held out).
pub const SYNTHETIC_ROWS: usize = 25_000;
/// Seed of [`synthetic`]'s generator.
pub const SYNTHETIC_SEED: u64 = 34;
/// Correlation ρ of neighbouring synthetic features (AR(1) across the columns).
pub const SYNTHETIC_CORRELATION: f64 = 0.5;
/// The synthetic data's true weights: the intercept β₀, then one per feature.
pub const SYNTHETIC_WEIGHTS: [f64; 10] = [-0.3, 1.0, -0.8, 0.6, -0.4, 0.2, 0.0, 0.5, -0.3, 0.8];

/// The synthetic data set's rows (module docs, "Synthetic"), before the split.
pub fn synthetic_rows() -> RawData {
    let mut rng = Pcg64::new(SYNTHETIC_SEED as u128, 0x5e7);
    let rho = SYNTHETIC_CORRELATION;
    let innovation = (1.0 - rho * rho).sqrt();
    let features = SYNTHETIC_WEIGHTS.len() - 1;
    let mut out = RawData::default();
    for _ in 0..SYNTHETIC_ROWS {
        let mut row = Vec::with_capacity(features);
        let mut previous = standard_normal_f64(&mut rng);
        row.push(previous);
        for _ in 1..features {
            previous = rho * previous + innovation * standard_normal_f64(&mut rng);
            row.push(previous);
        }
        let z = SYNTHETIC_WEIGHTS[0] + dot(&SYNTHETIC_WEIGHTS[1..], &row);
        let label = if uniform_f64(&mut rng) < sigmoid(z) {
            1.0
        } else {
            0.0
        };
        out.rows.push(row);
        out.labels.push(label);
    }
    out
}

/// The synthetic data set's training (N = 20 000) and held-out (5 000) designs, standardised on
/// the training rows, with the intercept (module docs, "Synthetic").
pub fn synthetic() -> (Design, Design) {
    let (train, test) = synthetic_rows().holdout(HOLDOUT_FRACTION, SPLIT_SEED);
    prepare(train, test, Basis::Linear)
}

/// `harness/data`, where the CSV files live.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// σ(z), evaluated without overflow.
#[inline]
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// log(1 + eᶻ), evaluated without overflow or cancellation.
#[inline]
pub fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The posterior of the weights given a training design.
#[derive(Clone, Debug)]
pub struct LogisticRegression {
    /// Training data.
    pub data: Design,
    /// Prior variance σ₀².
    pub prior_variance: f64,
}

impl LogisticRegression {
    /// The posterior on `data` with prior N(0, σ₀² I).
    pub fn new(data: Design, prior_variance: f64) -> Self {
        LogisticRegression {
            data,
            prior_variance,
        }
    }

    /// Weights d.
    pub fn dim(&self) -> usize {
        self.data.d
    }

    /// Training rows N.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// No training rows?
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The batched potential: `scale · Σ_{i∈rows} −log p(yᵢ | xᵢ, w) + ‖w‖²/(2σ₀²)`, and, if
    /// `grad` is given, its gradient written into it. `rows` = all rows with `scale` = 1 is
    /// the full U; a minibatch B with `scale` = N/|B| is the stochastic estimate Ũ.
    pub fn batch(
        &self,
        w: &[f64],
        rows: impl IntoIterator<Item = usize>,
        scale: f64,
        mut grad: Option<&mut [f64]>,
    ) -> f64 {
        if let Some(g) = grad.as_deref_mut() {
            g.fill(0.0);
        }
        let mut nll = 0.0;
        for i in rows {
            let x = self.data.row(i);
            let y = self.data.y[i];
            let z = dot(w, x);
            nll += softplus(z) - y * z;
            if let Some(g) = grad.as_deref_mut() {
                let r = sigmoid(z) - y;
                for (gj, xj) in g.iter_mut().zip(x) {
                    *gj += r * xj;
                }
            }
        }
        let inv = 1.0 / self.prior_variance;
        if let Some(g) = grad {
            for (gj, wj) in g.iter_mut().zip(w) {
                *gj = scale * *gj + inv * wj;
            }
        }
        scale * nll + 0.5 * inv * dot(w, w)
    }

    /// Full-data U(w).
    pub fn potential(&self, w: &[f64]) -> f64 {
        self.batch(w, 0..self.len(), 1.0, None)
    }

    /// Full-data ∇U(w) written into `g`; returns U(w).
    pub fn gradient(&self, w: &[f64], g: &mut [f64]) -> f64 {
        self.batch(w, 0..self.len(), 1.0, Some(g))
    }

    /// The minibatch estimate ∇Ũ(w) on the rows `batch` (likelihood scaled by N/|B|) written
    /// into `g`; returns Ũ(w).
    pub fn minibatch_gradient(&self, w: &[f64], batch: &[usize], g: &mut [f64]) -> f64 {
        let scale = self.len() as f64 / batch.len() as f64;
        self.batch(w, batch.iter().copied(), scale, Some(g))
    }

    /// The minibatch estimate of ∇U alone (without the potential [`Self::minibatch_gradient`]
    /// also sums): the prior's gradient plus N/|rows| times the sum over `rows`.
    pub fn scaled_gradient(&self, w: &[f64], rows: &[usize], g: &mut [f64]) {
        let data = &self.data;
        g.fill(0.0);
        for &i in rows {
            let x = data.row(i);
            let r = sigmoid(dot(w, x)) - data.y[i];
            for (gj, xj) in g.iter_mut().zip(x) {
                *gj += r * xj;
            }
        }
        let scale = self.len() as f64 / rows.len() as f64;
        let inv = 1.0 / self.prior_variance;
        for (gj, wj) in g.iter_mut().zip(w) {
            *gj = scale * *gj + inv * wj;
        }
    }

    /// A stochastic-gradient closure drawing a fresh minibatch of `batch` rows without
    /// replacement at every call, with its own RNG.
    pub fn stochastic_gradient(
        &self,
        batch: usize,
        seed: u64,
    ) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        let mut sampler = MinibatchSampler::new(self.len(), batch, seed);
        move |w: &[f64], g: &mut [f64]| {
            let rows = sampler.draw();
            let scale = self.len() as f64 / rows.len() as f64;
            self.batch(w, rows.iter().copied(), scale, Some(g));
        }
    }
}

/// Minibatch gradients of a [`LogisticRegression`] that also report the per-example moments
/// (Σgᵢ and Σgᵢ⊙gᵢ or Σgᵢgᵢᵀ of gᵢ = (σ(wᵀxᵢ) − yᵢ)xᵢ over the minibatch), for
/// [`sgmcmc::adapt::Calibrated`]. Rows are drawn without replacement, a fresh minibatch per
/// call, with the minibatch's own RNG; a batch of N or more rows is the full data (no noise:
/// V̂ = 0 exactly, since N − b = 0).
#[derive(Debug)]
pub struct MomentMinibatches<'a> {
    model: &'a LogisticRegression,
    sampler: MinibatchSampler,
    batch: usize,
}

impl<'a> MomentMinibatches<'a> {
    /// Minibatches of `batch` rows (at most N) of `model`, drawn with a PCG64 seeded by `seed`.
    pub fn new(model: &'a LogisticRegression, batch: usize, seed: u64) -> Self {
        let batch = batch.clamp(1, model.len().max(1));
        MomentMinibatches {
            model,
            sampler: MinibatchSampler::new(model.len(), batch, seed),
            batch,
        }
    }
}

/// The gradient alone, without the potential [`LogisticRegression::batch`] also sums (so that
/// the harness's timing of a sampler without the estimate does not pay for a potential it
/// does not use); the same floating-point operations in the same order as `batch`'s gradient.
impl sgmcmc::Gradient<f64> for MomentMinibatches<'_> {
    fn gradient(&mut self, w: &[f64], g: &mut [f64]) {
        let rows = self.sampler.draw();
        self.model.scaled_gradient(w, rows, g);
    }
}

impl sgmcmc::MinibatchGradient<f64> for MomentMinibatches<'_> {
    fn gradient_with_moments(
        &mut self,
        w: &[f64],
        g: &mut [f64],
        m: sgmcmc::Moments<'_, f64>,
    ) -> sgmcmc::Batch {
        let d = w.len();
        let data = &self.model.data;
        m.sum.fill(0.0);
        m.squares.fill(0.0);
        let rows = self.sampler.draw();
        for &i in rows {
            let x = data.row(i);
            let r = sigmoid(dot(w, x)) - data.y[i];
            for (a, &xa) in x.iter().enumerate() {
                let ga = r * xa;
                m.sum[a] += ga;
                if m.dense {
                    // The lower triangle only; mirrored below.
                    let row = &mut m.squares[a * d..a * d + a + 1];
                    for (q, &xb) in row.iter_mut().zip(x) {
                        *q += ga * r * xb;
                    }
                } else {
                    m.squares[a] += ga * ga;
                }
            }
        }
        if m.dense {
            for a in 0..d {
                for b in 0..a {
                    m.squares[b * d + a] = m.squares[a * d + b];
                }
            }
        }
        let scale = self.model.len() as f64 / rows.len() as f64;
        let inv = 1.0 / self.model.prior_variance;
        for ((gj, s), wj) in g.iter_mut().zip(m.sum.iter()).zip(w) {
            *gj = scale * s + inv * wj;
        }
        sgmcmc::Batch {
            size: self.batch,
            population: self.model.len(),
            sampling: sgmcmc::Sampling::WithoutReplacement,
        }
    }
}

/// Minibatch gradients of a [`LogisticRegression`] for control variates: the same minibatch S
/// (b rows drawn without replacement, fresh at every call, from the model's own seeded
/// generator) at θ and at the centring value θ̂, with the scaling of the plain estimate,
///
/// ```text
/// ∇Ũ_S(θ) = θ/σ₀² + (N/b) Σ_{i∈S} (σ(θᵀxᵢ) − yᵢ) xᵢ,
/// ```
///
/// and the full gradient ∇U(θ) = θ/σ₀² + Σᵢ (σ(θᵀxᵢ) − yᵢ) xᵢ: what
/// [`sgmcmc::variance::ControlVariate`] combines into ∇U(θ̂) + ∇Ũ_S(θ) − ∇Ũ_S(θ̂) (Baker et al.
/// 2019, eq. 5; with a refresh, SVRG, Dubey et al. 2016). As a [`sgmcmc::Gradient`] it is the
/// plain estimate ∇Ũ_S(θ) on a fresh S. It counts the per-example gradients it evaluates: b per
/// plain call, 2b per paired call, N per full gradient; divided by N, the passes through the
/// data.
#[derive(Debug)]
pub struct PairedMinibatches<'a> {
    model: &'a LogisticRegression,
    sampler: MinibatchSampler,
    per_example: u64,
}

impl<'a> PairedMinibatches<'a> {
    /// Minibatches of `batch` rows (at most N) of `model`, drawn with a PCG64 seeded by `seed`.
    pub fn new(model: &'a LogisticRegression, batch: usize, seed: u64) -> Self {
        let batch = batch.clamp(1, model.len().max(1));
        PairedMinibatches {
            model,
            sampler: MinibatchSampler::new(model.len(), batch, seed),
            per_example: 0,
        }
    }

    /// The per-example gradients evaluated so far (b per plain call, 2b per paired call, N per
    /// full gradient).
    pub fn per_example_gradients(&self) -> u64 {
        self.per_example
    }

    /// The model.
    pub fn model(&self) -> &'a LogisticRegression {
        self.model
    }
}

impl sgmcmc::Gradient<f64> for PairedMinibatches<'_> {
    fn gradient(&mut self, w: &[f64], g: &mut [f64]) {
        let rows = self.sampler.draw();
        self.model.scaled_gradient(w, rows, g);
        self.per_example += rows.len() as u64;
    }
}

impl sgmcmc::gradient::PairedGradient<f64> for PairedMinibatches<'_> {
    fn paired_gradient(&mut self, w: &[f64], centre: &[f64], g: &mut [f64], gc: &mut [f64]) {
        let data = &self.model.data;
        // One draw of S for both points: the control variate's difference
        // ∇Ũ_S(θ) − ∇Ũ_S(θ̂) is small only when both sums run over the same rows.
        let rows = self.sampler.draw();
        g.fill(0.0);
        gc.fill(0.0);
        for &i in rows {
            let x = data.row(i);
            let r = sigmoid(dot(w, x)) - data.y[i];
            let rc = sigmoid(dot(centre, x)) - data.y[i];
            for ((gj, gcj), xj) in g.iter_mut().zip(gc.iter_mut()).zip(x) {
                *gj += r * xj;
                *gcj += rc * xj;
            }
        }
        self.per_example += 2 * rows.len() as u64;
        let scale = self.model.len() as f64 / rows.len() as f64;
        let inv = 1.0 / self.model.prior_variance;
        for (gj, wj) in g.iter_mut().zip(w) {
            *gj = scale * *gj + inv * wj;
        }
        for (gj, cj) in gc.iter_mut().zip(centre) {
            *gj = scale * *gj + inv * cj;
        }
    }

    fn full_gradient(&mut self, w: &[f64], g: &mut [f64]) {
        // The gradient alone (`batch` would also sum the potential, which nothing here uses,
        // at every SVRG refresh).
        let data = &self.model.data;
        g.fill(0.0);
        for i in 0..data.len() {
            let x = data.row(i);
            let r = sigmoid(dot(w, x)) - data.y[i];
            for (gj, xj) in g.iter_mut().zip(x) {
                *gj += r * xj;
            }
        }
        self.per_example += data.len() as u64;
        let inv = 1.0 / self.model.prior_variance;
        for (gj, wj) in g.iter_mut().zip(w) {
            *gj += inv * wj;
        }
    }
}

/// The Laplace approximation N(ŵ, H⁻¹) of the posterior: the mode ŵ and the marginal sds
/// √(H⁻¹)ⱼⱼ, with H = Σᵢ σᵢ(1 − σᵢ) xᵢxᵢᵀ + I/σ₀² the Hessian of U at ŵ.
#[derive(Clone, Debug, PartialEq)]
pub struct Laplace {
    /// Posterior mode ŵ.
    pub mode: Vec<f64>,
    /// Marginal sds of N(ŵ, H⁻¹).
    pub sd: Vec<f64>,
}

impl LogisticRegression {
    /// The full-data Hessian of U at w (row-major d × d).
    pub fn hessian(&self, w: &[f64]) -> Vec<f64> {
        let d = self.dim();
        let mut h = vec![0.0; d * d];
        for i in 0..self.len() {
            let x = self.data.row(i);
            let s = sigmoid(dot(w, x));
            let v = s * (1.0 - s);
            for a in 0..d {
                let va = v * x[a];
                for b in 0..=a {
                    h[a * d + b] += va * x[b];
                }
            }
        }
        for a in 0..d {
            h[a * d + a] += 1.0 / self.prior_variance;
            for b in 0..a {
                h[b * d + a] = h[a * d + b];
            }
        }
        h
    }

    /// The Laplace approximation, by Newton's method from w = 0 (U is strictly convex, so it
    /// converges; halving steps guard the first iterations). `None` only if a Hessian is not
    /// numerically positive definite.
    pub fn laplace(&self) -> Option<Laplace> {
        let d = self.dim();
        let mut w = vec![0.0; d];
        let mut g = vec![0.0; d];
        let mut u = self.gradient(&w, &mut g);
        for _ in 0..100 {
            let mut l = self.hessian(&w);
            cholesky_in_place(&mut l, d).ok()?;
            let mut step = g.clone();
            cholesky_solve_in_place(&l, d, &mut step).ok()?;
            let mut t = 1.0;
            let mut next: Vec<f64>;
            loop {
                next = w.iter().zip(&step).map(|(a, b)| a - t * b).collect();
                if self.potential(&next) <= u || t < 1e-10 {
                    break;
                }
                t *= 0.5;
            }
            let moved = step.iter().map(|s| (t * s).abs()).fold(0.0, f64::max);
            w = next;
            u = self.gradient(&w, &mut g);
            if moved < 1e-12 {
                break;
            }
        }
        let mut cov = vec![0.0; d * d];
        spd_inverse(&self.hessian(&w), d, &mut cov).ok()?;
        let sd = (0..d).map(|j| cov[j * d + j].sqrt()).collect();
        Some(Laplace { mode: w, sd })
    }
}

/// p(y = 1 | x, w) for every row of `design`, added into `acc` (for posterior averages).
pub fn add_probabilities(design: &Design, w: &[f64], acc: &mut [f64]) {
    for (i, a) in acc.iter_mut().enumerate() {
        *a += sigmoid(dot(w, design.row(i)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sgmcmc::rng::standard_normal_f64;

    fn toy(n: usize, d: usize, seed: u64) -> LogisticRegression {
        let mut rng = Pcg64::new(seed as u128, 7);
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for _ in 0..n {
            let r: Vec<f64> = (0..d - 1)
                .map(|_| 2.0 * standard_normal_f64(&mut rng))
                .collect();
            let z: f64 = r
                .iter()
                .enumerate()
                .map(|(j, x)| (j as f64 - 1.0) * x)
                .sum();
            labels.push(if uniform_f64(&mut rng) < sigmoid(z) {
                1.0
            } else {
                0.0
            });
            rows.push(r);
        }
        LogisticRegression::new(Design::from_rows(rows, labels), PRIOR_VARIANCE)
    }

    #[test]
    fn stable_link_functions() {
        assert_eq!(softplus(1000.0), 1000.0);
        assert_eq!(softplus(-1000.0), 0.0);
        assert!((softplus(0.0) - 2f64.ln()).abs() < 1e-15);
        assert!((softplus(3.0) - (1.0 + 3f64.exp()).ln()).abs() < 1e-14);
        assert_eq!(sigmoid(1000.0), 1.0);
        assert_eq!(sigmoid(-1000.0), 0.0);
        assert!((sigmoid(0.7) + sigmoid(-0.7) - 1.0).abs() < 1e-15);
        // The potential stays finite for huge weights.
        let m = toy(20, 3, 1);
        assert!(m.potential(&[1e6, -1e6, 1e6]).is_finite());
    }

    /// ∇U against central differences of U (step 1e-5, relative error < 1e-6).
    #[test]
    fn gradient_matches_central_differences() {
        let m = toy(60, 5, 2);
        let w = [0.3, -0.7, 1.1, 0.05, -2.0];
        let mut g = [0.0; 5];
        let u = m.gradient(&w, &mut g);
        assert!((u - m.potential(&w)).abs() < 1e-12);
        for j in 0..5 {
            let eps = 1e-5;
            let (mut a, mut b) = (w, w);
            a[j] += eps;
            b[j] -= eps;
            let fd = (m.potential(&a) - m.potential(&b)) / (2.0 * eps);
            assert!(
                (fd - g[j]).abs() < 1e-6 * (1.0 + g[j].abs()),
                "j = {j}: fd {fd}, analytic {}",
                g[j]
            );
        }
    }

    /// The minibatch gradient is the full one on the full batch, and unbiased: its average over
    /// all C(4, 2) = 6 minibatches of a 4-row data set equals the full gradient.
    #[test]
    fn minibatch_gradient_is_unbiased() {
        let m = toy(4, 3, 3);
        let w = [0.2, 0.5, -0.4];
        let mut full = [0.0; 3];
        m.gradient(&w, &mut full);
        let mut g = [0.0; 3];
        m.minibatch_gradient(&w, &[0, 1, 2, 3], &mut g);
        for j in 0..3 {
            assert!((g[j] - full[j]).abs() < 1e-12);
        }
        let mut mean = [0.0; 3];
        let mut count = 0.0;
        for a in 0..4 {
            for b in a + 1..4 {
                m.minibatch_gradient(&w, &[a, b], &mut g);
                for j in 0..3 {
                    mean[j] += g[j];
                }
                count += 1.0;
            }
        }
        for j in 0..3 {
            assert!((mean[j] / count - full[j]).abs() < 1e-12);
        }
    }

    /// `MomentMinibatches` reports the same minibatch gradient as `minibatch_gradient` on the
    /// rows its sampler draws (replayed with the same seed), and sums / squares / outer
    /// products of exactly those rows' per-example gradients.
    #[test]
    fn moment_minibatches_report_their_rows() {
        use sgmcmc::{MinibatchGradient, Moments};
        let m = toy(30, 4, 5);
        let w = [0.3, -0.2, 0.5, 0.1];
        let mut replay = MinibatchSampler::new(m.len(), 7, 11);
        let mut mb = MomentMinibatches::new(&m, 7, 11);
        for dense in [false, true] {
            let rows = replay.draw().to_vec();
            let (mut g, mut sum) = ([0.0; 4], [0.0; 4]);
            let mut squares = vec![0.0; if dense { 16 } else { 4 }];
            let moments = Moments {
                sum: &mut sum,
                squares: &mut squares,
                dense,
            };
            let batch = mb.gradient_with_moments(&w, &mut g, moments);
            assert_eq!((batch.size, batch.population), (7, 30));
            let mut expected = [0.0; 4];
            m.minibatch_gradient(&w, &rows, &mut expected);
            let (mut s, mut q) = ([0.0; 4], vec![0.0; squares.len()]);
            for &i in &rows {
                let x = m.data.row(i);
                let r = sigmoid(dot(&w, x)) - m.data.y[i];
                for a in 0..4 {
                    s[a] += r * x[a];
                    if dense {
                        for b in 0..4 {
                            q[a * 4 + b] += r * r * x[a] * x[b];
                        }
                    } else {
                        q[a] += r * r * x[a] * x[a];
                    }
                }
            }
            for j in 0..4 {
                assert!((g[j] - expected[j]).abs() < 1e-12, "gradient {j}");
                assert!((sum[j] - s[j]).abs() < 1e-12, "sum {j}");
            }
            for k in 0..q.len() {
                assert!((squares[k] - q[k]).abs() < 1e-12, "squares {k}");
            }
        }
        // The plain gradient: `batch`'s floating-point operations, so bit for bit equal.
        let rows = replay.draw().to_vec();
        let (mut g, mut expected) = ([0.0; 4], [0.0; 4]);
        sgmcmc::Gradient::gradient(&mut mb, &w, &mut g);
        m.minibatch_gradient(&w, &rows, &mut expected);
        assert_eq!(g, expected);
    }

    /// `PairedMinibatches` evaluates one minibatch at both points: its two outputs are
    /// `minibatch_gradient` at θ and at θ̂ on the rows its sampler draws (replayed with the same
    /// seed), its full gradient is `gradient`'s, and it counts b, 2b and N per-example
    /// gradients for a plain, a paired and a full call.
    #[test]
    fn paired_minibatches_share_their_rows() {
        use sgmcmc::Gradient;
        use sgmcmc::gradient::PairedGradient;
        let m = toy(30, 4, 6);
        let (w, c) = ([0.3, -0.2, 0.5, 0.1], [0.1, 0.4, -0.3, 0.2]);
        let mut replay = MinibatchSampler::new(m.len(), 7, 13);
        let mut paired = PairedMinibatches::new(&m, 7, 13);
        let (mut g, mut gc) = ([0.0; 4], [0.0; 4]);
        paired.paired_gradient(&w, &c, &mut g, &mut gc);
        let rows = replay.draw().to_vec();
        let (mut expected, mut expected_c) = ([0.0; 4], [0.0; 4]);
        m.minibatch_gradient(&w, &rows, &mut expected);
        m.minibatch_gradient(&c, &rows, &mut expected_c);
        for j in 0..4 {
            assert!((g[j] - expected[j]).abs() < 1e-12, "at θ, {j}");
            assert!((gc[j] - expected_c[j]).abs() < 1e-12, "at θ̂, {j}");
        }
        assert_eq!(paired.per_example_gradients(), 14);
        paired.gradient(&w, &mut g);
        let rows = replay.draw().to_vec();
        m.minibatch_gradient(&w, &rows, &mut expected);
        for j in 0..4 {
            assert!((g[j] - expected[j]).abs() < 1e-12, "plain, {j}");
        }
        assert_eq!(paired.per_example_gradients(), 21);
        paired.full_gradient(&w, &mut g);
        m.gradient(&w, &mut expected);
        for j in 0..4 {
            assert!((g[j] - expected[j]).abs() < 1e-9, "full, {j}");
        }
        assert_eq!(paired.per_example_gradients(), 51);
    }

    /// The synthetic set: 20 000 training and 5 000 held-out rows of 10 weights, and its
    /// posterior concentrates on the weights it was drawn from. Those weights β act on the raw
    /// features; on the features standardised with the training means mⱼ and sds sⱼ they are
    /// β̃ⱼ = βⱼsⱼ and β̃₀ = β₀ + Σⱼ βⱼmⱼ. By Bernstein–von Mises the Laplace mode is within a few
    /// Laplace sds of β̃ (each coordinate's error is about N(0, sd²)): 5 sds per weight.
    #[test]
    fn synthetic_posterior_recovers_its_weights() {
        let (train, test) = synthetic();
        assert_eq!(
            (train.len(), test.len(), train.d, test.d),
            (20_000, 5_000, 10, 10)
        );
        let (raw, _) = synthetic_rows().holdout(HOLDOUT_FRACTION, SPLIT_SEED);
        let s = Standardizer::fit(&raw.rows);
        let beta = SYNTHETIC_WEIGHTS;
        let mut truth: Vec<f64> = (1..beta.len()).map(|j| beta[j] * s.sd[j - 1]).collect();
        let intercept = beta[0]
            + (1..beta.len())
                .map(|j| beta[j] * s.mean[j - 1])
                .sum::<f64>();
        truth.insert(0, intercept);
        let lap = LogisticRegression::new(train, PRIOR_VARIANCE)
            .laplace()
            .unwrap();
        for (j, t) in truth.iter().enumerate() {
            let z = (lap.mode[j] - t) / lap.sd[j];
            assert!(
                z.abs() <= 5.0,
                "weight {j}: mode {} vs {t} ({z:.1} sd)",
                lap.mode[j]
            );
        }
    }

    /// The Laplace mode zeroes the gradient, and the Hessian matches central differences of ∇U.
    #[test]
    fn laplace_mode_and_hessian() {
        let m = toy(80, 4, 4);
        let lap = m.laplace().unwrap();
        let mut g = [0.0; 4];
        m.gradient(&lap.mode, &mut g);
        assert!(g.iter().all(|x| x.abs() < 1e-8), "{g:?}");
        assert!(lap.sd.iter().all(|s| *s > 0.0 && s.is_finite()));
        let w = [0.1, -0.3, 0.5, 0.2];
        let h = m.hessian(&w);
        for j in 0..4 {
            let eps = 1e-5;
            let (mut a, mut b) = (w, w);
            a[j] += eps;
            b[j] -= eps;
            let (mut ga, mut gb) = ([0.0; 4], [0.0; 4]);
            m.gradient(&a, &mut ga);
            m.gradient(&b, &mut gb);
            for k in 0..4 {
                let fd = (ga[k] - gb[k]) / (2.0 * eps);
                assert!((fd - h[k * 4 + j]).abs() < 1e-5 * (1.0 + fd.abs()));
            }
        }
    }

    #[test]
    fn holdout_is_a_fixed_partition() {
        let raw = RawData {
            rows: (0..50).map(|i| vec![i as f64]).collect(),
            labels: (0..50).map(|i| (i % 2) as f64).collect(),
        };
        let (a, b) = raw.holdout(0.2, 5);
        assert_eq!((a.rows.len(), b.rows.len()), (40, 10));
        let mut all: Vec<f64> = a.rows.iter().chain(&b.rows).map(|r| r[0]).collect();
        all.sort_by(f64::total_cmp);
        assert_eq!(all, (0..50).map(|i| i as f64).collect::<Vec<_>>());
        assert_eq!(raw.holdout(0.2, 5), (a, b));
    }

    #[test]
    fn data_sets_load_with_their_dimensions() {
        let dir = data_dir();
        for (ds, n_train, n_test) in [
            (DataSet::Pima, 426, 106),
            (DataSet::Ripley, 250, 1000),
            (DataSet::Caravan, 4658, 1164),
            (DataSet::BreastCancer, 455, 114),
        ] {
            let (tr, te) = ds.load(&dir).unwrap();
            assert_eq!(
                (tr.len(), te.len(), tr.d, te.d),
                (n_train, n_test, ds.dim(), ds.dim())
            );
            // Intercept column, then standardised features (training mean 0, sd 1).
            assert!((0..tr.len()).all(|i| tr.row(i)[0] == 1.0));
            for j in 1..tr.d {
                let col: Vec<f64> = (0..tr.len()).map(|i| tr.row(i)[j]).collect();
                let mean = col.iter().sum::<f64>() / col.len() as f64;
                assert!(mean.abs() < 1e-9, "{ds:?} column {j} mean {mean}");
            }
            assert!(tr.y.contains(&1.0) && te.y.contains(&1.0));
        }
    }

    /// HMC on the Pima posterior (426 × 8 with intercept, prior variance 100) with its step
    /// size tuned by the core's dual averaging, from w = 0: for δ = 0.65 and 0.8 the mean
    /// acceptance of the warm-up's last 1000 of 2000 proposals (L = 10) is δ within 0.05 (its
    /// Monte Carlo error is about 0.01). Printed beside it: sampling at the final h̄.
    #[test]
    fn dual_averaging_reaches_its_target_on_pima() {
        use sgmcmc::adapt::DualAveraging;
        use sgmcmc::prelude::{ChainState, Hmc, HmcParams, Model, Sampler, StepSize};
        let (train, _) = DataSet::Pima.load(&data_dir()).unwrap();
        let lr = LogisticRegression::new(train, PRIOR_VARIANCE);
        let d = lr.dim();
        for (k, target) in [0.65, 0.8].into_iter().enumerate() {
            let mut model = Model::new(
                |w: &[f64], g: &mut [f64]| {
                    lr.gradient(w, g);
                },
                |w: &[f64]| lr.potential(w),
            );
            let (mut theta, mut p, mut work) = (vec![0.0; d], vec![0.0; d], vec![0.0; 4 * d]);
            let params = HmcParams::new(0.01).with_leapfrog_steps(10);
            let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
            let mut rng = Pcg64::new(41 + k as u128, 3);
            let mut tuner = DualAveraging::new(0.01)
                .unwrap()
                .with_target(target)
                .unwrap();
            let mut late = 0.0;
            hmc.run_with(&mut model, &mut rng, 2000, |i, s, st| {
                let a = st.acceptance.unwrap();
                if i >= 1000 {
                    late += a;
                }
                s.set_step_size(tuner.update(a)).unwrap();
            })
            .unwrap();
            let late = late / 1000.0;
            let h = tuner.final_step_size();
            hmc.set_step_size(h).unwrap();
            let mut sum = 0.0;
            hmc.run_with(&mut model, &mut rng, 2000, |_, _, st| {
                sum += st.acceptance.unwrap()
            })
            .unwrap();
            println!(
                "Pima, δ = {target}: warm-up's last 1000 accept {late:.3}; h̄ = {h:.4} accepts {:.3}; |w| = {:.2}",
                sum / 2000.0,
                hmc.position().iter().map(|x| x * x).sum::<f64>().sqrt()
            );
            assert!((late - target).abs() <= 0.05, "δ = {target}: {late}");
        }
    }
}
