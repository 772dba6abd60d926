//! The 1-d Gaussian-mean model of Ding et al. 2014 §5.1 and App. E: known variance, flat prior, minibatch gradients.
//!
//! xᵢ ~ N(μ, 1), i = 1..N, flat prior on μ: the posterior is N(x̄, 1/N). On a minibatch S of Ñ
//! points drawn without replacement, ∇Ũ(μ) = Nμ − (N/Ñ) Σ_{i∈S} xᵢ; its noise does not depend on
//! μ (variance N²/Ñ · s² (1 − Ñ/N) · N/(N − 1) with s² the data's variance).

use rand_pcg::Pcg64;
use sgmcmc::rng::{standard_normal_f64, uniform_f64};

/// Data and posterior of the Gaussian-mean model.
#[derive(Clone, Debug)]
pub struct GaussianMean {
    /// The observations.
    pub x: Vec<f64>,
    /// Minibatch size Ñ.
    pub batch: usize,
}

impl GaussianMean {
    /// N points from N(0, 1) with the given seed, minibatches of `batch`.
    pub fn simulate(n: usize, batch: usize, seed: u64) -> Self {
        let mut rng = Pcg64::new(seed as u128, 0x6a55);
        GaussianMean {
            x: (0..n).map(|_| standard_normal_f64(&mut rng)).collect(),
            batch,
        }
    }

    /// Posterior mean x̄.
    pub fn posterior_mean(&self) -> f64 {
        self.x.iter().sum::<f64>() / self.x.len() as f64
    }

    /// Posterior standard deviation 1/√N.
    pub fn posterior_sd(&self) -> f64 {
        1.0 / (self.x.len() as f64).sqrt()
    }

    /// A minibatch-gradient closure with its own RNG.
    pub fn stochastic_gradient(&self, seed: u64) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        let mut sampler = MinibatchSampler::new(self.x.len(), self.batch, seed);
        let n = self.x.len() as f64;
        let scale = n / self.batch as f64;
        move |mu: &[f64], g: &mut [f64]| {
            let s: f64 = sampler.draw().iter().map(|&i| self.x[i]).sum();
            g[0] = n * mu[0] - scale * s;
        }
    }
}

/// Draws minibatches of distinct indices (a partial Fisher–Yates shuffle per draw).
#[derive(Clone, Debug)]
pub struct MinibatchSampler {
    perm: Vec<usize>,
    batch: usize,
    rng: Pcg64,
}

impl MinibatchSampler {
    /// Minibatches of `batch` distinct indices from 0..n.
    pub fn new(n: usize, batch: usize, seed: u64) -> Self {
        MinibatchSampler {
            perm: (0..n).collect(),
            batch: batch.min(n),
            rng: Pcg64::new(seed as u128, 0xba7c4),
        }
    }

    /// The next minibatch (a uniformly random subset, in random order).
    pub fn draw(&mut self) -> &[usize] {
        let n = self.perm.len();
        for i in 0..self.batch {
            let j = i + ((uniform_f64(&mut self.rng) * (n - i) as f64) as usize).min(n - i - 1);
            self.perm.swap(i, j);
        }
        &self.perm[..self.batch]
    }
}
