//! Quick-mode runs of every experiment, asserting each paper's qualitative result with fixed seeds.

use harness::experiments::double_well::{self, Friction};
use harness::experiments::gaussian_mean::{self, Method};
use harness::experiments::normal_gamma::{Row, Scores};
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

/// Ding et al. 2014 App. E, Table 1, quick mode: 3 data sets, 2 chains × 2·10⁵ samples per row.
/// Every score of the exact i.i.d. row is below every sampler's; SGNHT's μ marginal is more
/// accurate than SGHMC's at h = 0.01 on every data set; the three τ readings are finite and
/// positive (≈ 1 for independent draws); SGNHT keeps the kinetic temperature at 1.
#[test]
fn normal_gamma_quick() {
    let dir = out("ng");
    let r = normal_gamma::run(&RunOptions::quick(&dir), Integrator::Euler, None).unwrap();
    eprintln!("{}", normal_gamma::report(&r));
    assert_eq!(r.data_sets, normal_gamma::QUICK_DATA_SETS);
    let per_data_set = |row: Row| -> Vec<Scores<f64>> {
        r.runs
            .iter()
            .filter(|x| x.row == row)
            .map(|x| x.scores)
            .collect()
    };
    let exact_worst = per_data_set(Row::Exact).iter().fold([0.0f64; 6], |acc, s| {
        let v = s.to_array();
        std::array::from_fn(|k| acc[k].max(v[k]))
    });
    for cell in r.cells.iter().filter(|c| c.row != Row::Exact) {
        // The floor: independent draws have the smallest sampling error any n draws can have,
        // and no bias. A sampler's draws here are autocorrelated with τ ≥ 10 (so ≥ 10× the
        // sampling variance of the exact row's, i.e. ≥ 3× its RMSE where noise dominates) and
        // carry discretisation bias on top, so even the exact row's worst data set must sit
        // below every sampler's median, for all six density scores.
        let median = cell.scores.to_array().map(|s| s.median);
        for k in 0..6 {
            assert!(
                exact_worst[k] < median[k],
                "{}: exact {} ≥ {:?}'s median {}",
                normal_gamma::SCORE_NAMES[k],
                exact_worst[k],
                cell.row,
                median[k]
            );
        }
        let s = cell.scores;
        assert!(
            s.tau_windowed.q10 > 0.0 && s.tau_windowed.q90.is_finite(),
            "{:?}: windowed τ {:?}",
            cell.row,
            s.tau_windowed
        );
        assert!(s.tau_geyer.q10 > 0.0 && s.tau_geyer.q90.is_finite());
        assert!(s.tau_batch.q10 > 0.0 && s.tau_batch.q90.is_finite());
    }
    // Exact draws are independent, so τ = 1; with 2 chains of 2·10⁵ draws and a window of
    // M ≈ 5 lags the windowed estimate's sd is ≈ √(2(2M + 1)/n)/√2 ≈ 0.007 (Sokal 1997, §3),
    // Geyer's similar; 0.05 is > 6 sd.
    // The batch-means τ over 100 batches has a relative sd of √(2/99) = 0.14 per chain, 0.1
    // for the mean of 2 chains: 0.5 is 5 sd.
    for s in per_data_set(Row::Exact) {
        assert!((s.tau_windowed - 1.0).abs() < 0.05, "{s:?}");
        assert!((s.tau_geyer - 1.0).abs() < 0.05, "{s:?}");
        assert!((s.tau_batch - 1.0).abs() < 0.5, "{s:?}");
    }
    // At h = 0.01 SGHMC's gradient noise is not removed: it heats the chain (kinetic
    // temperature ≈ 4.7 at A = 1, 1.4 at A = 10) and widens the μ marginal by ≈ √T — a bias
    // that is the same on every data set. SGNHT's thermostat absorbs the noise. Across data sets
    // both scores vary by ±10 % here, against a 3–6× gap, so the ordering must hold on each one,
    // for both marginal readings and for the joint histogram.
    for a in [1.0, 10.0] {
        let sghmc = per_data_set(Row::Sampler {
            method: Method::Sghmc,
            h: 0.01,
            a,
        });
        let sgnht = per_data_set(Row::Sampler {
            method: Method::Sgnht,
            h: 0.01,
            a,
        });
        for (hmc, nht) in sghmc.iter().zip(&sgnht) {
            assert!(nht.mu_kde < hmc.mu_kde, "A = {a}: {nht:?} vs {hmc:?}");
            assert!(nht.mu_hist < hmc.mu_hist, "A = {a}: {nht:?} vs {hmc:?}");
            assert!(nht.joint < hmc.joint, "A = {a}: {nht:?} vs {hmc:?}");
        }
    }
    // SGNHT's thermostat holds the kinetic temperature at 1: its time average over 2·10⁵ steps
    // has Monte Carlo error ≈ 0.005; 0.05 leaves the Euler bias room.
    for cell in r.cells.iter().filter(|c| {
        matches!(
            c.row,
            Row::Sampler {
                method: Method::Sgnht,
                ..
            }
        )
    }) {
        let t = cell.scores.temperature;
        assert!(
            (t.q10 - 1.0).abs() < 0.05 && (t.q90 - 1.0).abs() < 0.05,
            "{cell:?}"
        );
    }
    for f in [
        "normal-gamma.csv",
        "normal-gamma-data-sets.csv",
        "normal-gamma.png",
        "normal-gamma-marginal.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}
