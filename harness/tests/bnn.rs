//! Quick-mode runs of `bnn`: the table, the schedules and the depth comparison, with fixed seeds.

use harness::experiments::RunOptions;
use harness::experiments::bnn::{self, Method, Outcome, ScheduleKind};
use sgmcmc::prelude::Integrator;

fn out(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sgmcmc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The table's quick variant: SGNHT and mSGNHT-S on the 64-100-10 network and the linear
/// baseline, 5000 iterations (2000 burn-in) at minibatch 20.
///
/// The full run gets 1.7–2.3 % test error for every momentum sampler (REPRODUCTION.md); the
/// quick one 2.3–3.3 %. The bound, 6 %, is the full run's 2 % plus the binomial noise of 300
/// test images (sd 0.8 % at 2 %) and the quick run's shorter average, with room: a sampler
/// that does not move stays at the He-scaled start's ≈ 90 % error, one with a wrong gradient
/// sign or scale far above 6 %. The thermostats hold the kinetic temperature (1/n) Σ p² at 1:
/// after 2000 steps of adaptation its post-burn-in mean was 0.92 (SGNHT) and 0.95 (mSGNHT-S),
/// and a thermostat that did not respond to the minibatch noise would be far from 1 (SGHMC's
/// runs at 3.2 in the full table); the bound is ±0.15.
#[test]
fn bnn_quick() {
    let dir = out("bnn");
    let r = bnn::run(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", bnn::table(&r));
    assert_eq!(r.rows.len(), 3);
    for row in &r.rows {
        let (error, loglik) = row.out.test;
        assert!(error <= 0.06, "{}: test error {error}", row.label());
        assert!(
            loglik > -1.0 && loglik < 0.0,
            "{}: test log-lik. {loglik}",
            row.label()
        );
        assert!(
            (row.out.temperature - 1.0).abs() < 0.15,
            "{}: kinetic temperature {}",
            row.label(),
            row.out.temperature
        );
        // Every post-burn-in 50th draw: (5000 − 2000)/50.
        assert_eq!(row.out.draws, 60, "{}", row.label());
        assert!(row.out.seconds.0 > 0.0 && row.out.seconds.1 > 0.0);
    }
    let baseline = r.rows.iter().find(|x| x.cell.hidden == 0).unwrap();
    assert_eq!(baseline.cell.method, Method::Sgnht);
    for f in [
        "bnn.csv",
        "bnn-search.csv",
        "bnn-curves.csv",
        "bnn-curves.png",
        "bnn-loglik.png",
    ] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The schedules' quick variant. A cyclical run averages only the draws of its sampling
/// stages: of the 60 post-burn-in 50th draws of 5000 steps in 4 cycles of 1250 with β = 0.8,
/// the steps t with t − 1 mod 1250 ≥ 1000 — 2300…2500, 3550…3750 and 4800…5000 — five per
/// cycle after burn-in, 15. Every schedule's chosen run learns (test error ≤ 10 %: the
/// schedules' quick runs got 2.3–6.7 %).
#[test]
fn bnn_schedules_quick() {
    let dir = out("bnn-schedules");
    let r = bnn::schedules(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", bnn::table(&r));
    assert_eq!(r.rows.len(), 6);
    for row in &r.rows {
        let want = match row.cell.schedule {
            ScheduleKind::Cyclical => 15,
            _ => 60,
        };
        assert_eq!(row.out.draws, want, "{}", row.label());
        assert!(
            row.out.test.0 <= 0.10,
            "{}: {}",
            row.label(),
            row.out.test.0
        );
    }
    assert!(dir.join("bnn-schedules-curves.png").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// The depth comparison's quick variant: a 2-hidden-layer network, 2400 updates. At the
/// paper's h = 10⁻⁴ both integrators finish without degrading and learn (the quick run reached
/// 93.7 % test accuracy with either; a network at chance gets 10 %).
#[test]
fn bnn_depth_quick() {
    let dir = out("bnn-depth");
    let r = bnn::depth(&RunOptions::quick(&dir)).unwrap();
    eprintln!("{}", bnn::depth_table(&r));
    let at_paper: Vec<_> = r.runs.iter().filter(|x| x.h == 1e-4).collect();
    assert_eq!(at_paper.len(), 2);
    for run in at_paper {
        assert_eq!(run.outcome, Outcome::Ok, "{:?}", run.integrator);
        let (_, nll, accuracy) = run.last().unwrap();
        assert!(
            accuracy > 0.85 && nll < 0.5,
            "{:?}: {nll} {accuracy}",
            run.integrator
        );
    }
    assert!(r.runs.iter().any(|x| x.integrator == Integrator::Splitting));
    for f in ["bnn-depth.csv", "bnn-depth-curves.csv", "bnn-depth.png"] {
        assert!(dir.join(f).exists(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}
