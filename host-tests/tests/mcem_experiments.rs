//! Quick-mode runs of the two MCEM experiments of Roychowdhury & Parthasarathy 2017 (`normal-1d`, `blr-2d`) with fixed seeds.

use harness::experiments::mcem::{Method, mean_sd};
use harness::experiments::{RunOptions, blr_2d, normal_1d};

fn out(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sgmcmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Roychowdhury & Parthasarathy 2017 §4.1 in quick mode (4 chains per method × 2000 recorded iterations after 1000 burn-in,
/// seed 1).
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
/// from W = 0, ≈ 16 sds away, is far above).
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
    for f in [
        "blr-2d.csv",
        "blr-2d-times.csv",
        "blr-2d-tuning.csv",
        "blr-2d-w0.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}
