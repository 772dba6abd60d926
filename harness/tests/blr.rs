//! Quick-mode run of the `blr` experiment (Zhang et al. 2017 §4.2): every available method
//! predicts the held-out Pima rows well, and the run writes its CSV files and figure.

use harness::experiments::RunOptions;
use harness::experiments::blr::{self, Method};
use harness::models::logistic_regression::DataSet;

/// Quick mode: Pima only, 2 runs × 2000 iterations (500 burn-in), seed 1. Logistic regression
/// on these 7 features reaches a held-out AUROC of about 0.87 on our split (the paper reports
/// 0.86–0.93 on its own); 0.75 leaves room for seeds and methods, but not for a sampler that
/// has not found the posterior (a random start predicts at ≈ 0.5).
#[test]
fn blr_quick() {
    let dir = std::env::temp_dir().join(format!("sgmcmc-blr-{}", std::process::id()));
    let r = blr::run(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", blr::table(&r));
    assert!(r.rows.iter().all(|row| row.data == DataSet::Pima));
    let mut checked = 0;
    for row in &r.rows {
        assert!(
            row.diverged.is_empty(),
            "{:?}: {:?}",
            row.method,
            row.diverged
        );
        assert_eq!(row.runs.len(), 2);
        let (auroc, _) = row.auroc().unwrap();
        assert!(auroc > 0.75, "{}: AUROC {auroc}", row.method.label());
        let (ess, _) = row.median_ess().unwrap();
        assert!(
            ess.is_finite() && ess > 0.0,
            "{}: ESS {ess}",
            row.method.label()
        );
        checked += 1;
    }
    assert!(
        r.rows
            .iter()
            .any(|row| row.method == Method::Sgnht && !row.runs.is_empty())
    );
    assert!(checked >= 1);
    for f in ["blr.csv", "blr-runs.csv", "blr-trace-pima.png"] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The split spread behind the AUROC comparison with Table 1: the posterior mode ranks our
/// held-out Pima rows as the quick-mode samplers' posterior means do (within 0.005 — the five
/// methods agree within 0.002 in the full run; SGMGT(a=2), the slowest to converge, is left out
/// here: after the quick run's 2000 iterations it is at 0.860, in the full run 0.877), and 20
/// random re-splits move the mode's AUROC
/// by several hundredths (full run, 100 splits: sd 0.031), more than any difference between
/// samplers; the re-split mean stays above 0.75.
#[test]
fn blr_split_spread_pima() {
    let r = blr::run(&RunOptions::quick(
        std::env::temp_dir().join(format!("sgmcmc-blr-split-{}", std::process::id())),
    ))
    .unwrap();
    let sp = blr::split_spread(DataSet::Pima, 20, 1).unwrap();
    assert_eq!(sp.aurocs.len(), 20);
    for row in r.rows.iter().filter(|row| row.method != Method::Sgmgt2) {
        let (a, _) = row.auroc().unwrap();
        assert!(
            (a - sp.fixed_split).abs() < 0.005,
            "{}: {a} vs the mode's {}",
            row.method.label(),
            sp.fixed_split
        );
    }
    let (mean, sd) = sp.mean_sd();
    assert!(mean > 0.75, "{mean}");
    assert!(sd > 0.01, "re-splits should move the AUROC: sd {sd}");
}

/// `Problem::median_gradient_noise` against simulation: the variance of the experiment's own
/// stochastic gradient (16 rows without replacement, scaled by N/16) at the Pima posterior mode,
/// over 40 000 draws, gives B_j = ½hV_j per weight; its median must match the closed form within
/// 5 % (the relative sd of a variance estimate from 40 000 draws is ≈ √(2/40 000) ≈ 0.7 %, a
/// little more for the heavier-tailed gradient coordinates).
#[test]
fn gradient_noise_matches_simulation() {
    let problem = blr::Problem::load(DataSet::Pima).unwrap();
    let h = 0.05;
    let closed = problem.median_gradient_noise(h);
    let w = problem.laplace.mode.clone();
    let d = w.len();
    let mut grad = problem.model.stochastic_gradient(blr::BATCH, 77);
    let draws = 40_000;
    let (mut s1, mut s2) = (vec![0.0; d], vec![0.0; d]);
    let mut g = vec![0.0; d];
    for _ in 0..draws {
        grad(&w, &mut g);
        for j in 0..d {
            s1[j] += g[j];
            s2[j] += g[j] * g[j];
        }
    }
    let n = draws as f64;
    let mut b: Vec<f64> = (0..d)
        .map(|j| {
            let m = s1[j] / n;
            0.5 * h * (s2[j] / n - m * m)
        })
        .collect();
    b.sort_by(f64::total_cmp);
    let simulated = 0.5 * (b[d / 2 - 1] + b[d / 2]);
    assert!(
        ((simulated - closed) / closed).abs() < 0.05,
        "median B: simulated {simulated}, closed form {closed}"
    );
}

/// `blr --batch-sweep --quick` (Pima, 2 runs × 2000 iterations per row, its own validation
/// search at each minibatch): the minibatch really reaches the gradient, and with it the ESS.
/// With every training row per gradient the median ESS of each method is more than 3 × the
/// n = 16 value (measured: 15 ×, 9 ×, 11 ×; the run-to-run sd of these medians is ≈ 10 %, so 3 ×
/// is many sds from the measured ratios, and far above the 1 × a sweep that ignored the
/// minibatch would give); the full-batch rows carry no gradient noise into SGMGT-D's θ term
/// (σ_θB = 0 by the finite-population factor N − n) and sample the posterior's width
/// (sd/Laplace within 25 %: measured 0.98, 0.89, 1.13).
#[test]
fn batch_sweep_quick() {
    let dir = std::env::temp_dir().join(format!("sgmcmc-blr-sweep-{}", std::process::id()));
    let rows = blr::batch_sweep(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", blr::sweep_table(&rows, 1500));
    let rows_n = rows[0].rows;
    for method in blr::SWEEP_METHODS {
        let of = |n: usize| {
            rows.iter()
                .find(|r| r.row.method == method && r.batch == n)
                .unwrap_or_else(|| panic!("{}: no row at n = {n}", method.label()))
        };
        let (small, full) = (of(blr::BATCH), of(rows_n));
        for r in [small, full] {
            assert!(r.row.diverged.is_empty(), "{:?}", r.row.diverged);
            assert_eq!(r.row.runs.len(), 2);
        }
        let (ess_small, _) = small.row.median_ess().unwrap();
        let (ess_full, _) = full.row.median_ess().unwrap();
        assert!(
            ess_full > 3.0 * ess_small,
            "{}: ESS {ess_full} at n = N, {ess_small} at n = 16",
            method.label()
        );
        assert_eq!(full.row.theta_noise_excess, 0.0);
        let ratio = full.row.sd_ratio().unwrap();
        assert!(
            ratio.ln().abs() < 0.25_f64.ln_1p(),
            "{}: sd/Laplace {ratio}",
            method.label()
        );
    }
    assert!(dir.join("blr-batch-sweep.csv").exists());
    assert!(dir.join("blr-batch-sweep-pima.png").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// The ESS audit in quick mode: 24 independent full-gradient runs of 2000 kept draws of each
/// underdamped sampler on Pima. The full run (200 runs × 4000 draws,
/// `results/blr/blr-ess-audit.csv`) measured Geyer's estimate at 0.14–0.26 of the true ESS on
/// every weight and coda's at 0.80–1.33.
///
/// Tolerances: the true ESS from 24 replicates has relative sd √(2/23) = 29 %, and the median
/// over 8 weights of a ratio to it about half that (≈ 15 %). Geyer's median ratio must stay
/// below 0.5 — 2.5× its full-run value, beyond +3 sd of the truth's noise — and coda's must lie
/// in [0.6, 1.6], ≈ ±3 sd around 1: an estimator that tracks the truth passes, one that stops at
/// the first trough of the oscillating autocorrelation does not.
#[test]
fn ess_audit_quick_geyer_understates_and_coda_tracks_the_truth() {
    let dir = std::env::temp_dir().join(format!("sgmcmc-blr-audit-{}", std::process::id()));
    let rows = blr::ess_audit(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", blr::audit_table(&rows, false));
    assert_eq!(rows.len(), blr::AUDIT_CONFIGS.len());
    for row in &rows {
        assert_eq!(row.runs, 24);
        let median = |f: &dyn Fn(usize) -> f64| {
            let mut v: Vec<f64> = (0..row.truth.len()).map(f).collect();
            v.sort_by(f64::total_cmp);
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        };
        let geyer = median(&|j| row.estimates[j].geyer / row.truth[j]);
        let coda = median(&|j| row.estimates[j].coda / row.truth[j]);
        assert!(
            geyer < 0.5,
            "{:?} h {}: Geyer/true {geyer}",
            row.dynamics,
            row.h
        );
        assert!(
            (0.6..=1.6).contains(&coda),
            "{:?} h {}: coda/true {coda}",
            row.dynamics,
            row.h
        );
    }
    assert!(dir.join("blr-ess-audit.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// The readings in quick mode (Pima, 2 runs, 200 + 800 stored draws): storing one draw per
/// epoch (27 updates) or per 100 updates must raise the ESS per stored draw over storing every
/// update — by construction for a chain that mixes, and the full run has 17–59× (Pima) — and
/// every row finishes without divergence. Thinning by 27 on a chain whose ESS per update is
/// ≈ 1/90 (full run: 46.8 of 4000) should give ≥ 10× on 800 draws; 3× leaves room for 2-run noise.
#[test]
fn ess_readings_quick_thinning_raises_the_ess_per_draw() {
    let dir = std::env::temp_dir().join(format!("sgmcmc-blr-readings-{}", std::process::id()));
    let rows = blr::ess_readings(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", blr::readings_table(&rows));
    use blr::Storage;
    for method in [Method::Sgnht, Method::SgmgtD1, Method::SgmgtD2] {
        let get = |batch: usize, storage: Storage| {
            let row = rows
                .iter()
                .find(|r| {
                    r.method == method && r.reading.batch == batch && r.reading.storage == storage
                })
                .unwrap();
            assert_eq!(row.diverged, 0, "{row:?}");
            row.estimate(|e| e.geyer).unwrap().0
        };
        let every = get(16, Storage::EveryUpdate);
        for storage in [Storage::PerEpoch, Storage::Per100] {
            let thinned = get(16, storage);
            assert!(
                thinned > 3.0 * every,
                "{}: {storage:?} {thinned} vs every update {every}",
                method.label()
            );
        }
        assert!(get(0, Storage::EveryUpdate) > 0.0);
    }
    for f in ["blr-ess-readings.csv", "blr-ess-readings-fit.csv"] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `blr --ksd-tune --quick` (Pima, 2 chains × 300 iterations per setting): every method gets a
/// KSD pick; the validation table it compares with is read and agrees with `settings()` (the
/// validation h is among its own acceptable ones); and the KSD at the smallest step size, whose
/// chains have barely left their random starts, is above the KSD at the pick — the lower arm of
/// the U-shaped curve the search relies on. In the quick run it is 9.6–24× for four methods and
/// 2.2× for SGMGT(a=2), which after 300 iterations has converged at no h of the grid (its best
/// KSD, 95, is 13× the others'); 1.5× is asserted, as the bound all five clear. The main
/// protocol is also read with the stability margin, from the same runs: its picks must be
/// eligible (finite KSD at the pick and at the next larger h). The comparison of the picks with
/// the validation range is the experiment's finding, reported in REPRODUCTION.md, not asserted.
#[test]
fn ksd_tune_quick_picks_a_step_size_per_method() {
    let dir = std::env::temp_dir().join(format!("sgmcmc-blr-ksd-{}", std::process::id()));
    let searches = blr::ksd_tune(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", blr::ksd_tune_table(&searches));
    eprintln!("{}", blr::ksd_readings_table(&searches));
    assert_eq!(searches.len(), 2);
    assert_eq!(searches[0].label(), "main");
    assert_eq!(searches[1].label(), "main + margin");
    assert_eq!(blr::validation_span(), (0.005, 0.05));
    for (plain, margin) in searches[0].rows.iter().zip(&searches[1].rows) {
        assert_eq!(plain.ksd, margin.ksd, "a margin reading shares its runs");
        let h = margin.ksd_h.expect("some h is eligible under the margin");
        let at = margin.ksd.iter().position(|c| c.0 == h).unwrap();
        assert!(margin.ksd[at].1.is_finite(), "{margin:?}");
        assert!(
            margin.ksd.get(at + 1).is_none_or(|c| c.1.is_finite()),
            "{margin:?}"
        );
    }
    let s = &searches[0];
    assert_eq!(s.rows.len(), Method::ALL.len());
    for row in &s.rows {
        assert!(row.acceptable_h.contains(&row.validation_h), "{row:?}");
        let best = row
            .ksd
            .iter()
            .map(|&(_, k)| k)
            .fold(f64::INFINITY, f64::min);
        assert!(row.ksd_h.is_some() && best.is_finite(), "{row:?}");
        assert!(
            row.ksd[0].1 > 1.5 * best,
            "{}: {:?}",
            row.method.label(),
            row.ksd
        );
    }
    assert!(s.friction.ksd_pick.is_some());
    assert!(s.friction.acceptable.contains(&s.friction.validation));
    for f in [
        "blr-ksd-tune.csv",
        "blr-ksd-tune-readings.csv",
        "blr-ksd-tune-cells.csv",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}
