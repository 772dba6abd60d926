//! The posterior of one `blr` data set: its training and held-out splits, the validation split the searches use, its Laplace approximation and minibatch gradient noise.

use super::BATCH;
use crate::diagnostics::quantile;
use crate::experiments::common::ExperimentError;
use crate::models::LogisticRegression;
use crate::models::logistic_regression::{
    Basis, DataSet, Design, HOLDOUT_FRACTION, Laplace, PRIOR_VARIANCE, RawData, SPLIT_SEED,
    data_dir, prepare, sigmoid,
};

/// A posterior to sample, the rows to predict and the Laplace reference.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Data set.
    pub data: DataSet,
    /// The posterior on the training rows.
    pub model: LogisticRegression,
    /// The rows whose AUROC is reported.
    pub test: Design,
    /// Laplace approximation of the posterior.
    pub laplace: Laplace,
}

impl Problem {
    /// The minibatch gradient noise at the posterior mode ŵ in SGHMC's units, B_j = ½ h V_j,
    /// per weight j: V_j is the variance of the scaled minibatch gradient (N/n) Σ_{i∈batch} g_ij
    /// for [`BATCH`] rows drawn without replacement, g_ij = (σ(ŵᵀx_i) − y_i) x_ij the row's
    /// likelihood gradient: V_j = N² s_j² (N − n) / (n (N − 1)), s_j² their variance over the
    /// rows (the prior's gradient is exact). Returns the median over the weights.
    ///
    /// Why: SGMGT-D's first-order term −σ_θ∇Ũ carries this noise into θ, where no thermostat
    /// absorbs it (`SgmgtParams::with_noise_estimate`); σ_θ × this value is the excess
    /// temperature of that channel when B̂ = 0, and 2σ_θB̂ < 1 bounds the σ_θ a correction allows.
    pub fn median_gradient_noise(&self, h: f64) -> f64 {
        self.median_gradient_noise_at(h, BATCH)
    }

    /// [`Problem::median_gradient_noise`] for minibatches of `batch` rows (0 for every row).
    pub fn median_gradient_noise_at(&self, h: f64, batch: usize) -> f64 {
        quantile(&self.gradient_noise(h, batch), 0.5).unwrap_or(f64::NAN)
    }

    /// The per-weight minibatch gradient noise B_j = ½hV_j at the posterior mode of
    /// [`Problem::median_gradient_noise`], for minibatches of `batch` rows (0 or ≥ N: every row,
    /// B = 0): the per-coordinate estimates SGMGT-D's θ term needs
    /// (`Sgmgt::set_noise_estimates`).
    pub fn gradient_noise(&self, h: f64, batch: usize) -> Vec<f64> {
        let x = &self.model.data;
        let (n_rows, d) = (x.len(), x.d);
        let w = &self.laplace.mode;
        let mut sum = vec![0.0; d];
        let mut sum2 = vec![0.0; d];
        for i in 0..n_rows {
            let row = x.row(i);
            let z: f64 = row.iter().zip(w).map(|(a, b)| a * b).sum();
            let r = sigmoid(z) - x.y[i];
            for j in 0..d {
                let g = r * row[j];
                sum[j] += g;
                sum2[j] += g * g;
            }
        }
        let nf = n_rows as f64;
        let batch = if batch == 0 {
            n_rows
        } else {
            batch.min(n_rows)
        } as f64;
        (0..d)
            .map(|j| {
                let mean = sum[j] / nf;
                let s2 = (sum2[j] / nf - mean * mean).max(0.0) * nf / (nf - 1.0);
                let v = nf * nf * s2 * (nf - batch) / (batch * (nf - 1.0));
                0.5 * h * v
            })
            .collect()
    }

    pub(super) fn new(data: DataSet, train: Design, test: Design) -> Result<Self, ExperimentError> {
        let model = LogisticRegression::new(train, PRIOR_VARIANCE);
        let laplace = model.laplace().ok_or_else(|| {
            ExperimentError::Invalid(format!("{}: no Laplace approximation", data.name()))
        })?;
        Ok(Problem {
            data,
            model,
            test,
            laplace,
        })
    }

    /// The training and held-out splits of `data`.
    pub fn load(data: DataSet) -> Result<Self, ExperimentError> {
        let (train, test) = data
            .load(&data_dir())
            .map_err(|e| ExperimentError::Io(e.to_string()))?;
        Self::new(data, train, test)
    }

    /// The training split divided again into 80 % fit / 20 % validation (seed
    /// [`SPLIT_SEED`] + 1), standardised again on the fit part: what [`tune`](super::tune) uses.
    pub fn validation(&self) -> Result<Self, ExperimentError> {
        let train = &self.model.data;
        let raw = RawData {
            rows: (0..train.len())
                .map(|i| train.row(i)[1..].to_vec())
                .collect(),
            labels: train.y.clone(),
        };
        let (fit, val) = raw.holdout(HOLDOUT_FRACTION, SPLIT_SEED + 1);
        let (fit, val) = prepare(fit, val, Basis::Linear);
        Self::new(self.data, fit, val)
    }
}
