//! The streaming diagnostics: exact against direct computations, calibrated on AR(1) series, refusing bad draws without a trace, and the divergence monitor stopping a run.

use rand_pcg::Pcg64;
use sgmcmc::diagnostics::{
    BatchMeans, DiagnosticError, DivergenceMonitor, RunningMoments, WindowedEss,
};
use sgmcmc::prelude::*;
use std::ops::ControlFlow;

/// `n` draws of x_t = φ x_{t−1} + e_t, e_t ~ N(0, 1), started at its stationary law.
fn ar1(phi: f64, n: usize, rng: &mut Pcg64) -> Vec<f64> {
    let mut x = f64::standard_normal(rng) / (1.0 - phi * phi).sqrt();
    (0..n)
        .map(|_| {
            x = phi * x + f64::standard_normal(rng);
            x
        })
        .collect()
}

fn two_pass(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

#[test]
fn running_moments_match_the_two_pass_formulas() {
    let mut rng = Pcg64::new(1, 2);
    let x: Vec<f64> = (0..10_000)
        .map(|_| 5.0 + 3.0 * f64::standard_normal(&mut rng))
        .collect();
    let (mean, var) = two_pass(&x);
    let (mut m64, mut m32) = (RunningMoments::<f64>::new(), RunningMoments::<f32>::new());
    for &v in &x {
        m64.push(v).unwrap();
        m32.push(v as f32).unwrap();
    }
    assert_eq!(m64.count(), 10_000);
    // f64: rounding only (10⁴ updates of relative error 1e-16 each).
    assert!((m64.mean().unwrap() - mean).abs() < 1e-12 * mean.abs());
    assert!((m64.variance().unwrap() - var).abs() < 1e-11 * var);
    // f32: Welford's update keeps the error near √n·ε ≈ 100 × 6e-8 = 6e-6; 1e-4 is the bound
    // n·ε of the worst case.
    assert!((f64::from(m32.mean().unwrap()) - mean).abs() < 1e-4 * mean.abs());
    assert!((f64::from(m32.variance().unwrap()) - var).abs() < 1e-3 * var);
}

#[test]
fn too_few_draws_are_named() {
    let mut m = RunningMoments::<f64>::new();
    assert_eq!(
        m.mean(),
        Err(DiagnosticError::TooFewDraws {
            needed: 1,
            found: 0
        })
    );
    m.push(1.0).unwrap();
    assert_eq!(m.mean(), Ok(1.0));
    assert_eq!(
        m.variance(),
        Err(DiagnosticError::TooFewDraws {
            needed: 2,
            found: 1
        })
    );
    let mut w = WindowedEss::<f64, 16>::new();
    for v in [1.0, 2.0, 3.0] {
        w.push(v).unwrap();
    }
    assert_eq!(
        w.ess(),
        Err(DiagnosticError::TooFewDraws {
            needed: 4,
            found: 3
        })
    );
    let mut bm = BatchMeans::<f64, 4>::new();
    bm.push(1.0).unwrap();
    assert!(matches!(
        bm.mcse(),
        Err(DiagnosticError::TooFewDraws { found: 1, .. })
    ));
}

/// A refused draw (NaN, ±∞, or one whose square overflows the running sums) changes nothing:
/// every later answer is the one without it.
#[test]
fn refused_draws_leave_no_trace() {
    let mut rng = Pcg64::new(3, 4);
    let x = ar1(0.7, 300, &mut rng);
    let (mut m, mut bm, mut w) = (
        RunningMoments::<f64>::new(),
        BatchMeans::<f64, 8>::new(),
        WindowedEss::<f64, 64>::new(),
    );
    for &v in &x {
        m.push(v).unwrap();
        bm.push(v).unwrap();
        w.push(v).unwrap();
    }
    let before = (m, format!("{bm:?}"), format!("{w:?}"));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(m.push(bad), Err(DiagnosticError::NonFiniteDraw));
        assert_eq!(bm.push(bad), Err(DiagnosticError::NonFiniteDraw));
        assert_eq!(w.push(bad), Err(DiagnosticError::NonFiniteDraw));
    }
    // Finite, but (x − x̄)² overflows.
    assert_eq!(m.push(1e200), Err(DiagnosticError::NonFiniteDraw));
    assert_eq!(bm.push(1e200), Err(DiagnosticError::NonFiniteDraw));
    assert_eq!(before, (m, format!("{bm:?}"), format!("{w:?}")));
}

/// The streaming batch means (b doubling, neighbours merged) are the direct batch means of
/// the first k·b draws with the final b: the same MCSE to rounding, and k stays in [B/2, B).
#[test]
fn batch_means_equal_the_direct_computation() {
    let mut rng = Pcg64::new(5, 6);
    for n in [40usize, 1000, 4099, 65_536] {
        let x = ar1(0.9, n, &mut rng);
        let mut bm = BatchMeans::<f64, 16>::new();
        for &v in &x {
            bm.push(v).unwrap();
        }
        let (b, k) = (bm.batch_size() as usize, bm.batches());
        assert!((8..16).contains(&k), "n = {n}: k = {k}");
        assert!(
            k * b <= n && n < (k + 1) * b,
            "n = {n}: every full batch is counted"
        );
        let means: Vec<f64> = x[..k * b]
            .chunks_exact(b)
            .map(|c| c.iter().sum::<f64>() / b as f64)
            .collect();
        let (_, var_means) = two_pass(&means);
        let mcse = (var_means / k as f64).sqrt();
        let got = bm.mcse().unwrap();
        assert!((got - mcse).abs() < 1e-9 * mcse, "n = {n}: {got} vs {mcse}");
        let ess = two_pass(&x).1 / (mcse * mcse);
        assert!((bm.ess().unwrap() - ess).abs() < 1e-9 * ess);
    }
}

/// On AR(1) with φ = 0.5 and unit innovations the variance of a mean of m draws is
/// 4/m·(1 + O(1/m)) (σ²τ = 1/(1 − φ)²). Over 40 independent chains of 2¹⁵ draws, the mean of
/// MCSE²·m/4 (m = k·b, the draws in complete batches) is 1 within 4 standard errors of the
/// 40 values. The batch-means bias, −2Σkρₖ/(bτ)·… = −4/(3b), is below 0.1 % at b ≥ 1024.
#[test]
fn batch_means_mcse_is_calibrated_on_ar1() {
    let mut rng = Pcg64::new(7, 8);
    let ratios: Vec<f64> = (0..40)
        .map(|_| {
            let mut bm = BatchMeans::<f64, 32>::new();
            for v in ar1(0.5, 1 << 15, &mut rng) {
                bm.push(v).unwrap();
            }
            let m = (bm.batches() as u64 * bm.batch_size()) as f64;
            bm.mcse().unwrap().powi(2) * m / 4.0
        })
        .collect();
    let (mean, var) = two_pass(&ratios);
    let se = (var / ratios.len() as f64).sqrt();
    assert!((mean - 1.0).abs() < 4.0 * se, "mean ratio {mean} ± {se}");
    // Each chain's relative error is about √(2/(k − 1)) with k ∈ [16, 32): 0.26–0.37; the
    // spread of the 40 ratios says the same (so the test above has the power it claims).
    let sd = var.sqrt();
    assert!(sd > 0.15 && sd < 0.5, "sd of the ratios {sd}");
}

/// The window keeps the last W draws: its estimate is that of a fresh window fed only them.
#[test]
fn the_window_is_the_last_w_draws() {
    let mut rng = Pcg64::new(9, 10);
    let x = ar1(0.8, 1000, &mut rng);
    let mut long = WindowedEss::<f64, 64>::new();
    for &v in &x {
        long.push(v).unwrap();
    }
    let mut fresh = WindowedEss::<f64, 64>::new();
    for &v in &x[1000 - 64..] {
        fresh.push(v).unwrap();
    }
    assert_eq!(long.len(), 64);
    assert_eq!(
        long.ess().unwrap().to_bits(),
        fresh.ess().unwrap().to_bits()
    );
}

/// A constant window has n effective draws (τ̂ = 1), and so do constant batch means. Geyer's estimator on varying windows is
/// checked against the harness's (FFT-based, itself checked against ArviZ) on the same draws,
/// in `diagnostics/src/ess.rs` (the `sgmcmc-diagnostics` crate).
#[test]
fn a_constant_window_has_n_effective_draws() {
    let mut w = WindowedEss::<f32, 8>::new();
    for _ in 0..8 {
        w.push(2.5).unwrap();
    }
    assert_eq!(w.ess(), Ok(8.0));
    // Batch means of a constant series: a zero MCSE and n effective draws (not 0/0).
    let mut bm = BatchMeans::<f64, 4>::new();
    for _ in 0..37 {
        bm.push(-1.5).unwrap();
    }
    assert_eq!((bm.mcse(), bm.ess()), (Ok(0.0), Ok(37.0)));
}

fn standard_normal(t: &[f64], g: &mut [f64]) {
    g.copy_from_slice(t);
}

/// With a stable step no step is divergent; with h far past SGHMC's stability limit the chain
/// heats up and a stopping monitor ends the run at the first divergent step, before the state
/// becomes non-finite.
#[test]
fn the_divergence_monitor_stops_a_heating_chain() {
    let n = 4;
    // An SGHMC chain from θ = 0.5, p = 0 under a stopping monitor: how the run ended, the
    // monitor, and whether p stayed finite.
    let run = |params: SghmcParams<f64>| {
        let (mut theta, mut p, mut work) = (vec![0.5; n], vec![0.0; n], vec![0.0; 2 * n]);
        let mut s = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
        let mut monitor = DivergenceMonitor::new().stopping();
        let mut rng = Pcg64::new(1, 1);
        let flow = s.run(&mut standard_normal, &mut rng, 10_000, &mut monitor);
        (
            flow.unwrap(),
            monitor,
            s.momentum().iter().all(|x| x.is_finite()),
        )
    };
    let (flow, monitor, _) = run(SghmcParams::new(0.1));
    assert_eq!(flow, ControlFlow::Continue(()));
    assert_eq!(monitor.divergent(), 0);
    // Euler at h = 3 with A = 1 on ∇U = θ: (θ, p) ← (−8θ − 6p, −3θ − 2p) before the noise, whose
    // eigenvalues are −10.2 and 0.2, so |p| grows tenfold a step.
    let (flow, monitor, finite) = run(SghmcParams::new(3.0).with_integrator(Integrator::Euler));
    let ControlFlow::Break(at) = flow else {
        panic!("the run was not stopped");
    };
    assert_eq!(monitor.first_divergence(), Some(at));
    assert_eq!(monitor.divergent(), 1);
    assert!(at < 100, "stopped at {at}");
    assert!(finite);

    assert_eq!(
        DivergenceMonitor::<f64>::new().with_temperature_limit(1.0),
        Err(DiagnosticError::TemperatureLimit)
    );
    assert_eq!(
        DivergenceMonitor::<f64>::new().with_temperature_limit(f64::NAN),
        Err(DiagnosticError::TemperatureLimit)
    );
    assert_eq!(
        DivergenceMonitor::<f64>::new().with_acceptance_floor(1.0),
        Err(DiagnosticError::AcceptanceFloor)
    );
    assert_eq!(
        DivergenceMonitor::<f64>::new().with_acceptance_floor(-0.1),
        Err(DiagnosticError::AcceptanceFloor)
    );
}

/// HMC: an energy error beyond the float's `exp` range (acceptance exactly 0) is divergent at
/// the default floor; a floor of 0.5 also counts the proposals accepted with probability ≤ ½.
#[test]
fn the_divergence_monitor_reads_hmc_acceptance() {
    let n = 3;
    let (mut theta, mut p, mut work) = (vec![0.5; n], vec![0.0; n], vec![0.0; 4 * n]);
    let mut model = Model::new(standard_normal, |t: &[f64]| {
        0.5 * t.iter().map(|x| x * x).sum::<f64>()
    });
    let mut hmc = Hmc::new(
        HmcParams::new(2.5).with_leapfrog_steps(40),
        &mut theta,
        &mut p,
        &mut work,
    )
    .unwrap();
    let (mut default, mut half) = (
        DivergenceMonitor::new(),
        DivergenceMonitor::new().with_acceptance_floor(0.5).unwrap(),
    );
    let mut rng = Pcg64::new(2, 2);
    for step in 0..200 {
        let stats = hmc.step(&mut model, &mut rng).unwrap();
        let a = stats.acceptance.unwrap();
        assert_eq!(default.check(step, &stats), a == 0.0);
        assert_eq!(half.check(step, &stats), a <= 0.5);
    }
    // h = 2.5 > 2 is past the leapfrog's stability limit for ω = 1: after 40 steps the energy
    // error is astronomically large, so every proposal is divergent.
    assert_eq!(default.divergent(), 200);
}
