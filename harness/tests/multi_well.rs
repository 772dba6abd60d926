//! Quick-mode run of the `multi-well` experiment (Zhang et al. 2017 §4.1, Fig. 3) with a fixed
//! seed, asserting its qualitative result: the exploration Zhang et al. 2017 Fig. 3 shows is there, but only
//! at settings that overheat the chain.

use harness::experiments::RunOptions;
use harness::experiments::multi_well::{
    self, Criterion, Method, MethodRun, MultiWellResult, NormalSpeeds, Settings,
};
use harness::models::multi_well::{MODES, MultiWell};
use sgmcmc::kinetic::{Kinetic, MonomialGamma};

fn out(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sgmcmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn find(r: &MultiWellResult, m: Method, c: Criterion) -> &MethodRun {
    r.runs
        .iter()
        .find(|x| x.method == m && x.criterion == c)
        .unwrap()
}

/// Quick mode: 2 chains × 10⁵ steps per method and criterion from mode 1, with the full run's
/// tuned settings (seed 1).
///
/// * SGNHT at its checked setting (splitting, h = 0.5) samples at the right temperature: both
///   the mean-energy and the tail temperature within 10 % (their Monte Carlo errors here are
///   ≈ 1 % and ≈ 3 %).
/// * SGMGT-D at its exploration-only setting (σ_θ = 1) visits all five modes, as in Zhang et al. 2017 Fig. 3 —
///   with ≈ 950 switches in 2·10⁵ steps against SGNHT's handful — but its tail temperature is
///   ≈ 2.7; SGMGT's exploration-only setting runs at ≈ 6. Both margins are many standard errors
///   wide.
/// * SGMGT (a = 2) with the power softening samples at the right temperature at h = 0.3 (15× the
///   step of any eq. 12 setting near it): E\[U\] − U(μ) and tail temperature within 10 % (full
///   run 1.02 and 1.05); SGMGT-D (power) at h = 0.5 has E\[U\] − U(μ) within 10 % (full run 1.05;
///   its tail temperature, 1.09, is too close to the tolerance to assert).
/// * The exploration-only power-softened settings visit all five modes but run hot (tail
///   temperature ≈ 2.9 and ≈ 2.7 in the full run).
/// * Rice's ceiling ([`NormalSpeeds::crossing_rate`]): SGNHT's checked run switches no more
///   than a chain at the right distribution can (the observed count is not in the 10⁻⁴ upper
///   tail of a Poisson law with the ceiling as mean — a chain at the right distribution has at
///   most that many crossings on average); the exploration-only SGMGT, SGMGT-D and power runs
///   switch more than 20× their ceiling plus the σ_θ channel's Kramers estimate (184–301× in
///   this run), which no chain at the right distribution can.
/// * SGMGT-D (power, B̂ = B): see the assertions' comments below.
#[test]
fn multi_well_quick() {
    let dir = out("mw");
    let opts = RunOptions::quick(&dir);
    let r = multi_well::run(&opts).unwrap();
    eprintln!("{}", multi_well::report(&r, &opts));
    assert_eq!(r.runs.len(), 2 * Method::ALL.len());
    for run in &r.runs {
        assert_eq!(run.chains.len(), 2);
        for ch in &run.chains {
            assert_eq!(ch.tracker.steps(), multi_well::steps_for(&opts) as u64);
            // Starts at mode 1's centre: mode 1 is the first basin the draws enter. (Not
            // necessarily at the first draw: a step may leave the basin for the space between
            // basins, as the first steps of one chain of the `std` build's `f64` noise do.)
            let first = ch.tracker.first_visit[0].expect("visits mode 1");
            assert!(
                ch.tracker.first_visit.iter().flatten().all(|&s| s >= first),
                "starts in mode 1: {:?}",
                ch.tracker.first_visit
            );
        }
    }
    let sgnht = find(&r, Method::Sgnht, Criterion::Checked);
    let t = sgnht.potential_temperature();
    assert!(
        (t / r.true_temperature - 1.0).abs() < multi_well::TOLERANCE,
        "SGNHT temperature {t}"
    );
    let tail = sgnht.tail_temperature;
    assert!(
        (tail / r.true_tail_temperature - 1.0).abs() < multi_well::TOLERANCE,
        "SGNHT tail temperature {tail}"
    );
    let d = find(&r, Method::SgmgtD, Criterion::ExploreOnly);
    assert_eq!(d.modes_visited(), MODES, "SGMGT-D should visit every mode");
    assert!(d.switches() > 20, "SGMGT-D switches {}", d.switches());
    assert!(
        d.tail_temperature > 1.3,
        "SGMGT-D tail temperature {}",
        d.tail_temperature
    );
    let g = find(&r, Method::Sgmgt, Criterion::ExploreOnly);
    assert!(
        g.tail_temperature > 2.0,
        "SGMGT tail temperature {}",
        g.tail_temperature
    );
    let pw = find(&r, Method::SgmgtPower, Criterion::Checked);
    assert!(
        (pw.potential_temperature() / r.true_temperature - 1.0).abs() < multi_well::TOLERANCE,
        "SGMGT (power) temperature {}",
        pw.potential_temperature()
    );
    assert!(
        (pw.tail_temperature / r.true_tail_temperature - 1.0).abs() < multi_well::TOLERANCE,
        "SGMGT (power) tail temperature {}",
        pw.tail_temperature
    );
    let dpw = find(&r, Method::SgmgtDPower, Criterion::Checked);
    assert!(
        (dpw.potential_temperature() / r.true_temperature - 1.0).abs() < multi_well::TOLERANCE,
        "SGMGT-D (power) temperature {}",
        dpw.potential_temperature()
    );
    for m in [Method::SgmgtPower, Method::SgmgtDPower] {
        let x = find(&r, m, Criterion::ExploreOnly);
        assert_eq!(x.modes_visited(), MODES, "{}", m.label());
        assert!(
            x.tail_temperature > 1.5,
            "{} tail temperature {}",
            m.label(),
            x.tail_temperature
        );
    }
    let s = sgnht.switches();
    assert!(
        poisson_upper_tail(s, sgnht.crossing_ceiling) > 1e-4,
        "SGNHT: {s} switches against a ceiling of {}",
        sgnht.crossing_ceiling
    );
    for m in [
        Method::Sgmgt,
        Method::SgmgtD,
        Method::SgmgtPower,
        Method::SgmgtDPower,
    ] {
        let x = find(&r, m, Criterion::ExploreOnly);
        let cap = x.crossing_ceiling + x.overdamped_switches;
        assert!(
            x.switches() as f64 > 20.0 * cap,
            "{}: {} switches, ceiling {cap}",
            m.label(),
            x.switches()
        );
    }
    // SGMGT-D (power) with the noise estimate B̂ = B: its checked setting (h = 0.5, σ_θ = 0.3)
    // is within 10 % of the right E[U] − U(μ) (full run 1.09: what is left is the Euler–Maruyama
    // bias of the θ term, ≈ σ_θh/2 = 0.075), where σ_θ = 0.3 without B̂ ran at 1.30–1.34 at every
    // grid point; its exploration-only setting is hot (full run 1.34).
    let bhat = find(&r, Method::SgmgtDPowerNoiseEstimate, Criterion::Checked);
    assert!(
        (bhat.potential_temperature() / r.true_temperature - 1.0).abs() < multi_well::TOLERANCE,
        "SGMGT-D (B̂) temperature {}",
        bhat.potential_temperature()
    );
    let bhat_x = find(&r, Method::SgmgtDPowerNoiseEstimate, Criterion::ExploreOnly);
    assert!(
        bhat_x.tail_temperature > 1.2,
        "SGMGT-D (B̂) exploration-only tail temperature {}",
        bhat_x.tail_temperature
    );
    for f in [
        "multi-well.csv",
        "multi-well-chains.csv",
        "multi-well-occupancy.csv",
        "multi-well-draws-sgnht.csv",
        "multi-well-draws-sgmgt-d-explore.csv",
        "multi-well-draws-sgmgt-d-power.csv",
        "multi-well-samples.png",
        "multi-well-samples-explore.png",
        "multi-well-traces.png",
        "multi-well-traces-explore.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The model's documented numbers: barrier ≈ d²/8 − ln 2 between neighbours, exact potential
/// temperature 1 and tail temperature 1.
#[test]
fn multi_well_model_numbers() {
    let m = MultiWell::standard();
    let d = 2.0 * MultiWell::RADIUS * (std::f64::consts::PI / 5.0).sin();
    assert!((m.barrier(0, 1) - (d * d / 8.0 - 2f64.ln())).abs() < 0.01);
    assert!(m.barrier(0, 1) > 10.0);
    let t = m.mean_potential() - m.potential(&m.means()[0]);
    assert!((t - 1.0).abs() < 1e-3, "{t}");
    let outside = 1.0 - m.basin_masses().iter().sum::<f64>();
    assert!((m.tail_temperature(outside) - 1.0).abs() < 1e-3);
}

/// The velocity averages behind Rice's switch ceiling. Gaussian kinetics: E|n·p| = √(2/π)
/// exactly, and the resulting rate is the closed form 10 · 2wφ(d/2) · √(2/π) / 2 (five rays, each
/// carrying 2wφ(d/2)). Monomial gamma (a = 2, eq. 12 and the power softening): along a
/// coordinate axis, E|K′(p)| = 2∫₀^∞ K′ e^{−K} dp / Z = 2 e^{−K(0)} / Z (K increases on p > 0),
/// with Z = ∫ e^{−K} by Simpson's rule after p = u² (Z = 4∫₀^∞ u e^{−K(u²)} du, integrand
/// below e^{−55} beyond u = 60). The Monte Carlo estimate from 10⁶ exact draws must lie within
/// 5 of its standard errors.
#[test]
fn rice_ceiling_speeds() {
    let mut speeds = NormalSpeeds::default();
    let sgnht = Settings::sgnht(0.5);
    let (v, se) = speeds.mean_normal_speed(Method::Sgnht, &sgnht, [0.6, 0.8]);
    assert_eq!(se, 0.0);
    assert!((v - (2.0 / std::f64::consts::PI).sqrt()).abs() < 1e-15);
    let m = MultiWell::standard();
    let d = 2.0 * MultiWell::RADIUS * (std::f64::consts::PI / 5.0).sin();
    let phi = (-(d * d) / 8.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let closed = 5.0 * 2.0 * 0.2 * phi * v;
    let rate = speeds.crossing_rate(&m, Method::Sgnht, &sgnht);
    assert!(
        ((rate - closed) / closed).abs() < 1e-4,
        "{rate} vs {closed}"
    );

    for (method, c) in [(Method::Sgmgt, 10.0), (Method::SgmgtPower, 3.0)] {
        let k = if method.power_softened() {
            MonomialGamma::softened_power(2.0, c)
        } else {
            MonomialGamma::softened(2.0, c)
        };
        let n = 600_000;
        let w = 60.0 / n as f64;
        let f = |i: usize| {
            let u = i as f64 * w;
            u * (-Kinetic::<f64>::energy(&k, 0, u * u)).exp()
        };
        let mut z = f(0) + f(n);
        for i in 1..n {
            z += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i);
        }
        z *= 4.0 * w / 3.0;
        let exact = 2.0 * (-Kinetic::<f64>::energy(&k, 0, 0.0)).exp() / z;
        let s = Settings {
            c,
            ..Settings::sgnht(0.1)
        };
        for axis in [[1.0, 0.0], [0.0, -1.0]] {
            let (v, se) = speeds.mean_normal_speed(method, &s, axis);
            assert!(
                (v - exact).abs() < 5.0 * se,
                "{} c = {c}: {v} ± {se} vs {exact}",
                method.label()
            );
        }
    }
}

/// P(X ≥ k) for X ~ Poisson(λ).
fn poisson_upper_tail(k: u64, lambda: f64) -> f64 {
    let mut term = (-lambda).exp();
    let mut below = 0.0;
    for i in 0..k {
        below += term;
        term *= lambda / (i + 1) as f64;
    }
    (1.0 - below).max(0.0)
}

/// Quick mode with Zhang et al. 2017 §4.1's gradient noise as printed (∇U + N(0, 2B), not scaled by 1/h),
/// with the settings the full run's tuning chose for it. With less noise to absorb at small h,
/// the a = 2 samplers sample at the right temperature at steps where per-step noise overheats
/// them: SGMGT at h = 0.1 and SGMGT-D at h = 0.05 (with σ_θ = 1, whose θ-term excess σ_θhB now
/// fades with h) have E[U] − U(μ) within 10 % (full run 1.06 and 1.08), where with per-step
/// noise no SGMGT point and 5 of 576 SGMGT-D points passed the check, none above h = 0.02.
/// (SGNHT at h = 0.5 is not asserted: it runs ≈ 6.5 % cold with this noise, full run 0.934, too
/// close to the tolerance.)
#[test]
fn multi_well_quick_per_evaluation_noise() {
    use harness::models::multi_well::GradientNoise;
    let dir = out("mw-eval");
    let opts = RunOptions::quick(&dir);
    let r = multi_well::run_with_noise(&opts, GradientNoise::PerEvaluation).unwrap();
    eprintln!("{}", multi_well::report(&r, &opts));
    assert_eq!(r.noise, GradientNoise::PerEvaluation);
    for m in [Method::Sgmgt, Method::SgmgtD] {
        let x = find(&r, m, Criterion::Checked);
        let t = x.potential_temperature();
        assert!(
            (t / r.true_temperature - 1.0).abs() < multi_well::TOLERANCE,
            "{} temperature {t}",
            m.label()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
