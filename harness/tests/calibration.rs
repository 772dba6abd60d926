//! Quick-mode run of `calibration` on Pima, with fixed seeds: the harness end to end and the effect of the online noise estimate on a real posterior.

use harness::experiments::RunOptions;
use harness::experiments::calibration::{self, Method, Variant, median_sd_ratio};
use harness::models::logistic_regression::DataSet;
use sgmcmc::adapt::NoiseShape;

fn out(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sgmcmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The quick variant on Pima: SGHMC and SGNHT at b = 32, every variant, 2000 steps × 4 chains
/// (a min ESS of about 250 over the weights), against 4 × 1000 reference HMC draws.
///
/// Without the estimate SGHMC (A = 1) absorbs none of the minibatch noise: the full run
/// measured kinetic temperature 9.4 and sds 3.0× the reference (median over the weights). With
/// the dense estimate, either correction, the temperature is 1.00 and the median sd ratio
/// 0.99–1.01. The bounds — plain SGHMC's temperature above 3 and sd ratio above 2, the dense
/// rows' temperature within 0.8–1.25 and sd ratio within 0.85–1.15 — are over 4 Monte Carlo
/// sds (about 4 % for an sd from ESS 250) away from both measurements, and a correction that
/// did nothing (the plain row's numbers) or doubled the noise would fail them.
#[test]
fn calibration_quick_pima() {
    let dir = out("calibration");
    let results = calibration::run(&RunOptions::quick(&dir), &[DataSet::Pima]).unwrap();
    eprintln!("{}", calibration::table(&results));
    let r = &results[0];
    let find = |method, variant| {
        r.runs
            .iter()
            .find(|x| x.config.method == method && x.config.variant == variant)
            .unwrap_or_else(|| panic!("{method:?} {variant:?} missing"))
    };
    let plain = find(Method::Sghmc, Variant::Plain);
    let ratio = median_sd_ratio(&plain.moments, &r.reference.moments);
    assert!(
        plain.temperature > 3.0,
        "plain SGHMC temperature {}",
        plain.temperature
    );
    assert!(ratio > 2.0, "plain SGHMC sd ratio {ratio}");
    for method in [Method::Sghmc, Method::Sgnht] {
        for variant in [
            Variant::Subtract(NoiseShape::Dense),
            Variant::Friction(NoiseShape::Dense),
        ] {
            let run = find(method, variant);
            let ratio = median_sd_ratio(&run.moments, &r.reference.moments);
            assert!(
                (0.8..1.25).contains(&run.temperature),
                "{method:?} {variant:?}: temperature {}",
                run.temperature
            );
            assert!(
                (0.85..1.15).contains(&ratio),
                "{method:?} {variant:?}: sd ratio {ratio}"
            );
        }
    }
    for file in [
        "calibration.csv",
        "calibration-setup.csv",
        "calibration-weights.csv",
    ] {
        assert!(dir.join(file).exists(), "{file}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
