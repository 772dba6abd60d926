//! The `micromath` shim validated: f32 samplers on micromath's exp/ln/powf against f64 on libm, on the double well (histogram KL and moments).
//!
//! Built only with `--features micromath` (CI's micromath stage runs it): then every `f32`
//! transcendental call of the crate goes through micromath, while `f64` keeps libm, so one
//! build compares the two. The target is the double well of Ding et al. 2014 §3, U(θ) =
//! (θ + 4)(θ + 1)(θ − 1)(θ − 3)/14 + 0.5 (mean −2.148, variance 2.862), in D = 256 independent
//! coordinates (one chain, 256 draws per step, all pooled). For each sampler the test runs one
//! `f64` chain and one `f32` chain with the same settings (their noise streams differ: `f32`
//! and `f64` draw from different generators), and a second `f64` chain with another seed,
//! whose distance from the first measures the Monte Carlo error. It checks that the `f32` +
//! micromath chain's KL of its 120-bin histogram on [−6, 6] from the true density, and its mean
//! and variance, lie within 10 % of the `f64` + libm chain's (the mean within 10 % of the
//! standard deviation), and that the test has the power to see 10 %: the two `f64` chains must
//! agree to within a third of each bound, or it fails as underpowered.
//!
//! The samplers are the ones whose `f32` steps call the shim, at step sizes where their
//! discretisation bias is well above the Monte Carlo error, so that 10 % of the KL can be
//! resolved (KL ≈ 8·10⁻³ and 9·10⁻³, where two `f64` chains agree to about 1 %; at h = 0.3 the
//! KL is 2–2.5·10⁻³ and two `f64` chains differed by up to 10 %, at h = 0.1 it is mostly Monte
//! Carlo error): SGMGT-D, h = 0.6 (ln and exp in the friction flow of its softened kinetics,
//! the Gamma draws of its momentum resampling); mSGNHT-splitting with gradient noise B = 1,
//! h = 0.4, Li et al. 2016's Fig. 1 setting (its flows use the crate's own polynomial exp, so
//! it checks the rest of the `f32` path); and HMC, ε = 0.2, five leapfrog steps (exp of the
//! energy difference in the Metropolis test), whose chain is exact: its KL is Monte Carlo
//! error alone, so only its moments are compared.
#![cfg(feature = "micromath")]

use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use sgmcmc::rng::standard_normal_f64;

/// Coordinates (independent double wells).
const D: usize = 256;
/// Histogram: bins on [−6, 6].
const BINS: usize = 120;

fn potential(t: f64) -> f64 {
    (t + 4.0) * (t + 1.0) * (t - 1.0) * (t - 3.0) / 14.0 + 0.5
}

fn gradient<T: Real>(t: T) -> T {
    let c = |x: f64| T::from_f64(x);
    (((c(4.0) * t + c(3.0)) * t - c(26.0)) * t - c(1.0)) / c(14.0)
}

/// The model: ∇U per coordinate, plus N(0, 2B/h) gradient noise when `noise` is (B, h).
struct DoubleWell {
    noise: Option<(f64, f64)>,
    rng: Pcg64,
}

impl<T: Real> Gradient<T> for DoubleWell {
    fn gradient(&mut self, theta: &[T], g: &mut [T]) {
        for (g, &t) in g.iter_mut().zip(theta) {
            *g = gradient(t);
            if let Some((b, h)) = self.noise {
                *g += T::from_f64((2.0 * b / h).sqrt() * standard_normal_f64(&mut self.rng));
            }
        }
    }
}

impl<T: Real> Energy<T> for DoubleWell {
    fn energy(&mut self, theta: &[T]) -> T {
        T::from_f64(theta.iter().map(|t| potential(t.to_f64())).sum::<f64>())
    }
}

/// What a chain's pooled draws give: histogram KL from the true density, mean, variance.
#[derive(Debug, Clone, Copy)]
struct Summary {
    kl: f64,
    mean: f64,
    var: f64,
}

/// Accumulates a chain's draws.
struct Pool {
    counts: Vec<u64>,
    n: u64,
    sum: f64,
    sum_sq: f64,
}

impl Pool {
    fn new() -> Self {
        Pool {
            counts: vec![0; BINS],
            n: 0,
            sum: 0.0,
            sum_sq: 0.0,
        }
    }

    fn add<T: Real>(&mut self, theta: &[T]) {
        for &t in theta {
            let t = t.to_f64();
            let bin = ((t + 6.0) / 12.0 * BINS as f64).floor();
            if (0.0..BINS as f64).contains(&bin) {
                self.counts[bin as usize] += 1;
            }
            self.n += 1;
            self.sum += t;
            self.sum_sq += t * t;
        }
    }

    /// KL(histogram ‖ truth), the truth's bin masses by Simpson's rule on each bin.
    fn summary(&self) -> Summary {
        let width = 12.0 / BINS as f64;
        let mass: Vec<f64> = (0..BINS)
            .map(|k| {
                let a = -6.0 + k as f64 * width;
                let d = |t: f64| (-potential(t)).exp();
                width / 6.0 * (d(a) + 4.0 * d(a + width / 2.0) + d(a + width))
            })
            .collect();
        let total_mass: f64 = mass.iter().sum();
        let total: u64 = self.counts.iter().sum();
        let kl = self
            .counts
            .iter()
            .zip(&mass)
            .filter(|(c, _)| **c > 0)
            .map(|(&c, &m)| {
                let p = c as f64 / total as f64;
                p * (p / (m / total_mass)).ln()
            })
            .sum();
        let mean = self.sum / self.n as f64;
        Summary {
            kl,
            mean,
            var: self.sum_sq / self.n as f64 - mean * mean,
        }
    }
}

/// Runs `steps` steps after `burn` and pools every coordinate of every step.
fn run<T: Real, S: Sampler<T, DoubleWell>>(
    sampler: &mut S,
    model: &mut DoubleWell,
    seed: u64,
    (burn, steps): (usize, usize),
) -> Summary {
    let mut rng = Pcg64::new(seed as u128, 0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96);
    let mut pool = Pool::new();
    for k in 0..burn + steps {
        sampler
            .step(model, &mut rng)
            .unwrap_or_else(|e| panic!("step {k}: {e:?}"));
        if k >= burn {
            pool.add(sampler.position());
        }
    }
    pool.summary()
}

/// One sampler in type T, from θ spread over both wells.
fn chain<T: Real>(which: &str, seed: u64) -> Summary {
    let start = |k: usize| T::from_f64(if k.is_multiple_of(2) { -2.5 } else { 2.0 });
    let mut theta: Vec<T> = (0..D).map(start).collect();
    let mut p = vec![T::ZERO; D];
    let mut work = vec![T::ZERO; 4 * D];
    match which {
        "msgnht-splitting" => {
            // Li et al. 2016 Fig. 1: B = 1 gradient noise, no injected noise (D = 0, ξ₀ = 0).
            let h = 0.4;
            let mut model = DoubleWell {
                noise: Some((1.0, h)),
                rng: Pcg64::new(seed as u128 + 7, 0xd0b1e),
            };
            let params = SgnhtParams::new(T::from_f64(h))
                .with_diffusion(T::ZERO)
                .with_integrator(Integrator::Splitting);
            let mut xi = vec![T::ZERO; D];
            let mut s =
                MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work[..3 * D]).unwrap();
            run(&mut s, &mut model, seed, (20_000, 400_000))
        }
        "sgmgt-d" => {
            let mut model = DoubleWell {
                noise: None,
                rng: Pcg64::new(0, 0),
            };
            let params = SgmgtParams::sgmgt_d(T::from_f64(0.6));
            let mut xi = vec![T::ZERO; D];
            let mut s =
                Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work[..3 * D]).unwrap();
            run(&mut s, &mut model, seed, (20_000, 200_000))
        }
        "hmc" => {
            let mut model = DoubleWell {
                noise: None,
                rng: Pcg64::new(0, 0),
            };
            let params = HmcParams::new(T::from_f64(0.2)).with_leapfrog_steps(5);
            let mut s = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
            run(&mut s, &mut model, seed, (2_000, 40_000))
        }
        other => panic!("no sampler {other}"),
    }
}

/// Compares the three chains of `which`; the KL only when `with_kl` (a sampler with a
/// discretisation bias: an exact sampler's KL is Monte Carlo error alone, not comparable to 10 %).
fn check(which: &str, with_kl: bool) {
    let reference = chain::<f64>(which, 1);
    let replicate = chain::<f64>(which, 2);
    let micromath = chain::<f32>(which, 3);
    let sd = reference.var.sqrt();
    println!(
        "{which}: f64 {reference:?}; f64 replicate {replicate:?}; f32 micromath {micromath:?}"
    );
    // (bound, f64–f64 distance, f32–f64 distance) for KL, mean and variance.
    let checks = [
        (
            "KL",
            0.1 * reference.kl,
            (replicate.kl - reference.kl).abs(),
            (micromath.kl - reference.kl).abs(),
        ),
        (
            "mean",
            0.1 * sd,
            (replicate.mean - reference.mean).abs(),
            (micromath.mean - reference.mean).abs(),
        ),
        (
            "variance",
            0.1 * reference.var,
            (replicate.var - reference.var).abs(),
            (micromath.var - reference.var).abs(),
        ),
    ];
    for (what, bound, mc, diff) in checks.into_iter().skip(usize::from(!with_kl)) {
        assert!(
            mc <= bound / 3.0,
            "{which} {what}: the two f64 chains differ by {mc:.3e}, more than a third of the \
             10 % bound {bound:.3e}: the comparison is underpowered"
        );
        assert!(
            diff <= bound,
            "{which} {what}: f32 + micromath differs from f64 + libm by {diff:.3e} > {bound:.3e}"
        );
    }
}

#[test]
fn msgnht_splitting_with_gradient_noise() {
    check("msgnht-splitting", true);
}

#[test]
fn sgmgt_d() {
    check("sgmgt-d", true);
}

#[test]
fn hmc() {
    check("hmc", false);
}
