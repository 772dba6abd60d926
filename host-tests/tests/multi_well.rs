//! Quick-mode run of the `multi-well` experiment (Zhang et al. 2017 §4.1, Fig. 3) with a fixed
//! seed, asserting its qualitative result.

use harness::experiments::RunOptions;
use harness::experiments::multi_well::{self, Method};
use harness::models::multi_well::MultiWell;

fn out(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sgmcmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Quick mode: 2 chains × 10⁵ steps per method from mode 1, with the tuned settings.
///
/// SGNHT at h = 0.1 covers 10⁴ time units; at the equilibrium crossing rate of order
/// 0.1·e^{−10.4} ≈ 3·10⁻⁶ per unit time and edge it leaves mode 1 with probability ≈ 0.06 per
/// chain, and with this seed it does not. It also samples its mode at the right temperature.
#[test]
fn multi_well_quick() {
    let dir = out("mw");
    let opts = RunOptions::quick(&dir);
    let r = multi_well::run(&opts).unwrap();
    eprintln!("{}", multi_well::report(&r, &opts));
    let sgnht = r.runs.iter().find(|x| x.method == Method::Sgnht).unwrap();
    assert_eq!(sgnht.chains.len(), 2);
    for ch in &sgnht.chains {
        assert_eq!(ch.tracker.steps(), multi_well::steps_for(&opts) as u64);
        assert_eq!(ch.tracker.first_visit[0], Some(0), "starts in mode 1");
    }
    assert_eq!(
        sgnht.modes_visited(),
        1,
        "SGNHT should stay in its start mode"
    );
    assert_eq!(sgnht.switches(), 0);
    let t = sgnht.potential_temperature();
    assert!(
        (t - r.true_temperature).abs() < 0.1 * r.true_temperature,
        "SGNHT temperature {t}"
    );
    // Time in mode 1 ≈ its mass conditioned on the one visited basin: 1 − (time outside).
    let frac = sgnht.pooled.fractions()[0];
    assert!(frac > 0.97, "time in mode 1 {frac}");
    for f in [
        "multi-well.csv",
        "multi-well-chains.csv",
        "multi-well-occupancy.csv",
        "multi-well-draws-sgnht.csv",
        "multi-well-samples.png",
        "multi-well-traces.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The model's documented numbers: barrier ≈ d²/8 − ln 2 between neighbours, basin masses
/// ≈ w(1 − e^{−9/2}), exact potential temperature 1.
#[test]
fn multi_well_model_numbers() {
    let m = MultiWell::standard();
    let d = 2.0 * MultiWell::RADIUS * (std::f64::consts::PI / 5.0).sin();
    assert!((m.barrier(0, 1) - (d * d / 8.0 - 2f64.ln())).abs() < 0.01);
    assert!(m.barrier(0, 1) > 10.0);
    let t = m.mean_potential() - m.potential(&m.means()[0]);
    assert!((t - 1.0).abs() < 1e-3, "{t}");
}
