//! Bayesian neural network: a fully connected ReLU or sigmoid classifier with a Gaussian prior and a softmax likelihood, its minibatch gradient by backpropagation, and the digits / MNIST data it runs on.
//!
//! The network of Ding et al. 2014 §5 (one hidden layer of 100 units) and Li et al. 2016 §5
//! (depth 2–4, 100 ReLU units per layer): layer sizes n₀ (pixels), n₁ … n_L (hidden), C
//! (classes), hidden activations g (ReLU or sigmoid), a linear output layer and a softmax, so
//! with a₀ = x, z_l = a_{l−1} W_l + b_l, a_l = g(z_l),
//!
//! ```text
//! p(y | x, θ) = softmax(z_{L+1})_y,      θ = (W₁, b₁, …, W_{L+1}, b_{L+1}) ~ N(0, σ₀² I),
//! U(θ) = −Σᵢ log p(yᵢ | xᵢ, θ) + ‖θ‖² / (2σ₀²),
//! ```
//!
//! with σ₀² = [`PRIOR_VARIANCE`] = 1 (Li et al. 2016: "σ² = 1 in our experiment"). No hidden
//! layer gives the multinomial logistic regression, the linear baseline. Backpropagation:
//! δ_{L+1} = softmax(z_{L+1}) − onehot(y), ∂U/∂W_l = a_{l−1}ᵀ δ_l, ∂U/∂b_l = Σ δ_l,
//! δ_{l−1} = (δ_l W_lᵀ) ⊙ g′(z_{l−1}). A minibatch B's likelihood terms are scaled by N/|B|
//! (Ding et al. 2014, eq. 2). The layer products run through `ndarray`'s `general_mat_mul`
//! (the `matrixmultiply` GEMM kernels) into buffers allocated once per gradient closure; a
//! minibatch is processed as one matrix, so a step costs three GEMMs per layer.
//!
//! θ is one flat vector: per layer the weights W_l row-major (n_{l−1} rows of n_l), then the
//! biases b_l.
//!
//! # Data
//!
//! [`Classification::read_csv`] reads `digits.csv` (the 8×8 UCI digits, 1797 images, 64
//! pixels 0–16, labels 0–9), [`Classification::read_idx`] MNIST's IDX files for a user who has
//! them. [`digits_split`] splits the digits by a fixed seeded shuffle ([`SPLIT_SEED`]) into
//! 1197 training, 300 validation and 300 test images; [`standardise`] centres and scales every
//! pixel with the training split's mean and sd (a pixel constant on the training split, such as
//! the always-blank corners, is only centred).

use super::gaussian_mean::MinibatchSampler;
pub use super::logistic_regression::DataError;
use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};
use rand_pcg::Pcg64;
use sgmcmc::rng::uniform_f64;
use std::fmt;
use std::path::Path;

/// Prior variance σ₀² of every weight and bias (Li et al. 2016 §5).
pub const PRIOR_VARIANCE: f64 = 1.0;
/// Seed of the fixed train / validation / test split of the digits.
pub const SPLIT_SEED: u64 = 2014;
/// Validation images in [`digits_split`].
pub const VALIDATION_IMAGES: usize = 300;
/// Test images in [`digits_split`].
pub const TEST_IMAGES: usize = 300;

/// Labelled feature vectors: `x` row-major (`len() × features`), labels in `0..classes`.
#[derive(Clone, Debug, PartialEq)]
pub struct Classification {
    /// Features, one row per example.
    pub x: Vec<f64>,
    /// Class of each example.
    pub y: Vec<usize>,
    /// Features per example.
    pub features: usize,
    /// Number of classes (labels are below it).
    pub classes: usize,
}

impl Classification {
    /// Examples.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are no examples.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Example i's features.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.features..(i + 1) * self.features]
    }

    /// The examples at `rows`, in that order.
    pub fn select(&self, rows: &[usize]) -> Classification {
        Classification {
            x: rows.iter().flat_map(|&i| self.row(i)).copied().collect(),
            y: rows.iter().map(|&i| self.y[i]).collect(),
            features: self.features,
            classes: self.classes,
        }
    }

    /// Reads a CSV file with a header row, every column a number, the last the class label, a
    /// whole number in `0..classes`.
    pub fn read_csv(path: &Path, classes: usize) -> Result<Self, DataError> {
        let err = |e: &dyn fmt::Display| DataError(format!("{}: {e}", path.display()));
        let mut reader = csv::Reader::from_path(path).map_err(|e| err(&e))?;
        let (mut x, mut y, mut features) = (Vec::new(), Vec::new(), None);
        for (line, record) in reader.records().enumerate() {
            let record = record.map_err(|e| err(&e))?;
            let row = line + 2;
            let mut values = record
                .iter()
                .map(|f| f.trim().parse::<f64>())
                .collect::<Result<Vec<f64>, _>>()
                .map_err(|e| err(&format!("row {row}: {e}")))?;
            let label = values
                .pop()
                .ok_or_else(|| err(&format!("row {row}: empty")))?;
            if !(label >= 0.0 && label < classes as f64 && label.fract() == 0.0) {
                return Err(err(&format!(
                    "row {row}: label {label} is not a class 0..{classes}"
                )));
            }
            if values.iter().any(|v| !v.is_finite()) {
                return Err(err(&format!("row {row}: non-finite feature")));
            }
            if *features.get_or_insert(values.len()) != values.len() || values.is_empty() {
                return Err(err(&format!("row {row}: ragged or no features")));
            }
            x.extend(values);
            y.push(label as usize);
        }
        let features = features.ok_or_else(|| err(&"no data rows"))?;
        Ok(Classification {
            x,
            y,
            features,
            classes,
        })
    }

    /// Reads MNIST's IDX pair: an `idx3-ubyte` image file (magic 0x00000803, then the count,
    /// rows and columns as big-endian u32, then one byte per pixel) and its `idx1-ubyte` label
    /// file (magic 0x00000801, the count, one byte per label, 0–9). Pixels become numbers 0–255.
    pub fn read_idx(images: &Path, labels: &Path) -> Result<Self, DataError> {
        let read =
            |p: &Path| std::fs::read(p).map_err(|e| DataError(format!("{}: {e}", p.display())));
        let (img, lab) = (read(images)?, read(labels)?);
        let word = |b: &[u8], k: usize| -> Option<usize> {
            let w = b.get(4 * k..4 * k + 4)?;
            Some(u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as usize)
        };
        let bad = |p: &Path, what: &str| DataError(format!("{}: {what}", p.display()));
        if word(&img, 0) != Some(0x0803) {
            return Err(bad(images, "not an IDX image file (magic 0x00000803)"));
        }
        if word(&lab, 0) != Some(0x0801) {
            return Err(bad(labels, "not an IDX label file (magic 0x00000801)"));
        }
        let (n, rows, cols) = match (word(&img, 1), word(&img, 2), word(&img, 3)) {
            (Some(n), Some(r), Some(c)) => (n, r, c),
            _ => return Err(bad(images, "truncated header")),
        };
        let features = rows
            .checked_mul(cols)
            .filter(|&f| f > 0)
            .ok_or_else(|| bad(images, "empty or overflowing image size"))?;
        let pixels = n
            .checked_mul(features)
            .filter(|&p| img.len() == 16 + p)
            .ok_or_else(|| bad(images, "file length does not match its header"))?;
        if word(&lab, 1) != Some(n) || lab.len() != 8 + n {
            return Err(bad(labels, "label count does not match the images"));
        }
        let y: Vec<usize> = lab[8..].iter().map(|&l| l as usize).collect();
        if y.iter().any(|&l| l > 9) {
            return Err(bad(labels, "label above 9"));
        }
        Ok(Classification {
            x: img[16..16 + pixels].iter().map(|&p| f64::from(p)).collect(),
            y,
            features,
            classes: 10,
        })
    }
}

/// Centres and scales every feature of `train`, `validation` and `test` by the training
/// split's mean and sd (divisor n − 1); a feature constant on the training split is only
/// centred.
pub fn standardise(sets: [&mut Classification; 3]) {
    let [train, validation, test] = sets;
    let (n, p) = (train.len() as f64, train.features);
    for j in 0..p {
        let col = || (0..train.len()).map(|i| train.x[i * p + j]);
        let mean = col().sum::<f64>() / n;
        let var = col().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
        for set in [&mut *train, &mut *validation, &mut *test] {
            for i in 0..set.len() {
                let v = &mut set.x[i * p + j];
                *v = (*v - mean) / sd;
            }
        }
    }
}

/// The digits' fixed split: a Fisher–Yates shuffle of the 1797 rows by a PCG64 seeded with
/// [`SPLIT_SEED`]; the first [`TEST_IMAGES`] shuffled rows are the test set, the next
/// [`VALIDATION_IMAGES`] the validation set, the rest (1197) the training set; all
/// standardised by the training split ([`standardise`]). Returns (train, validation, test).
pub fn digits_split(
    all: &Classification,
) -> Result<(Classification, Classification, Classification), DataError> {
    let n = all.len();
    if n <= TEST_IMAGES + VALIDATION_IMAGES + 1 {
        return Err(DataError(format!(
            "{n} examples: too few for {TEST_IMAGES} test and {VALIDATION_IMAGES} validation images"
        )));
    }
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rng = Pcg64::new(SPLIT_SEED as u128, 0xd161);
    for i in (1..n).rev() {
        let j = ((uniform_f64(&mut rng) * (i + 1) as f64) as usize).min(i);
        perm.swap(i, j);
    }
    let (test, rest) = perm.split_at(TEST_IMAGES);
    let (validation, train) = rest.split_at(VALIDATION_IMAGES);
    let (mut tr, mut va, mut te) = (all.select(train), all.select(validation), all.select(test));
    standardise([&mut tr, &mut va, &mut te]);
    Ok((tr, va, te))
}

/// The hidden layers' activation g.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// g(z) = max(z, 0) (Li et al. 2016 §5).
    Relu,
    /// g(z) = 1/(1 + e⁻ᶻ) (Ding et al. 2014's BNN, after Chen et al. 2014).
    Sigmoid,
}

impl Activation {
    #[inline]
    fn apply(self, z: f64) -> f64 {
        match self {
            Activation::Relu => z.max(0.0),
            Activation::Sigmoid => super::logistic_regression::sigmoid(z),
        }
    }

    /// g′ from z and a = g(z).
    #[inline]
    fn derivative(self, z: f64, a: f64) -> f64 {
        match self {
            Activation::Relu => {
                if z > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Activation::Sigmoid => a * (1.0 - a),
        }
    }
}

/// A fully connected network's shape: layer sizes `[n₀, n₁, …, n_L, C]` and the hidden
/// activation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Architecture {
    /// Units per layer, inputs first, classes last (at least two entries, all ≥ 1).
    pub sizes: Vec<usize>,
    /// Activation of the hidden layers.
    pub activation: Activation,
}

impl Architecture {
    /// `depth` hidden layers of `width` units between `inputs` and `classes`.
    pub fn new(
        inputs: usize,
        depth: usize,
        width: usize,
        classes: usize,
        activation: Activation,
    ) -> Self {
        let mut sizes = vec![inputs];
        sizes.extend(std::iter::repeat_n(width, depth));
        sizes.push(classes);
        Architecture { sizes, activation }
    }

    /// Hidden layers.
    pub fn depth(&self) -> usize {
        self.sizes.len() - 2
    }

    /// Parameters: Σ_l (n_{l−1} + 1) n_l.
    pub fn dim(&self) -> usize {
        self.sizes.windows(2).map(|w| (w[0] + 1) * w[1]).sum()
    }

    /// Offsets of layer l's weights and biases in θ, for l = 1 … L+1.
    fn offsets(&self) -> Vec<(usize, usize, usize, usize)> {
        let mut at = 0;
        self.sizes
            .windows(2)
            .map(|w| {
                let (inp, out) = (w[0], w[1]);
                let o = (at, at + inp * out, inp, out);
                at += (inp + 1) * out;
                o
            })
            .collect()
    }

    /// He-scaled random start: weights N(0, 2/n_{l−1}), biases 0 (a draw from the N(0, 1)
    /// prior saturates the softmax: a first layer fed 64 standardised pixels would have
    /// pre-activations of sd 8).
    pub fn initial(&self, rng: &mut Pcg64) -> Vec<f64> {
        let mut theta = vec![0.0; self.dim()];
        for (w, b, inp, _) in self.offsets() {
            let sd = (2.0 / inp as f64).sqrt();
            for v in &mut theta[w..b] {
                *v = sd * sgmcmc::rng::standard_normal_f64(rng);
            }
        }
        theta
    }
}

/// Buffers of one forward and backward pass over up to `rows` examples: per layer the
/// pre-activations z_l and activations a_l (a₀ = the inputs), and two δ buffers.
#[derive(Clone, Debug)]
pub struct Workspace {
    rows: usize,
    z: Vec<Vec<f64>>,
    a: Vec<Vec<f64>>,
    delta: [Vec<f64>; 2],
}

impl Workspace {
    /// Buffers for batches of up to `rows` examples of `arch`.
    pub fn new(arch: &Architecture, rows: usize) -> Self {
        let widest = arch.sizes.iter().copied().max().unwrap_or(1);
        Workspace {
            rows,
            z: arch.sizes.iter().map(|&n| vec![0.0; rows * n]).collect(),
            a: arch.sizes.iter().map(|&n| vec![0.0; rows * n]).collect(),
            delta: [vec![0.0; rows * widest], vec![0.0; rows * widest]],
        }
    }
}

/// The network on a training set: potential, minibatch gradient, predictions.
#[derive(Clone, Debug)]
pub struct Bnn<'a> {
    /// The network's shape.
    pub arch: Architecture,
    /// Training examples.
    pub train: &'a Classification,
    /// Prior variance σ₀².
    pub prior_variance: f64,
}

impl<'a> Bnn<'a> {
    /// `arch` on `train` with the prior N(0, [`PRIOR_VARIANCE`] I). The first and last layer
    /// sizes must match the data's features and classes.
    pub fn new(arch: Architecture, train: &'a Classification) -> Result<Self, DataError> {
        let (first, last) = (arch.sizes.first(), arch.sizes.last());
        if arch.sizes.len() < 2 || arch.sizes.contains(&0) {
            return Err(DataError(
                "a network needs inputs and classes, no empty layer".into(),
            ));
        }
        if first != Some(&train.features) || last != Some(&train.classes) {
            return Err(DataError(format!(
                "network {:?} does not fit {} features and {} classes",
                arch.sizes, train.features, train.classes
            )));
        }
        if train.is_empty() {
            return Err(DataError("no training examples".into()));
        }
        Ok(Bnn {
            arch,
            train,
            prior_variance: PRIOR_VARIANCE,
        })
    }

    /// Parameters.
    pub fn dim(&self) -> usize {
        self.arch.dim()
    }

    /// Forward pass of `data`'s examples `rows` (at most `ws.rows`): fills ws.z, ws.a and
    /// leaves the class probabilities in the last `a` buffer; returns Σ −log p(y | x, θ).
    fn forward(
        &self,
        theta: &[f64],
        data: &Classification,
        rows: &[usize],
        ws: &mut Workspace,
    ) -> f64 {
        let b = rows.len();
        debug_assert!(b <= ws.rows);
        let p = data.features;
        for (k, &i) in rows.iter().enumerate() {
            ws.a[0][k * p..(k + 1) * p].copy_from_slice(data.row(i));
        }
        let layers = self.arch.offsets();
        let last = layers.len() - 1;
        for (l, &(w, bias, inp, out)) in layers.iter().enumerate() {
            let weights = ArrayView2::from_shape((inp, out), &theta[w..bias]).expect("layout");
            let biases = &theta[bias..bias + out];
            let (before, after) = ws.a.split_at_mut(l + 1);
            let input = ArrayView2::from_shape((b, inp), &before[l][..b * inp]).expect("layout");
            let z = &mut ws.z[l + 1][..b * out];
            for row in z.chunks_exact_mut(out) {
                row.copy_from_slice(biases);
            }
            let mut zv = ArrayViewMut2::from_shape((b, out), &mut *z).expect("layout");
            general_mat_mul(1.0, &input, &weights, 1.0, &mut zv);
            let a = &mut after[0][..b * out];
            if l < last {
                let g = self.arch.activation;
                for (a, z) in a.iter_mut().zip(z.iter()) {
                    *a = g.apply(*z);
                }
            } else {
                // Softmax with the maximum subtracted (no overflow for any finite logits).
                for (a, z) in a.chunks_exact_mut(out).zip(z.chunks_exact(out)) {
                    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let mut s = 0.0;
                    for (a, z) in a.iter_mut().zip(z) {
                        *a = (z - m).exp();
                        s += *a;
                    }
                    for a in a.iter_mut() {
                        *a /= s;
                    }
                }
            }
        }
        let (c, probs) = (data.classes, &ws.a[last + 1]);
        let z = &ws.z[last + 1];
        rows.iter()
            .enumerate()
            .map(|(k, &i)| {
                // −log softmax(z)_y = log Σ exp(z − m) − (z_y − m), accurate where p_y underflows.
                let zk = &z[k * c..(k + 1) * c];
                let m = zk.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = zk.iter().map(|v| (v - m).exp()).sum();
                let _ = probs;
                s.ln() - (zk[data.y[i]] - m)
            })
            .sum()
    }

    /// Writes θ/σ₀² + scale · Σ_{i ∈ rows} ∇(−log p(yᵢ | xᵢ, θ)) into `grad` (rows at most
    /// `ws.rows`); returns the matching potential scale · Σ −log p + ‖θ‖²/(2σ₀²).
    pub fn batch_gradient(
        &self,
        theta: &[f64],
        rows: &[usize],
        scale: f64,
        grad: &mut [f64],
        ws: &mut Workspace,
    ) -> f64 {
        let nll = self.forward(theta, self.train, rows, ws);
        let inv_var = 1.0 / self.prior_variance;
        for (g, t) in grad.iter_mut().zip(theta) {
            *g = t * inv_var;
        }
        let b = rows.len();
        let layers = self.arch.offsets();
        let last = layers.len() - 1;
        // δ of the output layer: softmax − onehot.
        let c = self.train.classes;
        {
            let delta = &mut ws.delta[last % 2][..b * c];
            delta.copy_from_slice(&ws.a[last + 1][..b * c]);
            for (k, &i) in rows.iter().enumerate() {
                delta[k * c + self.train.y[i]] -= 1.0;
            }
        }
        for l in (0..=last).rev() {
            let (w, bias, inp, out) = layers[l];
            let [d0, d1] = &mut ws.delta;
            let (delta, below) = if l % 2 == 0 { (&*d0, d1) } else { (&*d1, d0) };
            let delta = &delta[..b * out];
            let dv = ArrayView2::from_shape((b, out), delta).expect("layout");
            let input = ArrayView2::from_shape((b, inp), &ws.a[l][..b * inp]).expect("layout");
            let (gw, gb) = grad[w..bias + out].split_at_mut(bias - w);
            let mut gwv = ArrayViewMut2::from_shape((inp, out), gw).expect("layout");
            general_mat_mul(scale, &input.t(), &dv, 1.0, &mut gwv);
            for row in delta.chunks_exact(out) {
                for (g, d) in gb.iter_mut().zip(row) {
                    *g += scale * d;
                }
            }
            if l > 0 {
                let weights = ArrayView2::from_shape((inp, out), &theta[w..bias]).expect("layout");
                let below = &mut below[..b * inp];
                let mut bv = ArrayViewMut2::from_shape((b, inp), &mut *below).expect("layout");
                general_mat_mul(1.0, &dv, &weights.t(), 0.0, &mut bv);
                let g = self.arch.activation;
                for ((d, z), a) in below
                    .iter_mut()
                    .zip(&ws.z[l][..b * inp])
                    .zip(&ws.a[l][..b * inp])
                {
                    *d *= g.derivative(*z, *a);
                }
            }
        }
        let prior: f64 = theta.iter().map(|t| t * t).sum::<f64>() * 0.5 * inv_var;
        scale * nll + prior
    }

    /// U(θ) on the whole training set.
    pub fn potential(&self, theta: &[f64]) -> f64 {
        let mut ws = Workspace::new(&self.arch, EVAL_ROWS);
        let rows: Vec<usize> = (0..self.train.len()).collect();
        let nll: f64 = rows
            .chunks(EVAL_ROWS)
            .map(|r| self.forward(theta, self.train, r, &mut ws))
            .sum();
        nll + theta.iter().map(|t| t * t).sum::<f64>() * 0.5 / self.prior_variance
    }

    /// Adds p(c | xᵢ, θ) for every example i of `data` and class c to `probs` (row-major,
    /// `data.len() × classes`); returns Σᵢ −log p(yᵢ | xᵢ, θ).
    pub fn add_probabilities(
        &self,
        theta: &[f64],
        data: &Classification,
        probs: &mut [f64],
        ws: &mut Workspace,
    ) -> f64 {
        let c = data.classes;
        let last = self.arch.sizes.len() - 1;
        let rows: Vec<usize> = (0..data.len()).collect();
        let mut nll = 0.0;
        for r in rows.chunks(ws.rows) {
            nll += self.forward(theta, data, r, ws);
            let first = r[0] * c;
            for (p, q) in probs[first..first + r.len() * c]
                .iter_mut()
                .zip(&ws.a[last])
            {
                *p += q;
            }
        }
        nll
    }

    /// ∇Ũ on minibatches of `batch` training examples drawn without replacement at every call
    /// (seeded by `seed`), the likelihood scaled by N/|B|.
    pub fn stochastic_gradient(
        &self,
        batch: usize,
        seed: u64,
    ) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        let mut sampler = MinibatchSampler::new(self.train.len(), batch, seed);
        let mut ws = Workspace::new(&self.arch, batch.min(self.train.len()));
        move |theta: &[f64], grad: &mut [f64]| {
            let rows = sampler.draw();
            let scale = self.train.len() as f64 / rows.len() as f64;
            self.batch_gradient(theta, rows, scale, grad, &mut ws);
        }
    }
}

/// Rows per forward pass when evaluating whole data sets.
pub const EVAL_ROWS: usize = 256;

/// Test error and mean log-likelihood of averaged class probabilities `probs` (row-major,
/// summed over `draws` draws) on `data`: (fraction misclassified by the arg-max, (1/n) Σᵢ
/// log p̄(yᵢ | xᵢ)).
pub fn score(probs: &[f64], draws: usize, data: &Classification) -> (f64, f64) {
    let c = data.classes;
    let s = draws.max(1) as f64;
    let mut wrong = 0usize;
    let mut ll = 0.0;
    for (i, &y) in data.y.iter().enumerate() {
        let row = &probs[i * c..(i + 1) * c];
        let best = row
            .iter()
            .enumerate()
            .fold(
                (0, f64::NEG_INFINITY),
                |acc, (k, &p)| if p > acc.1 { (k, p) } else { acc },
            )
            .0;
        wrong += usize::from(best != y);
        ll += (row[y] / s).max(f64::MIN_POSITIVE).ln();
    }
    let n = data.len().max(1) as f64;
    (wrong as f64 / n, ll / n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy(n: usize, features: usize, classes: usize, seed: u64) -> Classification {
        let mut rng = Pcg64::new(seed as u128, 1);
        Classification {
            x: (0..n * features)
                .map(|_| sgmcmc::rng::standard_normal_f64(&mut rng))
                .collect(),
            y: (0..n).map(|i| (i * 7 + 3) % classes).collect(),
            features,
            classes,
        }
    }

    /// The backpropagated gradient against central differences of the potential, for both
    /// activations and depths 0–3 (the relative error of a central difference with step 10⁻⁵
    /// is O(10⁻⁸) here; a wrong index or a missing term shows as O(1)).
    #[test]
    fn gradient_matches_finite_differences() {
        for (depth, activation) in [
            (0, Activation::Relu),
            (1, Activation::Sigmoid),
            (2, Activation::Relu),
            (3, Activation::Sigmoid),
        ] {
            let data = toy(9, 5, 4, 3 + depth as u64);
            let arch = Architecture::new(5, depth, 6, 4, activation);
            let bnn = Bnn::new(arch.clone(), &data).unwrap();
            let mut rng = Pcg64::new(7, 7);
            let theta = arch.initial(&mut rng);
            let rows: Vec<usize> = vec![0, 3, 4, 8];
            let scale = 2.5;
            let mut ws = Workspace::new(&arch, rows.len());
            let mut grad = vec![0.0; theta.len()];
            bnn.batch_gradient(&theta, &rows, scale, &mut grad, &mut ws);
            let mut u = |t: &[f64]| {
                let mut g = vec![0.0; t.len()];
                bnn.batch_gradient(t, &rows, scale, &mut g, &mut ws)
            };
            let eps = 1e-5;
            for j in 0..theta.len() {
                let (mut up, mut down) = (theta.clone(), theta.clone());
                up[j] += eps;
                down[j] -= eps;
                let fd = (u(&up) - u(&down)) / (2.0 * eps);
                assert!(
                    (fd - grad[j]).abs() <= 1e-6 * (1.0 + fd.abs()),
                    "depth {depth} {activation:?} θ[{j}]: backprop {} vs difference {fd}",
                    grad[j]
                );
            }
        }
    }

    /// Probabilities sum to one per example and the whole-set potential equals the batch
    /// potential over all rows with scale 1.
    #[test]
    fn probabilities_and_potential_are_consistent() {
        let data = toy(300, 4, 3, 11);
        let arch = Architecture::new(4, 1, 8, 3, Activation::Relu);
        let bnn = Bnn::new(arch.clone(), &data).unwrap();
        let theta = arch.initial(&mut Pcg64::new(1, 1));
        let mut probs = vec![0.0; 300 * 3];
        let mut ws = Workspace::new(&arch, EVAL_ROWS);
        let nll = bnn.add_probabilities(&theta, &data, &mut probs, &mut ws);
        for row in probs.chunks(3) {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        let rows: Vec<usize> = (0..300).collect();
        let mut ws_all = Workspace::new(&arch, 300);
        let mut g = vec![0.0; theta.len()];
        let u = bnn.batch_gradient(&theta, &rows, 1.0, &mut g, &mut ws_all);
        assert!((u - bnn.potential(&theta)).abs() < 1e-9 * u.abs());
        let prior = theta.iter().map(|t| t * t).sum::<f64>() * 0.5;
        assert!((nll + prior - u).abs() < 1e-9 * u.abs());
        let (err, ll) = score(&probs, 1, &data);
        assert!((0.0..=1.0).contains(&err) && (ll + nll / 300.0).abs() < 1e-9);
    }

    /// An IDX pair written by hand reads back; a wrong magic, a short file and a label above 9
    /// are refused with a message.
    #[test]
    fn idx_files_round_trip_and_bad_ones_are_refused() {
        let dir = std::env::temp_dir().join(format!("sgmcmc-idx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let be = |v: u32| v.to_be_bytes();
        let mut img = Vec::new();
        for w in [0x0803u32, 3, 2, 2] {
            img.extend(be(w));
        }
        img.extend([0u8, 255, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let mut lab = Vec::new();
        for w in [0x0801u32, 3] {
            lab.extend(be(w));
        }
        lab.extend([7u8, 0, 9]);
        let (ip, lp) = (dir.join("img"), dir.join("lab"));
        std::fs::write(&ip, &img).unwrap();
        std::fs::write(&lp, &lab).unwrap();
        let d = Classification::read_idx(&ip, &lp).unwrap();
        assert_eq!((d.len(), d.features, d.classes), (3, 4, 10));
        assert_eq!(d.y, vec![7, 0, 9]);
        assert_eq!(d.row(0), &[0.0, 255.0, 1.0, 2.0]);
        std::fs::write(&ip, &img[..img.len() - 1]).unwrap();
        assert!(
            Classification::read_idx(&ip, &lp)
                .unwrap_err()
                .0
                .contains("length")
        );
        std::fs::write(&ip, &img).unwrap();
        let mut bad = lab.clone();
        bad[9] = 10;
        std::fs::write(&lp, &bad).unwrap();
        assert!(
            Classification::read_idx(&ip, &lp)
                .unwrap_err()
                .0
                .contains("above 9")
        );
        assert!(
            Classification::read_idx(&lp, &ip)
                .unwrap_err()
                .0
                .contains("magic")
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The committed digits split: sizes, class balance roughly kept, training pixels
    /// standardised.
    #[test]
    fn digits_split_is_fixed_and_standardised() {
        let dir = super::super::logistic_regression::data_dir();
        let all = Classification::read_csv(&dir.join("digits.csv"), 10).unwrap();
        assert_eq!((all.len(), all.features), (1797, 64));
        let (tr, va, te) = digits_split(&all).unwrap();
        assert_eq!((tr.len(), va.len(), te.len()), (1197, 300, 300));
        for c in 0..10 {
            let count = te.y.iter().filter(|&&y| y == c).count();
            // ~30 per class; a split that dropped a class would show 0.
            assert!((15..=45).contains(&count), "class {c}: {count} test images");
        }
        let col: Vec<f64> = (0..tr.len()).map(|i| tr.row(i)[20]).collect();
        let mean = col.iter().sum::<f64>() / col.len() as f64;
        assert!(mean.abs() < 1e-12);
    }
}
