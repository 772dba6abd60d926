//! Quick-mode runs of every experiment, asserting each paper's qualitative result with fixed seeds.

use harness::experiments::double_well::{self, Friction};
use harness::experiments::gaussian_mean::{self, Method};
use harness::experiments::{RunOptions, double_well_kl, normal_gamma};
use sgmcmc::integrator::Integrator;

fn out(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sgmcmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Ding et al. 2014 §3: SGNHT's ξ converges to B and holds the kinetic energy at ½; a friction
/// ξ = 10 > B freezes the chain into one well. Quick mode: 2 chains × 2·10⁵ steps at h = 0.01.
#[test]
fn double_well_quick() {
    let dir = out("dw");
    let r = double_well::run(&RunOptions::quick(&dir), Integrator::Euler).unwrap();
    let sgnht = r
        .runs
        .iter()
        .find(|x| x.friction == Friction::Thermostat)
        .unwrap();
    eprintln!("{}", double_well::table(&r));
    // ξ's time average over the second half: its fluctuations have unit-order variance and
    // correlation time ≈ 1 time unit, so over 2 × 10³ time units its standard error is ≈ 0.02;
    // the bound is 0.2.
    assert!(
        (sgnht.mean_xi - double_well::B).abs() < 0.2,
        "mean ξ {}",
        sgnht.mean_xi
    );
    // Temperature = 2 × mean kinetic energy, within 1 ± 0.05.
    assert!(
        (2.0 * sgnht.mean_kinetic - 1.0).abs() < 0.05,
        "K {}",
        sgnht.mean_kinetic
    );
    let stuck = r
        .runs
        .iter()
        .find(|x| x.friction == Friction::Fixed(10.0))
        .unwrap();
    assert_eq!(stuck.crossings, 0, "ξ = 10 should stay in one well");
    // ξ = 10 cools the momentum to temperature B/ξ = 0.1 (kinetic energy ≈ 0.05).
    assert!(stuck.mean_kinetic < 0.1);
    for f in [
        "double-well-density.png",
        "double-well-kinetic.png",
        "double-well-xi.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Li et al. 2016 Fig. 1: mSGNHT-S's KL is below mSGNHT-E's at h = 0.1, 0.2, 0.3 (8 chains × 10⁶
/// steps each, so the Monte Carlo floor of the KL, ≈ (bins − 1)/(2n) plus the well-occupancy noise,
/// ≈ 10⁻⁴, sits well below Euler's bias ≈ 9·10⁻⁴ at h = 0.1). At h ≥ 0.2 the Euler thermostat
/// diverges (reported as +∞).
#[test]
fn double_well_kl_quick() {
    let dir = out("dwkl");
    let opts = RunOptions {
        chains: 8,
        ..RunOptions::quick(&dir)
    };
    let rows = double_well_kl::run(&opts).unwrap();
    eprintln!("{}", double_well_kl::table(&rows));
    for r in &rows {
        assert!(
            r.splitting.value().is_finite(),
            "splitting diverged at h = {}",
            r.h
        );
        assert!(
            r.splitting.value() < r.euler.value(),
            "h = {}: splitting {:?} vs Euler {:?}",
            r.h,
            r.splitting,
            r.euler
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Ding et al. 2014 §5.1: SGNHT's kinetic energy is ½ at all four (h, A); SGHMC's is not at
/// h = 0.01, A = 1, where the gradient noise B ≈ 4.5 heats it to ≈ (A + B)/(2A).
#[test]
fn gaussian_mean_quick() {
    let dir = out("gm");
    let r = gaussian_mean::run(&RunOptions::quick(&dir), Integrator::Euler).unwrap();
    eprintln!("{}", gaussian_mean::table(&r));
    for run in r.runs.iter().filter(|x| x.method == Method::Sgnht) {
        // Temperature 2K within 1 ± 0.05 (its Monte Carlo error here is < 0.005).
        assert!((2.0 * run.mean_kinetic - 1.0).abs() < 0.05, "{run:?}");
    }
    let hot = r
        .runs
        .iter()
        .find(|x| x.method == Method::Sghmc && x.h == 0.01 && x.a == 1.0)
        .unwrap();
    assert!(
        (2.0 * hot.mean_kinetic - 1.0).abs() > 0.5,
        "SGHMC K = {}",
        hot.mean_kinetic
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Ding et al. 2014 App. E, Table 1 (provisional).
#[test]
fn normal_gamma_quick() {
    let dir = out("ng");
    let r = normal_gamma::run(&RunOptions::quick(&dir), Integrator::Euler, None).unwrap();
    eprintln!("{}", normal_gamma::report(&r));
    for run in &r.runs {
        eprintln!("{run:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
