//! SGMGT-D with every default (Zhang et al. 2017): the posterior mean and variance of a correlated 2-d Gaussian.
//!
//! `cargo run --release --example sgmgt_d`. The only number the example chooses is the step size;
//! the kinetics (softened monomial gamma, a = 1, c = 5), σ_p, γ, σ_θ, σ_ξ, the resampling periods
//! and the integrator are the documented defaults of `SgmgtParams::sgmgt_d`.

use rand_pcg::Pcg64;
use sgmcmc::prelude::*;

/// The target N(μ, Σ) with μ = (1, −1), Σ = [[1, 0.5], [0.5, 2]]: U(θ) = ½(θ − μ)ᵀΣ⁻¹(θ − μ).
const MEAN: [f64; 2] = [1.0, -1.0];
const PRECISION: [[f64; 2]; 2] = [[8.0 / 7.0, -2.0 / 7.0], [-2.0 / 7.0, 4.0 / 7.0]];
const STEPS: u64 = 400_000;
const BURN_IN: u64 = 20_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut theta, mut p, mut xi, mut work) = ([0.0f64; 2], [0.0; 2], [0.0; 2], [0.0; 6]);
    let params = SgmgtParams::sgmgt_d(0.05);
    let mut sampler = Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work)?;
    let mut gradient = |t: &[f64], g: &mut [f64]| {
        for (i, g) in g.iter_mut().enumerate() {
            *g = (0..2).map(|j| PRECISION[i][j] * (t[j] - MEAN[j])).sum();
        }
    };
    let mut rng = Pcg64::new(0x5eed, 0xcafe);
    sampler.resample_momentum(&mut rng); // p from exp(−K)
    sampler.run(&mut gradient, &mut rng, BURN_IN, &mut ())?;

    let (mut sum, mut sum_sq) = ([0.0; 2], [0.0; 2]);
    sampler.run_with(&mut gradient, &mut rng, STEPS, |_, s, _| {
        for (i, &t) in s.position().iter().enumerate() {
            sum[i] += t;
            sum_sq[i] += t * t;
        }
    })?;
    let n = STEPS as f64;
    for i in 0..2 {
        let mean = sum[i] / n;
        let var = sum_sq[i] / n - mean * mean;
        let truth = if i == 0 { 1.0 } else { 2.0 };
        println!(
            "θ{i}: mean {mean:+.3} (true {:+.1}), variance {var:.3} (true {truth:.1})",
            MEAN[i]
        );
    }
    let (redrawn, proposals) = sampler.resampling_counts();
    println!("momentum and thermostat redraws: {redrawn} coordinates, {proposals} proposals");
    Ok(())
}
