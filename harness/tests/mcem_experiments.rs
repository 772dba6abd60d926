//! Quick-mode runs of the two MCEM experiments of Roychowdhury & Parthasarathy 2017 (`normal-1d`, `blr-2d`) with fixed seeds.

use harness::experiments::mcem::{Method, mean_sd};
use harness::experiments::{RunOptions, blr_2d, normal_1d};
use harness::models::mixture_logistic::{LabelReading, TRUE_WEIGHTS};

fn out(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sgmcmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Roychowdhury & Parthasarathy 2017 §4.1 in quick mode (4 chains per method × 2000 recorded iterations after 1000 burn-in,
/// seed 1; the spread: 200 exact posteriors, every method on 2 of those data sets).
///
/// HMC is exact up to Monte Carlo error: its posterior mean of μ and τ within 0.25 exact sds of
/// the exact one (4 chains × 2000 nearly independent draws give a standard error of ≈ 0.01 sd,
/// so the bound is > 10 SE), and its sample sd within 10 % of the exact one (SE of one chain's
/// ratio ≈ 1/√(2 · 2000) ≈ 0.016).
///
/// Roychowdhury & Parthasarathy 2017 Table 1's claim, HMC-EM's RMSE not worse than HMC's, on RMSE vs the generating value:
/// HMC-EM's mean over chains must not exceed HMC's by more than 3 standard errors of the
/// difference of the two means, √(s²_EM/n + s²_HMC/n) with s the sd over the n = 4 chains.
#[test]
fn normal_1d_quick() {
    let dir = out("n1d");
    let opts = RunOptions {
        chains: 4,
        ..RunOptions::quick(&dir)
    };
    let r = normal_1d::run(&opts).unwrap();
    eprintln!("{}\n{}", normal_1d::header(&r), normal_1d::table(&r));
    let (em, et) = r.model.posterior_mean();
    let (sm, st) = r.model.posterior_sd();
    let row = |m: Method| r.rows.iter().find(|row| row.method == m).unwrap();
    let (hmc, hmc_em) = (row(Method::Hmc), row(Method::HmcEm));
    assert!(
        hmc.mean_error(0, em) < 0.25 * sm,
        "μ: {}",
        hmc.mean_error(0, em)
    );
    assert!(
        hmc.mean_error(1, et) < 0.25 * st,
        "τ: {}",
        hmc.mean_error(1, et)
    );
    for ratio in hmc.sd_ratio(0, sm).into_iter().chain(hmc.sd_ratio(1, st)) {
        assert!((ratio - 1.0).abs() < 0.1, "HMC sd ratio {ratio}");
    }
    for (j, name) in [(0, "μ"), (1, "τ")] {
        let (e, e_sd) = mean_sd(&hmc_em.rmse_about(j, normal_1d::TRUTH[j]));
        let (h, h_sd) = mean_sd(&hmc.rmse_about(j, normal_1d::TRUTH[j]));
        let n = hmc.chains.len() as f64;
        let se = (e_sd * e_sd / n + h_sd * h_sd / n).sqrt();
        assert!(
            e <= h + 3.0 * se,
            "RMSE({name}): HMC-EM {e} vs HMC {h} (3 SE = {})",
            3.0 * se
        );
    }
    // Reading 2 of an exact sampler over the simulated data sets. μ's posterior mean is
    // μ_N = N x̄/(N + 1) with x̄ ~ N(0, 1/N) exactly, so |μ_N − 0| ~ |N(0, σ²)|, σ = √N/(N + 1),
    // whose median is 0.6745σ. The number of data sets below 0.6745σ is Binomial(n, ½) with n =
    // 200 (sd √50 ≈ 7.1); we accept n/2 ± 3 sd (a correct computation fails with probability
    // ≈ 0.003; a σ wrong by 30 % moves the expected count out of the band). τ: E τ = α_N/β_N ≈
    // 1 + N(0, 2/N) (β_N ≈ ½χ²_N); its bias 2/N = 0.02 σ_τ and skewness ≈ 0.04 move the expected
    // count by < 1, so the same band with σ_τ = √(2/N).
    let n_sets = r.exact_sets.len();
    assert_eq!(n_sets, normal_1d::SPREAD_SETS);
    let nf = normal_1d::N as f64;
    let band = 3.0 * (n_sets as f64 / 4.0).sqrt();
    for (j, sigma) in [(0, nf.sqrt() / (nf + 1.0)), (1, (2.0 / nf).sqrt())] {
        let below = r
            .exact_sets
            .iter()
            .filter(|e| (e.mean[j] - normal_1d::TRUTH[j]).abs() < 0.6745 * sigma)
            .count();
        assert!(
            (below as f64 - n_sets as f64 / 2.0).abs() <= band,
            "coordinate {j}: {below} of {n_sets} data sets below the median 0.6745σ = {}",
            0.6745 * sigma
        );
    }
    // On each data set of the spread HMC and HMC-EM (one chain of 2000 draws each) find that data
    // set's exact posterior mean within 0.25 sd (> 10 SE, as above): correct samplers agree with
    // each other to Monte Carlo error, whatever the data set's own |mean − truth|.
    for m in [Method::Hmc, Method::HmcEm] {
        let row = r.spread.iter().find(|row| row.method == m).unwrap();
        assert_eq!(row.runs.len(), 2, "{}: {:?}", m.label(), row.failures);
        for run in &row.runs {
            let e = &r.exact_sets[run.data_set];
            for j in 0..2 {
                assert!(
                    (run.mean[j] - e.mean[j]).abs() < 0.25 * e.sd[j],
                    "{} data set {} coordinate {j}: {} vs exact {}",
                    m.label(),
                    run.data_set,
                    run.mean[j],
                    e.mean[j]
                );
            }
        }
    }
    // Every method but the printed-Alg. 5 SG-NPHMC-EM ran and produced finite samples (that
    // extra row is reported, not asserted: its thermostat may break down, see REPRODUCTION.md).
    for row in r
        .rows
        .iter()
        .filter(|row| row.method != Method::SgNphmcEmPrinted)
    {
        assert_eq!(
            row.chains.len(),
            4,
            "{}: {:?}",
            row.method.label(),
            row.error
        );
        assert!(
            row.chains
                .iter()
                .all(|c| c.samples.iter().all(|x| x.is_finite()))
        );
    }
    for f in [
        "normal-1d.csv",
        "normal-1d-tuning.csv",
        "normal-1d-spread.csv",
        "normal-1d-paper-percentiles.csv",
        "normal-1d-mu.png",
        "normal-1d-tau.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Roychowdhury & Parthasarathy 2017 §4.2 in quick mode (1000 burn-in + 1000 recorded iterations, 2 chains, the reduced
/// tuning grid `QUICK_STEPS` × `QUICK_NOISES`): a smoke test. Every method but the printed-Alg. 5
/// SG-NPHMC-EM runs; HMC's posterior mean is within 0.25 reference sds of the reference (the
/// reference and HMC runs are short here, 3000 and 2 × 1000 draws: standard errors ≈ 0.02–0.03
/// sd); and every such method's RMSE about the reference mean is below 3 posterior sds (the
/// tuned samplers of the full run are at 0.9–1.6 sds; a sampler that has not found the posterior
/// from W = 0, ≈ 16 sds away, is far above). The quadrature, the label readings and the spread
/// over 20 data sets are checked too (tolerances at each assertion).
#[test]
fn blr_2d_quick() {
    let dir = out("b2d");
    let r = blr_2d::run(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}\n{}", blr_2d::header(&r), blr_2d::table(&r));
    let rf = &r.reference;
    let hmc = r.rows.iter().find(|row| row.method == Method::Hmc).unwrap();
    for j in 0..2 {
        assert!(hmc.mean_error(j, rf.mean[j]) < 0.25 * rf.sd[j], "W{j}");
    }
    for row in r
        .rows
        .iter()
        .filter(|row| row.method != Method::SgNphmcEmPrinted)
    {
        assert_eq!(
            row.chains.len(),
            2,
            "{}: {:?}",
            row.method.label(),
            row.error
        );
        for j in 0..2 {
            for rmse in row.rmse_about(j, rf.mean[j]) {
                assert!(
                    rmse.is_finite() && rmse < 3.0 * rf.sd[j],
                    "{} W{j}: RMSE {rmse}",
                    row.method.label()
                );
            }
        }
    }
    // The long-HMC reference and the 151-point quadrature agree within 4 MCSE (sd/√ESS of the
    // 3000-draw reference; a two-sided 4-SE band fails with probability 6·10⁻⁵ for a correct pair,
    // 4 rather than 3 because the ESS of a short run is itself uncertain).
    for j in 0..2 {
        let z = (rf.mean[j] - rf.quadrature_mean[j]) / rf.mcse[j];
        assert!(z.abs() < 4.0, "W{j}: reference − quadrature = {z} MCSE");
    }
    // The spread's 41-point quadrature equals the 151-point one: the midpoint rule on a smooth
    // near-Gaussian integrand converges like exp(−2π²(sd/spacing)²), ≈ e⁻¹³⁰ at 41 points over
    // ± 8 sd, so any difference beyond rounding (10⁻⁶ sd is generous) is a bug.
    for j in 0..2 {
        assert!(
            (rf.coarse.mean[j] - rf.quadrature_mean[j]).abs() < 1e-6 * rf.sd[j],
            "W{j}: {} vs {}",
            rf.coarse.mean[j],
            rf.quadrature_mean[j]
        );
        assert!((rf.coarse.sd[j] / rf.quadrature_sd[j] - 1.0).abs() < 1e-6);
    }
    // The label readings (41-point quadrature in quick mode; a 101-point one must agree within
    // 0.01 sd, i.e. the coarse grid is converged even for the sign reading's wide box).
    let fine = blr_2d::label_checks(blr_2d::DATA_SEED, 101).unwrap();
    for (c, f) in r.labels.iter().zip(&fine) {
        for j in 0..2 {
            assert!(
                (c.mean[j] - f.mean[j]).abs() < 0.01 * f.sd[j],
                "{:?} W{j}: {} (41 points) vs {} (101)",
                c.reading,
                c.mean[j],
                f.mean[j]
            );
        }
    }
    let label = |reading| r.labels.iter().find(|c| c.reading == reading).unwrap();
    // Bernoulli labels: W generated the data, so (E W − W)/sd ≈ N(0, 1) per coordinate; < 4 fails
    // with probability 6·10⁻⁵.
    let bernoulli = label(LabelReading::Bernoulli);
    for d in bernoulli.distance_in_sds() {
        assert!(d < 4.0, "Bernoulli reading: {d} sds from W");
    }
    // Component labels: for this mixture P(component 1 | x) = σ(2Wᵀx), so they are Bernoulli
    // labels of the weights 2W = (2, −2): the posterior mean must lie within 4 sds of 2W (as
    // above) and far from W (|W| ≈ 1/0.12 ≈ 8 sds; we ask for 5).
    let component = label(LabelReading::Component);
    for (j, w) in TRUE_WEIGHTS.iter().enumerate() {
        let z = (component.mean[j] - 2.0 * w).abs() / component.sd[j];
        assert!(z < 4.0, "component reading W{j}: {z} sds from 2W");
    }
    for d in component.distance_in_sds() {
        assert!(d > 5.0, "component reading: only {d} sds from W");
    }
    // Sign labels: W separates them, and the posterior runs out along W until the prior N(0, 10 I)
    // stops it: E W₀ well beyond 1 (we ask for > 5), with no weight left on the box's edge.
    let sign = label(LabelReading::Sign);
    assert_eq!(sign.misclassified, 0);
    assert!(sign.mean[0] > 5.0 && sign.mean[1] < -5.0, "{:?}", sign.mean);
    assert!(sign.edge < 1e-6, "edge weight {}", sign.edge);
    // Reading 2 of an exact sampler over the 20 simulated data sets: z = (E Wⱼ − W_true,j)/sdⱼ is
    // ≈ N(0, 1) over data sets (Bernstein–von Mises at N = 2000; the O(1/N) bias is ≈ 0.02 sd).
    // Its mean over n = 20 sets must be within 3.5/√n of 0 and its sd within 3.5 SE
    // (SE ≈ 1/√(2(n − 1)) = 0.16) of 1: reading 2 of a correct sampler is about one posterior sd.
    let n_sets = r.exact_sets.len();
    assert_eq!(n_sets, 20);
    for (j, w) in TRUE_WEIGHTS.iter().enumerate() {
        let z: Vec<f64> = r
            .exact_sets
            .iter()
            .map(|e| (e.mean[j] - w) / e.sd[j])
            .collect();
        let (m, s) = mean_sd(&z);
        let n = n_sets as f64;
        assert!(m.abs() < 3.5 / n.sqrt(), "W{j}: mean z {m}");
        assert!(
            (s - 1.0).abs() < 3.5 / (2.0 * (n - 1.0)).sqrt(),
            "W{j}: sd z {s}"
        );
    }
    // HMC finds each spread data set's quadrature mean within 0.25 sd (1000 draws: SE ≈ 0.03 sd).
    let hmc_spread = r
        .spread
        .iter()
        .find(|row| row.method == Method::Hmc)
        .unwrap();
    assert_eq!(hmc_spread.runs.len(), 2, "{:?}", hmc_spread.failures);
    for run in &hmc_spread.runs {
        let e = &r.exact_sets[run.data_set];
        for j in 0..2 {
            assert!(
                (run.mean[j] - e.mean[j]).abs() < 0.25 * e.sd[j],
                "data set {} W{j}",
                run.data_set
            );
        }
    }
    for f in [
        "blr-2d-spread.csv",
        "blr-2d-paper-percentiles.csv",
        "blr-2d-labels.csv",
        "blr-2d.csv",
        "blr-2d-times.csv",
        "blr-2d-tuning.csv",
        "blr-2d-w0.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}
