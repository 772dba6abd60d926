//! The chains the Python package must reproduce: every sampler on N(μ, diag(σ²)) through the Rust API, printed as the bits of each draw (python/tests/test_rust_draws.py compares them).
//!
//! Run with the `std` feature, as the Python extension is built, so that both dispatch to the
//! same instruction set on this CPU: `cargo run --release --features std --example
//! python_reference`. Each line is `sampler chain step` and the hex bits of θ after that step.
//! The gradient and energy are written with the same operations in the same order as the
//! package's built-in Gaussian (`python/src/models.rs`), so the numbers agree to the last bit.

use rand_pcg::Pcg64;
use sgmcmc::adapt::{Mcem, McemParams};
use sgmcmc::kinetic::{MassBuffer, MassShape};
use sgmcmc::prelude::*;
use sgmcmc::sampler::{SgNphmc, SgNphmcParams, run_cyclical, run_scheduled};

const MEAN: [f64; 3] = [1.0, -0.5, 2.0];
const VARIANCE: [f64; 3] = [1.0, 0.25, 4.0];
const SEED: u64 = 7;
const STEPS: usize = 25;

fn precision() -> [f64; 3] {
    VARIANCE.map(|v| 1.0 / v)
}

fn gradient(theta: &[f64], grad: &mut [f64]) {
    let p = precision();
    for i in 0..3 {
        grad[i] = p[i] * (theta[i] - MEAN[i]);
    }
}

/// ½(θ − μ)ᵀP(θ − μ) summed over the dense rows, as the package does (zeros included).
fn energy(theta: &[f64]) -> f64 {
    let p = precision();
    let mut u = 0.0;
    for i in 0..3 {
        let ri = theta[i] - MEAN[i];
        let mut pr = 0.0;
        for j in 0..3 {
            let pij = if i == j { p[i] } else { 0.0 };
            pr += pij * (theta[j] - MEAN[j]);
        }
        u += ri * pr;
    }
    0.5 * u
}

fn print(name: &str, chain: u64, step: usize, theta: &[f64]) {
    let bits: Vec<String> = theta
        .iter()
        .map(|t| format!("{:016x}", t.to_bits()))
        .collect();
    println!("{name} {chain} {step} {}", bits.join(" "));
}

fn main() {
    let init = [0.5, 0.5, 0.5];
    let any: [(&str, AnyParams<f64>); 7] = [
        ("sgld", AnyParams::Sgld(SgldParams::new(0.05))),
        ("psgld", AnyParams::Psgld(PsgldParams::new(0.05))),
        ("sghmc", AnyParams::Sghmc(SghmcParams::new(0.1))),
        ("sgnht", AnyParams::Sgnht(SgnhtParams::new(0.1))),
        ("msgnht", AnyParams::MSgnht(SgnhtParams::new(0.1))),
        ("sgmgt", AnyParams::Sgmgt(SgmgtParams::new(0.1))),
        ("sgmgt_d", AnyParams::Sgmgt(SgmgtParams::sgmgt_d(0.1))),
    ];
    for (name, params) in any {
        for chain in 0..2u64 {
            let len = params.lengths(3);
            let mut theta = init.to_vec();
            let (mut p, mut xi, mut work) = (
                vec![0.0; len.momentum],
                vec![0.0; len.thermostat],
                vec![0.0; len.work],
            );
            let mut s = AnySampler::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
            let mut rng = Pcg64::new(u128::from(SEED), u128::from(chain));
            for step in 0..STEPS {
                s.step(&mut gradient, &mut rng).unwrap();
                print(name, chain, step, s.position());
            }
        }
    }
    // Step-size schedules: SGLD on h_t = 0.1(10 + t)^−0.55 (run_scheduled), and cSG-MCMC's
    // SGHMC on a cyclical h_t with the noise off while exploring (run_cyclical).
    let polynomial = StepSchedule::polynomial(0.1, 10.0, 0.55).unwrap();
    let cyclical = StepSchedule::cyclical(0.1, 10, 0.5).unwrap();
    for chain in 0..2u64 {
        let (mut theta, mut work) = (init.to_vec(), vec![0.0; 6]);
        let mut s = Sgld::new(SgldParams::new(0.1), &mut theta, &mut work).unwrap();
        let mut rng = Pcg64::new(u128::from(SEED), u128::from(chain));
        let mut model = gradient;
        let mut out = |step: u64, s: &mut Sgld<f64>, _: &StepStats<f64>| {
            print("sgld_polynomial", chain, step as usize, s.position());
        };
        run_scheduled(
            &mut s,
            &polynomial,
            0,
            &mut model,
            &mut rng,
            STEPS as u64,
            &mut out,
        )
        .unwrap();
        let (mut theta, mut p, mut work) = (init.to_vec(), vec![0.0; 3], vec![0.0; 6]);
        let mut s = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
        let mut rng = Pcg64::new(u128::from(SEED), u128::from(chain));
        let mut out = |step: u64, s: &mut Sghmc<f64>, _: &StepStats<f64>| {
            print("sghmc_cyclical", chain, step as usize, s.position());
        };
        run_cyclical(
            &mut s,
            &cyclical,
            0,
            &mut model,
            &mut rng,
            STEPS as u64,
            &mut out,
        )
        .unwrap();
    }
    // SGHMC-EM: SGHMC with a diagonal mass from M = I, wrapped in MCEM with LP_S = 5 (one
    // printed step is one E-step).
    for chain in 0..2u64 {
        let (mut theta, mut p, mut work) = (init.to_vec(), vec![0.0; 3], vec![0.0; 6]);
        let mut inverse_mass = vec![1.0; 3];
        let mut s = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
        s.set_mass(MassBuffer::diagonal(&mut inverse_mass).unwrap())
            .unwrap();
        let mut em_work = vec![0.0; Mcem::<f64, Sghmc<f64>>::workspace_len(3, MassShape::Diagonal)];
        let mut em = Mcem::new(s, McemParams::new(5), &mut em_work).unwrap();
        let mut rng = Pcg64::new(u128::from(SEED), u128::from(chain));
        let mut model = gradient;
        for step in 0..STEPS {
            em.step(&mut model, &mut rng).unwrap();
            print("sghmc_mcem", chain, step, em.position());
        }
    }
    for chain in 0..2u64 {
        let mut model = Model::new(gradient, energy);
        let (mut theta, mut p, mut work) = (init.to_vec(), vec![0.0; 3], vec![0.0; 12]);
        let mut s = Hmc::new(HmcParams::new(0.2), &mut theta, &mut p, &mut work).unwrap();
        let mut rng = Pcg64::new(u128::from(SEED), u128::from(chain));
        for step in 0..STEPS {
            s.step(&mut model, &mut rng).unwrap();
            print("hmc", chain, step, s.position());
        }
        let (mut theta, mut p, mut work) = (init.to_vec(), vec![0.0; 3], vec![0.0; 12]);
        let mut s = SgNphmc::new(SgNphmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
        let mut rng = Pcg64::new(u128::from(SEED), u128::from(chain));
        for step in 0..STEPS {
            s.step(&mut model, &mut rng).unwrap();
            print("sgnphmc", chain, step, s.position());
        }
    }
}
