//! `multi-well`: SGNHT vs SGMGT vs SGMGT-D (a = 2) on a 2-d potential with five isolated modes (Zhang et al. 2017 §4.1, Fig. 3).
//!
//! The potential is ours ([`crate::models::multi_well`]: five unit Gaussians on a pentagon of
//! radius 8, barriers ≈ 10.4 units between neighbours), since the paper's is in its missing
//! supplement. The gradient noise is ∇Ũ = ∇U + N(0, 2B/h) per coordinate with B = 1, as in the
//! double well of Ding et al. 2014 §3, or, with `--gradient-noise per-evaluation`, ∇U + N(0, 2B) as
//! Zhang et al. 2017 §4.1 prints it ([`GradientNoise`]); γ = 1, a = 2 with the softened kinetics of
//! Zhang et al. 2017 eq. 12. Every method gets the same number of steps, each one gradient
//! evaluation, and starts in the same mode (μ₁, the top of the pentagon) with a momentum drawn from
//! its kinetic energy's marginal (ξ₀ = 0).
//!
//! Beside the paper's three samplers, SGMGT and SGMGT-D (a = 2) also run with the power
//! softening ([`MonomialGamma::softened_power`], K_c = (p² + c^{−4})^{1/4}, whose curvature is
//! bounded by c³/2) instead of eq. 12 (curvature ~ c²/(16√|p|), unbounded): [`Method::SgmgtPower`]
//! and [`Method::SgmgtDPower`]; and SGMGT-D (power) with the noise estimate B̂ = B for its
//! first-order θ term ([`Method::SgmgtDPowerNoiseEstimate`], `SgmgtParams::with_noise_estimate`).
//! They are appended to [`Method::ALL`] and run on their own seeds, so the three original rows
//! are unchanged.
//!
//! # Tuning
//!
//! Each method is tuned on a grid ([`tuning_grid`], then [`tuning_grid_extension`]; both
//! integrators, Euler being the paper's): every grid point runs [`TUNE_CHAINS`] chains of
//! [`tune_steps`] steps on seeds disjoint from the final run's. Two winners per method are then
//! rerun on fresh seeds (so luck in the tuning does not carry over):
//!
//! * **temperature-checked**: the most modes per chain, then the most switches, among the
//!   points whose two temperatures are within [`TOLERANCE`] of the truth's — the mean-energy one
//!   E\[U\] − U(μ) (1 for the exact density) and the tail one read off the time spent outside every
//!   basin ([`MultiWell::tail_temperature`], ≈ 1). A chain that is hot, or cold in the core but
//!   fat in the tails, crosses barriers for the wrong reason; with no passing point, the closest
//!   one is used (and reported);
//! * **exploration only**: the most modes, then switches, whatever the temperature — all that a
//!   figure like Zhang et al. 2017 Fig. 3 shows.
//!
//! Quick mode skips the tuning and uses [`tuned`], the full runs' winners at `--seed 1`.
//!
//! # What we find (full runs, `--chains 4`, 10⁶ steps per chain; tables in REPRODUCTION.md)
//!
//! Exploration is bought with temperature: every method visits all five modes once it runs hot
//! enough, and at the checked settings the ordering of Zhang et al. 2017 Fig. 3 is not reproduced —
//! SGNHT (splitting, h = 0.5) visits all five modes with 19–20 switches under either reading of the
//! gradient noise, because it stays accurate at h = 0.5 where the eq. 12 samplers pass the check
//! only at h ≤ 0.02 (per-step noise) or ≤ 0.2 (per-evaluation noise), and the same gradient
//! budget then covers more time. Under per-step noise the a = 2 thermostat's increment
//! −γh∇²K(p) is heavy-tailed and the noise must be absorbed, so the a = 2 samplers run 10–20 %
//! hot at every grid point but a few; with the noise as Zhang et al. 2017 prints it they pass far
//! more often and the checked SGMGT reaches the paper's 3 modes (SGMGT-D 4, the paper 5).
//!
//! # Rice's ceiling: why no kinetic energy can win at the right temperature
//!
//! Cut the plane by the five rays from the centre through the edge midpoints
//! ([`MultiWell::dividing_ray`]); every switch crosses one. For a chain at the right
//! distribution whose position moves with θ̇ = ∇K(p), p ~ e^{−K} independent of θ, Rice's
//! formula gives the expected crossings per unit time exactly: Σ_k ∫ π ds · E|n_k·∇K(p)|
//! ([`NormalSpeeds::crossing_rate`]). Friction, thermostats, noise and resampling only decide
//! how many of those crossings are recrossings, so (simulated time) × this rate caps the
//! expected switches. It depends on the kinetics only through E|n·∇K(p)|: √(2/π) ≈ 0.80 for
//! Gaussian K, and 0.20–0.41 for the a = 2 kinetics of the grid (eq. 12: 0.33 at c = 5, 0.41
//! at c = 10; power softening: 0.20, 0.30, 0.35, 0.41 at c = 1, 2, 3, 5), 25–51 % of the
//! Gaussian's. Two channels fall outside the cap: SGMGT-D's first-order term on θ (estimated by
//! Kramers' formula, [`MultiWell::overdamped_switch_rate`]: σ_θ × 4.6·10⁻⁵ switches per unit
//! time here, against 1.0·10⁻⁵ for the Gaussian kinetics' ceiling) and running hot. Measured
//! (per-step noise): SGNHT at h = 0.5 makes 19 switches against a ceiling of 20.1 — as many as
//! any sampler at the right distribution with Gaussian kinetics can in that simulated time;
//! every exploration-only run but the B̂ variant's makes 291–2027× its ceiling, which no
//! sampler at the right distribution can.
//!
//! # SGMGT-D's first-order term
//!
//! As Zhang et al. 2017 eq. 13 prints it, the θ term −σ_θ∇Ũ carries gradient noise no thermostat
//! absorbs: with per-step noise every σ_θ = 0.3 grid point ran at E\[U\] − U(μ) = 1.30–1.34, σ_θ =
//! 1 at ≈ 2.7. With the correction B̂ = B ([`Method::SgmgtDPowerNoiseEstimate`]) 249 of 288 points
//! pass the check, and the checked run (σ_θ = 0.3, h = 0.5) visits all 5 modes with 24 switches
//! (per-evaluation noise: 21) against SGNHT's 19 (20) — within Poisson error, and carried by the
//! first-order channel (Kramers 27.7 against a kinetic ceiling of 4.10): corrected, SGMGT-D
//! explores like SGNHT, through its Langevin term rather than its kinetics.

use super::common::{
    Dynamics, DynamicsSettings, ExperimentError, Job, Progress, RunOptions, SamplerError, Start,
    all_ok, run_dynamics, sgmgt_params, sig,
};
use crate::diagnostics::DrawCollector;
use crate::models::multi_well::{GradientNoise, MODES, ModeTracker, MultiWell};
use crate::plot::{
    DensityGrid, ScatterPanel, Series, density_scatter_panels, marker_chart, stacked_line_panels,
};
use crate::report::{Table, write_columns};
use rand_pcg::Pcg64;
use sgmcmc::Kinetic;
use sgmcmc::prelude::*;
use std::collections::HashMap;
use std::convert::Infallible;
use std::ops::ControlFlow;
use std::time::Instant;

/// Gradient-noise level B (Ding et al. 2014 §3, Zhang et al. 2017 §4.1).
pub const B: f64 = 1.0;
/// SGMGT's friction rescaling γ (Zhang et al. 2017 §4.1).
pub const GAMMA: f64 = 1.0;
/// Monomial parameter a of SGMGT and SGMGT-D (Zhang et al. 2017 §4.1).
pub const MONOMIAL_A: f64 = 2.0;
/// Chains per grid point in the tuning.
pub const TUNE_CHAINS: usize = 2;
/// Largest relative error of either temperature (mean energy, tail) a tuned setting may have.
pub const TOLERANCE: f64 = 0.1;

/// Steps per tuning chain: half the final run's.
pub fn tune_steps(steps: usize) -> usize {
    steps / 2
}

/// The three samplers of Fig. 3, and SGMGT / SGMGT-D with the power softening
/// ([`MonomialGamma::softened_power`]) instead of Zhang et al. 2017 eq. 12.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// SGNHT (Ding et al. 2014 Alg. 1; Gaussian kinetics, one scalar thermostat, A = 0).
    Sgnht,
    /// SGMGT with a = 2: softened monomial-gamma kinetics, thermostat, resampling of p and ξ.
    Sgmgt,
    /// SGMGT-D with a = 2: SGMGT plus first-order Langevin terms on θ and ξ (σ_θ, σ_ξ > 0).
    SgmgtD,
    /// SGMGT with a = 2 and the power softening K_c = (p² + c^{−4})^{1/4} (not in Zhang et al.
    /// 2017).
    SgmgtPower,
    /// SGMGT-D with a = 2 and the power softening (not in Zhang et al. 2017).
    SgmgtDPower,
    /// SGMGT-D (power) with the gradient-noise estimate B̂ = B for its first-order term on θ
    /// ([`SgmgtParams::with_noise_estimate`]; not in Zhang et al. 2017): the correction that keeps
    /// that term at the right temperature under noisy gradients.
    SgmgtDPowerNoiseEstimate,
}

impl Method {
    /// Fig. 3's order, then the power-softened variants.
    pub const ALL: [Method; 6] = [
        Method::Sgnht,
        Method::Sgmgt,
        Method::SgmgtD,
        Method::SgmgtPower,
        Method::SgmgtDPower,
        Method::SgmgtDPowerNoiseEstimate,
    ];

    /// Label for tables and figures.
    pub fn label(&self) -> &'static str {
        match self {
            Method::Sgnht => "SGNHT",
            Method::Sgmgt => "SGMGT (a = 2)",
            Method::SgmgtD => "SGMGT-D (a = 2)",
            Method::SgmgtPower => "SGMGT (a = 2, power)",
            Method::SgmgtDPower => "SGMGT-D (a = 2, power)",
            Method::SgmgtDPowerNoiseEstimate => "SGMGT-D (a = 2, power, B̂ = B)",
        }
    }

    /// A file-name-safe tag.
    pub fn tag(&self) -> &'static str {
        match self {
            Method::Sgnht => "sgnht",
            Method::Sgmgt => "sgmgt",
            Method::SgmgtD => "sgmgt-d",
            Method::SgmgtPower => "sgmgt-power",
            Method::SgmgtDPower => "sgmgt-d-power",
            Method::SgmgtDPowerNoiseEstimate => "sgmgt-d-power-bhat",
        }
    }

    /// Modes visited in the paper's Fig. 3 (§4.1); `None` for the power-softened variants,
    /// which the paper does not run.
    pub fn paper_modes(&self) -> Option<usize> {
        match self {
            Method::Sgnht => Some(1),
            Method::Sgmgt => Some(3),
            Method::SgmgtD => Some(5),
            Method::SgmgtPower | Method::SgmgtDPower | Method::SgmgtDPowerNoiseEstimate => None,
        }
    }

    /// Whether the kinetic energy is the power softening rather than Zhang et al. 2017 eq. 12.
    pub fn power_softened(&self) -> bool {
        matches!(
            self,
            Method::SgmgtPower | Method::SgmgtDPower | Method::SgmgtDPowerNoiseEstimate
        )
    }

    /// The configuration index of the final run's seeds ([`RunOptions::chain_seed`]): the
    /// original three methods keep the indices they had before the power variants were added
    /// (checked 0–2, exploration-only 3–5), the power variants follow (6–9), and the B̂
    /// variant after them (10–11).
    fn seed_config(&self, criterion: Criterion) -> usize {
        let pos = Method::ALL.iter().position(|x| x == self).unwrap_or(0);
        let crit = usize::from(criterion == Criterion::ExploreOnly);
        match pos {
            0..=2 => 3 * crit + pos,
            3 | 4 => 6 + 2 * crit + (pos - 3),
            _ => 10 + crit,
        }
    }

    /// Whether the sampler exists in `sgmcmc` yet.
    pub fn available(&self) -> bool {
        true
    }
}

/// How a method's settings were picked from the tuning grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Criterion {
    /// Most modes (then switches) among the settings that pass the temperature check.
    Checked,
    /// Most modes (then switches) regardless of temperature — exploration alone, which is all a
    /// figure like Zhang et al. 2017 Fig. 3 shows.
    ExploreOnly,
}

impl Criterion {
    /// Both, the checked one first.
    pub const ALL: [Criterion; 2] = [Criterion::Checked, Criterion::ExploreOnly];

    /// Label for tables.
    pub fn label(&self) -> &'static str {
        match self {
            Criterion::Checked => "temperature-checked",
            Criterion::ExploreOnly => "exploration only",
        }
    }

    /// File-name suffix.
    fn suffix(&self) -> &'static str {
        match self {
            Criterion::Checked => "",
            Criterion::ExploreOnly => "-explore",
        }
    }
}

/// A sampler's tunable settings (the ones a method does not use are ignored).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Step size h.
    pub h: f64,
    /// Softening c of the monomial-gamma kinetics (Zhang et al. 2017 eq. 12, or the power softening
    /// for [`Method::SgmgtPower`] and [`Method::SgmgtDPower`]).
    pub c: f64,
    /// σ_p: injected momentum noise (SGNHT's A).
    pub sigma_p: f64,
    /// σ_θ: first-order Langevin term on θ (SGMGT-D).
    pub sigma_theta: f64,
    /// σ_ξ: first-order Langevin term on ξ (SGMGT-D).
    pub sigma_xi: f64,
    /// Resampling period of p in steps (0: never).
    pub resample_p: usize,
    /// Resampling period of ξ in steps (0: never).
    pub resample_xi: usize,
    /// Euler (Ding et al. 2014 Alg. 1, Zhang et al. 2017's SM) or the symmetric splitting scheme.
    pub integrator: Integrator,
}

impl Settings {
    /// SGNHT with step h and A = 0 (the gradient noise is the only noise, as in Ding et al. 2014
    /// §3).
    pub const fn sgnht(h: f64) -> Self {
        Settings {
            h,
            c: f64::INFINITY,
            sigma_p: 0.0,
            sigma_theta: 0.0,
            sigma_xi: 0.0,
            resample_p: 0,
            resample_xi: 0,
            integrator: Integrator::Euler,
        }
    }

    /// The settings that matter for `method`, as text.
    pub fn describe(&self, method: Method) -> String {
        let scheme = match self.integrator {
            Integrator::Euler => "Euler",
            Integrator::Splitting => "splitting",
        };
        match method {
            Method::Sgnht => format!("h = {}, A = {}, {scheme}", self.h, self.sigma_p),
            Method::Sgmgt | Method::SgmgtPower => format!(
                "h = {}, c = {}, σ_p = {}, T_p = {}, T_ξ = {}, {scheme}",
                self.h, self.c, self.sigma_p, self.resample_p, self.resample_xi
            ),
            Method::SgmgtD | Method::SgmgtDPower | Method::SgmgtDPowerNoiseEstimate => format!(
                "h = {}, c = {}, σ_p = {}, σ_θ = {}, σ_ξ = {}, T_p = {}, T_ξ = {}, {scheme}",
                self.h,
                self.c,
                self.sigma_p,
                self.sigma_theta,
                self.sigma_xi,
                self.resample_p,
                self.resample_xi
            ),
        }
    }
}

/// The settings the full run's tuning chose at `--seed 1` (used directly in quick mode).
///
/// With [`GradientNoise::PerStep`], temperature-checked: no SGMGT grid point passed, and SGMGT's
/// entry is the closest one; the SGMGT-D point passed in the tuning but ran ≈ 18 % hot on the
/// final run's seeds. With [`GradientNoise::PerEvaluation`] every method had passing points.
pub fn tuned(method: Method, criterion: Criterion, noise: GradientNoise) -> Settings {
    use Criterion::{Checked, ExploreOnly};
    use GradientNoise::{PerEvaluation, PerStep};
    use Integrator::{Euler, Splitting};
    let mg = |h, c, sigma_theta, sigma_xi, resample_xi, integrator| Settings {
        h,
        c,
        sigma_p: 1.0,
        sigma_theta,
        sigma_xi,
        resample_p: 100,
        resample_xi,
        integrator,
    };
    let split = |s: Settings| Settings {
        integrator: Splitting,
        ..s
    };
    match (method, criterion, noise) {
        (Method::Sgnht, Checked, _) => split(Settings::sgnht(0.5)),
        (Method::Sgnht, ExploreOnly, _) => split(Settings::sgnht(0.7)),
        (Method::Sgmgt, Checked, PerStep) => mg(0.02, 10.0, 0.0, 0.0, 100, Euler),
        (Method::Sgmgt, Checked, PerEvaluation) => mg(0.1, 5.0, 0.0, 0.0, 100, Splitting),
        (Method::Sgmgt, ExploreOnly, _) => mg(0.5, 5.0, 0.0, 0.0, 0, Splitting),
        (Method::SgmgtD, Checked, PerStep) => mg(0.02, 10.0, 0.01, 0.1, 100, Splitting),
        (Method::SgmgtD, Checked, PerEvaluation) => mg(0.05, 10.0, 1.0, 0.03, 100, Euler),
        (Method::SgmgtD, ExploreOnly, PerStep) => mg(0.5, 10.0, 1.0, 0.03, 100, Splitting),
        (Method::SgmgtD, ExploreOnly, PerEvaluation) => mg(0.5, 10.0, 1.0, 0.1, 0, Splitting),
        (Method::SgmgtPower, Checked, PerStep) => mg(0.3, 2.0, 0.0, 0.0, 0, Splitting),
        (Method::SgmgtPower, Checked, PerEvaluation) => mg(0.3, 2.0, 0.0, 0.0, 100, Euler),
        (Method::SgmgtPower, ExploreOnly, _) => mg(0.5, 5.0, 0.0, 0.0, 100, Euler),
        (Method::SgmgtDPower, Checked, PerStep) => mg(0.5, 3.0, 0.1, 0.01, 0, Euler),
        (Method::SgmgtDPower, Checked, PerEvaluation) => mg(0.5, 2.0, 0.1, 0.03, 0, Euler),
        (Method::SgmgtDPower, ExploreOnly, PerStep) => mg(0.5, 3.0, 1.0, 0.01, 0, Splitting),
        (Method::SgmgtDPower, ExploreOnly, PerEvaluation) => {
            mg(0.5, 5.0, 1.0, 0.03, 100, Splitting)
        }
        (Method::SgmgtDPowerNoiseEstimate, Checked, PerStep) => mg(0.5, 5.0, 0.3, 0.01, 100, Euler),
        (Method::SgmgtDPowerNoiseEstimate, Checked, PerEvaluation) => {
            mg(0.3, 2.0, 0.4, 0.01, 0, Splitting)
        }
        (Method::SgmgtDPowerNoiseEstimate, ExploreOnly, _) => mg(0.5, 5.0, 0.1, 0.01, 0, Splitting),
    }
}

/// The tuning grid of `method`, every point with both integrators (Euler, the paper's; and the
/// symmetric splitting scheme): SGNHT over h ∈ {0.05, 0.1, 0.2, 0.3, 0.5, 0.7}; SGMGT over
/// h ∈ {0.02, 0.05, 0.1, 0.2, 0.3, 0.5} × c ∈ {5, 10} × T_ξ ∈ {100 (the paper's), 0 (never)};
/// SGMGT-D also over σ_θ ∈ {0.01, 0.1} × σ_ξ ∈ {0.03, 0.1, 0.3}. The power-softened variants
/// use the same h and T_ξ but c ∈ {1, 2, 3, 5} (the thermostat's largest step γ h c³/2 is
/// ≤ 1 for c = 1 at every h, c = 2 up to h = 0.2, c = 3 up to h = 0.05, and > 1 for c = 5
/// everywhere), SGMGT-D (power) with σ_θ ∈ {0.01, 0.1} × σ_ξ ∈ {0.01, 0.03}. σ_p = 1 (the
/// sampler's default) and T_p = 100 (the paper's) throughout.
pub fn tuning_grid(method: Method) -> Vec<Settings> {
    const H: [f64; 6] = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5];
    const C: [f64; 2] = [5.0, 10.0];
    const C_POWER: [f64; 4] = [1.0, 2.0, 3.0, 5.0];
    const T_XI: [usize; 2] = [100, 0];
    let base = |h, c, t_xi| Settings {
        h,
        c,
        sigma_p: 1.0,
        sigma_theta: 0.0,
        sigma_xi: 0.0,
        resample_p: 100,
        resample_xi: t_xi,
        integrator: Integrator::Euler,
    };
    let mut out = Vec::new();
    match method {
        // Its whole grid is appended after everything else (`tuning_grid_extension`).
        Method::SgmgtDPowerNoiseEstimate => {}
        Method::Sgnht => {
            out.extend([0.05, 0.1, 0.2, 0.3, 0.5, 0.7].map(Settings::sgnht));
        }
        Method::Sgmgt => {
            for h in H {
                for c in C {
                    for t in T_XI {
                        out.push(base(h, c, t));
                    }
                }
            }
        }
        Method::SgmgtPower => {
            for h in H {
                for c in C_POWER {
                    for t in T_XI {
                        out.push(base(h, c, t));
                    }
                }
            }
        }
        Method::SgmgtDPower => {
            for h in H {
                for c in C_POWER {
                    for t in T_XI {
                        for sigma_theta in [0.01, 0.1] {
                            for sigma_xi in [0.01, 0.03] {
                                out.push(Settings {
                                    sigma_theta,
                                    sigma_xi,
                                    ..base(h, c, t)
                                });
                            }
                        }
                    }
                }
            }
        }
        Method::SgmgtD => {
            for h in H {
                for c in C {
                    for t in T_XI {
                        for sigma_theta in [0.01, 0.1] {
                            for sigma_xi in [0.03, 0.1, 0.3] {
                                out.push(Settings {
                                    sigma_theta,
                                    sigma_xi,
                                    ..base(h, c, t)
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    let split: Vec<Settings> = out
        .iter()
        .map(|s| Settings {
            integrator: Integrator::Splitting,
            ..*s
        })
        .collect();
    out.extend(split);
    out
}

/// Larger first-order terms on θ for SGMGT-D and SGMGT-D (power), σ_θ ∈ {0.3, 1}, over the
/// rest of their [`tuning_grid`] (empty for the other methods), both integrators. Added after the
/// Rice ceiling showed that the first-order channel, not the kinetics, carries SGMGT-D's extra
/// switches; the tuning runs these points after every method's base grid, so the base points keep
/// their seeds.
pub fn tuning_grid_extension(method: Method) -> Vec<Settings> {
    let sigmas_xi: &[f64] = match method {
        Method::SgmgtD => &[0.03, 0.1, 0.3],
        Method::SgmgtDPower => &[0.01, 0.03],
        Method::SgmgtDPowerNoiseEstimate => return noise_estimate_grid(),
        _ => return Vec::new(),
    };
    let mut out: Vec<Settings> = tuning_grid(method)
        .into_iter()
        .filter(|s| s.sigma_theta == 0.01 && sigmas_xi.contains(&s.sigma_xi))
        .flat_map(|s| [0.3, 1.0].map(|sigma_theta| Settings { sigma_theta, ..s }))
        .collect();
    out.dedup();
    out
}

/// The factor on θ's velocity ∇K(p): 1 − 2σ_θB̂ for [`Method::SgmgtDPowerNoiseEstimate`]
/// ([`SgmgtParams::with_noise_estimate`]), 1 for the others. Rice's ceiling scales with it.
pub fn velocity_scale(method: Method, settings: &Settings, noise: GradientNoise) -> f64 {
    if method == Method::SgmgtDPowerNoiseEstimate {
        1.0 - 2.0 * settings.sigma_theta * noise.sghmc_b(settings.h, B)
    } else {
        1.0
    }
}

/// The grid of [`Method::SgmgtDPowerNoiseEstimate`]: h ∈ {0.02 … 0.5} × c ∈ {2, 3, 5} ×
/// T_ξ ∈ {100, off} × σ_θ ∈ {0.1, 0.2, 0.3, 0.4} (2σ_θB̂ < 1 with B̂ ≤ 1), σ_ξ = 0.01, both
/// integrators. It has no base grid, so it runs after the extensions and moves no other seed.
fn noise_estimate_grid() -> Vec<Settings> {
    let mut out = Vec::new();
    for integrator in [Integrator::Euler, Integrator::Splitting] {
        for h in [0.02, 0.05, 0.1, 0.2, 0.3, 0.5] {
            for c in [2.0, 3.0, 5.0] {
                for resample_xi in [100, 0] {
                    for sigma_theta in [0.1, 0.2, 0.3, 0.4] {
                        out.push(Settings {
                            h,
                            c,
                            sigma_p: 1.0,
                            sigma_theta,
                            sigma_xi: 0.01,
                            resample_p: 100,
                            resample_xi,
                            integrator,
                        });
                    }
                }
            }
        }
    }
    out
}

/// What one chain produced.
#[derive(Clone, Debug)]
pub struct ChainRun {
    /// Modes visited, switches, time per mode.
    pub tracker: ModeTracker,
    /// Mean of U(θ) − U(μ) over all steps (the potential temperature; ≈ 1 at equilibrium).
    pub potential_temperature: f64,
    /// The tail temperature of the time outside every basin ([`MultiWell::tail_temperature`]).
    pub tail_temperature: f64,
    /// Mean thermostat value over the second half.
    pub mean_xi: f64,
    /// (step, θ₁, θ₂) every `thin` steps.
    pub draws: Vec<(usize, f64, f64)>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// What a chain records as it runs (an [`Observer`] of both samplers).
struct ChainObserver<'m> {
    model: &'m MultiWell,
    u_min: f64,
    steps: usize,
    tracker: ModeTracker,
    draws: DrawCollector,
    sum_u: f64,
    sum_xi: f64,
}

impl<S: ChainState<f64>> Observer<S, f64> for ChainObserver<'_> {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let th = sampler.position();
        self.tracker.observe(self.model.mode_of(th));
        self.sum_u += self.model.potential(th) - self.u_min;
        if step as usize >= self.steps / 2 {
            self.sum_xi += stats.thermostat.unwrap_or(0.0);
        }
        let ControlFlow::Continue(()) = self.draws.observe(step, sampler, stats);
        ControlFlow::Continue(())
    }
}

/// The stream of a chain's sampler random numbers.
const STREAM: u128 = 0x3a11;

/// Runs one chain of `method` for `job.steps` steps from μ₁, keeping every `thin`-th draw.
pub fn run_chain(
    model: &MultiWell,
    (method, settings): (Method, &Settings),
    noise: GradientNoise,
    thin: usize,
    job: Job,
) -> Result<ChainRun, ExperimentError> {
    let (steps, seed, pb) = (job.steps, job.seed, job.pb);
    let named = |e: SamplerError| e.named(method.label());
    let clock = Instant::now();
    let mut grad = model.noisy_gradient(settings.h, B, noise, seed ^ 0x5eed_3a11);
    let thin = thin.max(1);
    let mut obs = ChainObserver {
        model,
        u_min: model.potential(&model.means()[0]),
        steps,
        tracker: ModeTracker::new(),
        draws: DrawCollector::new(2)
            .thin(thin)
            .with_capacity(steps / thin + 1),
        sum_u: 0.0,
        sum_xi: 0.0,
    };
    let mut observer = Progress::new(pb, &mut obs);
    match method {
        Method::Sgnht => {
            let mut start = Start::new(&model.means()[0], seed, STREAM);
            let s = DynamicsSettings::new(settings.h, settings.sigma_p, settings.integrator);
            run_dynamics(
                (Dynamics::Sgnht, s),
                &mut start,
                &mut grad,
                steps,
                &mut observer,
            )
            .map_err(named)?;
        }
        Method::Sgmgt
        | Method::SgmgtD
        | Method::SgmgtPower
        | Method::SgmgtDPower
        | Method::SgmgtDPowerNoiseEstimate => {
            // B̂ in SGHMC's units, B = ½hV for noise of variance V per evaluation.
            let b_hat = if method == Method::SgmgtDPowerNoiseEstimate {
                noise.sghmc_b(settings.h, B)
            } else {
                0.0
            };
            let kinetic = if method.power_softened() {
                MonomialGamma::softened_power(MONOMIAL_A, settings.c)
            } else {
                MonomialGamma::softened(MONOMIAL_A, settings.c)
            };
            let params = sgmgt_params(
                (settings.h, kinetic, settings.integrator),
                (settings.sigma_p, settings.sigma_theta, settings.sigma_xi),
                (settings.resample_p as u32, settings.resample_xi as u32),
            )
            .with_gamma(GAMMA)
            .with_noise_estimate(b_hat);
            let mut rng = Pcg64::new(seed as u128, STREAM);
            let mut theta = model.means()[0];
            let (mut p, mut xi, mut work) = ([0.0; 2], [0.0; 2], [0.0; 6]);
            let mut smp = Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work)
                .map_err(|e| named(e.into()))?;
            smp.resample_momentum(&mut rng);
            smp.run(&mut grad, &mut rng, steps as u64, &mut observer)
                .map_err(|e| named(e.into()))?;
        }
    }
    drop(observer);
    let n = steps.max(1) as f64;
    let tail_temperature = obs.model.tail_temperature(obs.tracker.outside as f64 / n);
    Ok(ChainRun {
        tracker: obs.tracker,
        potential_temperature: obs.sum_u / n,
        tail_temperature,
        mean_xi: obs.sum_xi / (steps - steps / 2).max(1) as f64,
        draws: obs
            .draws
            .rows()
            .enumerate()
            .map(|(i, th)| (i * thin, th[0], th[1]))
            .collect(),
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// Draws behind each Monte Carlo E|n·∇K(p)| of [`NormalSpeeds`].
pub const SPEED_DRAWS: usize = 1_000_000;

/// E|n·∇K(p)| for p from a kinetic energy's marginal exp(−K), for unit vectors n; cached per
/// kinetic energy (the only thing it depends on).
///
/// For SGNHT's Gaussian kinetics ∇K(p) = p is N(0, I), so n·p ~ N(0, 1) and E|n·p| = √(2/π)
/// exactly. The monomial-gamma kinetics act coordinate-wise, v = (K′(p₁), K′(p₂)) with p₁, p₂
/// independent, and E|n₁v₁ + n₂v₂| depends on the direction; it is estimated from
/// [`SPEED_DRAWS`] exact draws of p (the kinetics' own sampler, fixed seed), the same draws for
/// every n.
#[derive(Debug, Default)]
pub struct NormalSpeeds {
    cache: HashMap<(bool, u64), Vec<[f64; 2]>>,
}

impl NormalSpeeds {
    /// (E|n·∇K(p)|, its Monte Carlo standard error; 0 when exact) for `method`'s kinetics.
    pub fn mean_normal_speed(
        &mut self,
        method: Method,
        settings: &Settings,
        n: [f64; 2],
    ) -> (f64, f64) {
        if method == Method::Sgnht {
            return ((2.0 / std::f64::consts::PI).sqrt(), 0.0);
        }
        let power = method.power_softened();
        let velocities = self
            .cache
            .entry((power, settings.c.to_bits()))
            .or_insert_with(|| {
                let k = if power {
                    MonomialGamma::softened_power(MONOMIAL_A, settings.c)
                } else {
                    MonomialGamma::softened(MONOMIAL_A, settings.c)
                };
                // Settings come from the grid, whose c are all valid; an invalid one gives no
                // draws and hence a NaN speed, which the report shows as such.
                if k.validate().is_err() {
                    return Vec::new();
                }
                let mut rng = Pcg64::new(0x005e_ed0f_5eed, 0x0ce1);
                (0..SPEED_DRAWS)
                    .map(|_| {
                        let p1: f64 = k.sample(0, &mut rng);
                        let p2: f64 = k.sample(1, &mut rng);
                        [k.gradient(0, p1), k.gradient(1, p2)]
                    })
                    .collect()
            });
        if velocities.is_empty() {
            return (f64::NAN, f64::NAN);
        }
        let m = velocities.len() as f64;
        let (mut s1, mut s2) = (0.0, 0.0);
        for v in velocities.iter() {
            let x = (n[0] * v[0] + n[1] * v[1]).abs();
            s1 += x;
            s2 += x * x;
        }
        let mean = s1 / m;
        (mean, ((s2 / m - mean * mean).max(0.0) / m).sqrt())
    }

    /// Rice's formula for the expected number of crossings of the five dividing rays
    /// ([`MultiWell::dividing_ray`]) per unit of simulated time, by a stationary chain whose
    /// position moves with velocity ∇K(p), p ~ exp(−K) independent of θ:
    /// Σ_k ∫ p ds along ray k · E|n_k·∇K(p)|.
    ///
    /// Every mode switch needs a ray crossing, so for any sampler that samples the right
    /// distribution this rate times h · steps caps its expected switches — whatever its
    /// friction, thermostat, noise or resampling, which only decide how many crossings are
    /// recrossings. Two things fall outside the cap: SGMGT-D's first-order term
    /// √(2σ_θ) dW on θ (Brownian paths have no velocity; the cap covers the ∇K transport
    /// only), and a chain that is too hot (more density on the rays than p has).
    pub fn crossing_rate(&mut self, model: &MultiWell, method: Method, settings: &Settings) -> f64 {
        (0..MODES)
            .map(|k| {
                let (_, n) = model.dividing_ray(k);
                model.dividing_ray_density(k) * self.mean_normal_speed(method, settings, n).0
            })
            .sum()
    }
}

/// One method's final run.
#[derive(Clone, Debug)]
pub struct MethodRun {
    /// The method.
    pub method: Method,
    /// How its settings were picked.
    pub criterion: Criterion,
    /// Its (tuned) settings.
    pub settings: Settings,
    /// One entry per chain.
    pub chains: Vec<ChainRun>,
    /// All chains' counts added.
    pub pooled: ModeTracker,
    /// The tail temperature of all chains' time outside every basin
    /// ([`MultiWell::tail_temperature`]).
    pub tail_temperature: f64,
    /// Rice's ceiling on the switches of all chains together ([`NormalSpeeds::crossing_rate`] ×
    /// simulated time h · steps · chains).
    pub crossing_ceiling: f64,
    /// The expected switches of all chains through SGMGT-D's first-order term alone (σ_θ ×
    /// [`MultiWell::overdamped_switch_rate`] × simulated time; 0 without it): an estimate of
    /// the channel the ceiling leaves out.
    pub overdamped_switches: f64,
}

impl MethodRun {
    /// Distinct modes visited by all chains together.
    pub fn modes_visited(&self) -> usize {
        self.pooled.modes_visited()
    }
    /// Modes visited by each chain.
    pub fn per_chain_modes(&self) -> Vec<usize> {
        self.chains
            .iter()
            .map(|c| c.tracker.modes_visited())
            .collect()
    }
    /// Mode switches, all chains.
    pub fn switches(&self) -> u64 {
        self.pooled.switches
    }
    /// Mean potential temperature over chains.
    pub fn potential_temperature(&self) -> f64 {
        self.chains
            .iter()
            .map(|c| c.potential_temperature)
            .sum::<f64>()
            / self.chains.len().max(1) as f64
    }
}

/// One grid point of the tuning.
#[derive(Clone, Debug)]
pub struct TuneRow {
    /// The method.
    pub method: Method,
    /// The grid point.
    pub settings: Settings,
    /// Mean over the tuning chains of the modes each visited.
    pub modes_per_chain: f64,
    /// Switches, all tuning chains.
    pub switches: u64,
    /// Mean potential temperature.
    pub potential_temperature: f64,
    /// Tail temperature of the time outside every basin, all tuning chains.
    pub tail_temperature: f64,
    /// Both temperatures within 10 % of the truth's (false if a chain failed).
    pub accurate: bool,
    /// The sampler stopped (non-finite state).
    pub failed: bool,
    /// Rice's ceiling on the switches of all tuning chains together
    /// ([`NormalSpeeds::crossing_rate`]).
    pub crossing_ceiling: f64,
    /// Chosen for the final run.
    pub chosen: bool,
    /// The most modes (then switches) of this method's grid, ignoring the temperature check:
    /// what "the best result" would be if exploration alone counted.
    pub best_any: bool,
}

/// The experiment's results.
#[derive(Clone, Debug)]
pub struct MultiWellResult {
    /// The reading of the gradient noise the run used.
    pub noise: GradientNoise,
    /// One entry per available method, in [`Method::ALL`] order.
    pub runs: Vec<MethodRun>,
    /// The tuning grid (empty in quick mode).
    pub tuning: Vec<TuneRow>,
    /// True basin masses.
    pub true_masses: [f64; MODES],
    /// True potential temperature E\[U\] − U(μ).
    pub true_temperature: f64,
    /// True tail temperature (of the exact mass outside every basin).
    pub true_tail_temperature: f64,
    /// Steps (gradient evaluations) per chain.
    pub steps: usize,
    /// Barrier between neighbouring modes.
    pub barrier: f64,
    /// Wall-clock seconds of the whole experiment.
    pub seconds: f64,
}

/// Steps per chain: 10⁶ (quick: 10⁵).
pub fn steps_for(opts: &RunOptions) -> usize {
    if opts.quick { 100_000 } else { 1_000_000 }
}

/// The settings each method runs with.
type Chosen = Vec<(Method, Criterion, Settings)>;

/// The settings' distance from the truth: the larger relative error of the two temperatures.
fn temperature_error(t: f64, tail: f64, truth: (f64, f64)) -> f64 {
    ((t - truth.0) / truth.0)
        .abs()
        .max(((tail - truth.1) / truth.1).abs())
}

fn tune(
    model: &MultiWell,
    opts: &RunOptions,
    noise: GradientNoise,
    steps: usize,
    truth: (f64, f64),
) -> Result<(Vec<TuneRow>, Chosen), ExperimentError> {
    let points: Vec<(Method, Settings)> = Method::ALL
        .into_iter()
        .filter(Method::available)
        .flat_map(|m| tuning_grid(m).into_iter().map(move |s| (m, s)))
        .chain(
            Method::ALL
                .into_iter()
                .filter(Method::available)
                .flat_map(|m| tuning_grid_extension(m).into_iter().map(move |s| (m, s))),
        )
        .collect();
    // Seeds disjoint from the final run's (configurations 1000 + k).
    let tune_opts = RunOptions {
        chains: TUNE_CHAINS,
        ..opts.clone()
    };
    let outs = tune_opts.par_chains(&points, steps, "multi-well tuning", |k, &(m, s), c, pb| {
        let seed = opts.chain_seed(1000 + k, c);
        run_chain(model, (m, &s), noise, steps, Job { steps, seed, pb })
    });
    let mut rows = Vec::new();
    let mut speeds = NormalSpeeds::default();
    for (&(method, settings), chains) in points.iter().zip(outs) {
        let failed = chains.iter().any(Result::is_err);
        let ok: Vec<ChainRun> = chains.into_iter().filter_map(Result::ok).collect();
        let n = ok.len().max(1) as f64;
        let temp = ok.iter().map(|c| c.potential_temperature).sum::<f64>() / n;
        let outside: u64 = ok.iter().map(|c| c.tracker.outside).sum();
        let total: u64 = ok.iter().map(|c| c.tracker.steps()).sum();
        let tail = model.tail_temperature(outside as f64 / total.max(1) as f64);
        rows.push(TuneRow {
            method,
            settings,
            modes_per_chain: ok
                .iter()
                .map(|c| c.tracker.modes_visited() as f64)
                .sum::<f64>()
                / n,
            switches: ok.iter().map(|c| c.tracker.switches).sum(),
            potential_temperature: temp,
            tail_temperature: tail,
            accurate: !failed && temperature_error(temp, tail, truth) <= TOLERANCE,
            failed,
            crossing_ceiling: speeds.crossing_rate(model, method, &settings)
                * velocity_scale(method, &settings, noise)
                * settings.h
                * (steps * TUNE_CHAINS) as f64,
            chosen: false,
            best_any: false,
        });
    }
    let explores = |a: &&TuneRow, b: &&TuneRow| {
        a.modes_per_chain
            .total_cmp(&b.modes_per_chain)
            .then(a.switches.cmp(&b.switches))
    };
    let mut chosen = Vec::new();
    for m in Method::ALL.into_iter().filter(Method::available) {
        let of = |i: &usize| rows[*i].method == m;
        let idx: Vec<usize> = (0..rows.len()).filter(of).collect();
        let accurate = idx
            .iter()
            .copied()
            .filter(|&i| rows[i].accurate)
            .max_by(|&a, &b| explores(&&rows[a], &&rows[b]));
        // No accurate point: the one closest to the true temperature (flagged in the report).
        let closest = idx
            .iter()
            .copied()
            .filter(|&i| !rows[i].failed)
            .min_by(|&a, &b| {
                let e = |i: usize| {
                    temperature_error(
                        rows[i].potential_temperature,
                        rows[i].tail_temperature,
                        truth,
                    )
                };
                e(a).total_cmp(&e(b))
            });
        let any = idx
            .iter()
            .copied()
            .filter(|&i| !rows[i].failed)
            .max_by(|&a, &b| explores(&&rows[a], &&rows[b]));
        if let Some(i) = any {
            rows[i].best_any = true;
        }
        let settings = match accurate.or(closest) {
            Some(i) => {
                rows[i].chosen = true;
                rows[i].settings
            }
            None => tuned(m, Criterion::Checked, noise),
        };
        chosen.push((m, Criterion::Checked, settings));
        let explore = any.map_or(tuned(m, Criterion::ExploreOnly, noise), |i| {
            rows[i].settings
        });
        chosen.push((m, Criterion::ExploreOnly, explore));
    }
    Ok((rows, chosen))
}

/// Runs the experiment with the default gradient noise ([`GradientNoise::PerStep`]).
pub fn run(opts: &RunOptions) -> Result<MultiWellResult, ExperimentError> {
    run_with_noise(opts, GradientNoise::PerStep)
}

/// Runs the experiment with the given reading of the gradient noise, writes CSVs and figures
/// into `opts.out`, returns the numbers.
pub fn run_with_noise(
    opts: &RunOptions,
    noise: GradientNoise,
) -> Result<MultiWellResult, ExperimentError> {
    opts.prepare()?;
    let start = Instant::now();
    let model = MultiWell::standard();
    let steps = steps_for(opts);
    let true_temperature = model.mean_potential() - model.potential(&model.means()[0]);
    let true_masses = model.basin_masses();
    let true_tail_temperature = model.tail_temperature(1.0 - true_masses.iter().sum::<f64>());
    let truth = (true_temperature, true_tail_temperature);
    let (tuning, mut chosen) = if opts.quick {
        (
            Vec::new(),
            Method::ALL
                .into_iter()
                .filter(Method::available)
                .flat_map(|m| Criterion::ALL.map(|c| (m, c, tuned(m, c, noise))))
                .collect(),
        )
    } else {
        tune(&model, opts, noise, tune_steps(steps), truth)?
    };
    // Checked runs first, then the exploration-only ones, each in Fig. 3's order.
    chosen.sort_by_key(|&(m, c, _)| {
        (
            c != Criterion::Checked,
            Method::ALL.iter().position(|x| *x == m),
        )
    });
    let thin = (steps / 10_000).max(1);
    let outs = opts.par_chains(&chosen, steps, "multi-well", |_, &(m, crit, s), c, pb| {
        let seed = opts.chain_seed(m.seed_config(crit), c);
        run_chain(&model, (m, &s), noise, thin, Job { steps, seed, pb })
    });
    let mut speeds = NormalSpeeds::default();
    let overdamped_rate = model.overdamped_switch_rate();
    let mut runs = Vec::new();
    for (&(method, criterion, settings), chains) in chosen.iter().zip(all_ok(outs)?) {
        let mut pooled = ModeTracker::new();
        for c in &chains {
            pooled.merge(&c.tracker);
        }
        let tail_temperature =
            model.tail_temperature(pooled.outside as f64 / pooled.steps().max(1) as f64);
        runs.push(MethodRun {
            method,
            criterion,
            settings,
            chains,
            pooled,
            tail_temperature,
            crossing_ceiling: speeds.crossing_rate(&model, method, &settings)
                * velocity_scale(method, &settings, noise)
                * settings.h
                * (steps * opts.chains) as f64,
            overdamped_switches: overdamped_rate
                * settings.sigma_theta
                * settings.h
                * (steps * opts.chains) as f64,
        });
    }
    let result = MultiWellResult {
        noise,
        runs,
        tuning,
        true_masses,
        true_temperature,
        true_tail_temperature,
        steps,
        barrier: model.barrier(0, 1),
        seconds: start.elapsed().as_secs_f64(),
    };
    write_outputs(&model, opts, &result)?;
    Ok(result)
}

fn write_outputs(
    model: &MultiWell,
    opts: &RunOptions,
    r: &MultiWellResult,
) -> Result<(), ExperimentError> {
    table(r).write_csv(&opts.out.join("multi-well.csv"))?;
    per_chain_table(r).write_csv(&opts.out.join("multi-well-chains.csv"))?;
    occupancy_table(r).write_csv(&opts.out.join("multi-well-occupancy.csv"))?;
    if !r.tuning.is_empty() {
        tuning_table(r).write_csv(&opts.out.join("multi-well-tuning.csv"))?;
        tuning_figure(r, &opts.out.join("multi-well-tuning.png"))?;
    }
    // Thinned draws, one file per run: step, chain, θ₁, θ₂, mode (0 = none, else 1..5).
    for run in &r.runs {
        let mut cols: [Vec<f64>; 5] = Default::default();
        for (c, ch) in run.chains.iter().enumerate() {
            for &(t, x, y) in &ch.draws {
                cols[0].push(t as f64);
                cols[1].push(c as f64);
                cols[2].push(x);
                cols[3].push(y);
                cols[4].push(model.mode_of(&[x, y]).map_or(0.0, |k| (k + 1) as f64));
            }
        }
        write_columns(
            &opts.out.join(format!(
                "multi-well-draws-{}{}.csv",
                run.method.tag(),
                run.criterion.suffix()
            )),
            &["step", "chain", "theta1", "theta2", "mode"],
            &[&cols[0], &cols[1], &cols[2], &cols[3], &cols[4]],
        )?;
    }
    for criterion in Criterion::ALL {
        let runs: Vec<&MethodRun> = r.runs.iter().filter(|x| x.criterion == criterion).collect();
        if !runs.is_empty() {
            figures(model, opts, r, criterion, &runs)?;
        }
    }
    Ok(())
}

/// The heat map of the truth with each method's pooled thinned draws on top (Zhang et al. 2017 Fig.
/// 3 left) and the θ₁ trace plots of chain 1 (Fig. 3 right), for the runs of one criterion.
fn figures(
    model: &MultiWell,
    opts: &RunOptions,
    r: &MultiWellResult,
    criterion: Criterion,
    runs: &[&MethodRun],
) -> Result<(), ExperimentError> {
    let (lo, hi) = (-12.0, 12.0);
    let grid = model.density_grid(lo, hi, 240);
    // Mode numbers just outside each mode, away from the centre.
    let labels: Vec<((f64, f64), String)> = model
        .means()
        .iter()
        .enumerate()
        .map(|(k, m)| ((m[0] * 1.42 - 0.3, m[1] * 1.42 + 0.5), format!("{}", k + 1)))
        .collect();
    let clouds: Vec<Vec<(f64, f64)>> = runs
        .iter()
        .map(|run| {
            run.chains
                .iter()
                .flat_map(|c| c.draws.iter().map(|&(_, x, y)| (x, y)))
                .collect()
        })
        .collect();
    let mut panels = vec![ScatterPanel {
        title: format!("true density (5 modes, barriers {:.1})", r.barrier),
        points: &[],
        color: 0,
    }];
    for (run, cloud) in runs.iter().zip(&clouds) {
        panels.push(ScatterPanel {
            title: format!(
                "{}: {} mode(s), {} switches, T ≈ {}",
                run.method.label(),
                run.modes_visited(),
                run.switches(),
                sig(run.tail_temperature, 2)
            ),
            points: cloud,
            color: 2,
        });
    }
    let chains = runs.first().map_or(0, |x| x.chains.len());
    density_scatter_panels(
        &opts
            .out
            .join(format!("multi-well-samples{}.png", criterion.suffix())),
        &format!(
            "Multi-well, {}, noise {}: {} steps × {chains} chains; T = tail temp.",
            criterion.label(),
            r.noise.short_label(),
            r.steps
        ),
        DensityGrid {
            lo,
            hi,
            values: &grid,
            labels: &labels,
        },
        &panels,
        2,
    )?;
    // Trace plots of θ₁ (chain 1), with the modes' θ₁ as dashed lines.
    let refs: Vec<Series> = model
        .means()
        .iter()
        .map(|m| Series {
            label: String::new(),
            points: vec![(0.0, m[0]), (r.steps as f64, m[0])],
            color: 0,
            dashed: true,
        })
        .collect();
    let trace_panels: Vec<(String, Vec<Series>)> = runs
        .iter()
        .map(|run| {
            let pts: Vec<(f64, f64)> = run.chains[0]
                .draws
                .iter()
                .map(|&(t, x, _)| (t as f64, x))
                .collect();
            let mut s = refs.clone();
            s.push(Series::new(run.method.label(), pts, 1));
            (
                format!(
                    "{} ({})",
                    run.method.label(),
                    run.settings.describe(run.method)
                ),
                s,
            )
        })
        .collect();
    stacked_line_panels(
        &opts
            .out
            .join(format!("multi-well-traces{}.png", criterion.suffix())),
        &format!(
            "Multi-well, {}, noise {}: θ₁ of chain 1; dashed: the modes' θ₁",
            criterion.label(),
            r.noise.short_label()
        ),
        "iteration (= gradient evaluations)",
        "θ₁",
        &trace_panels,
    )?;
    Ok(())
}

/// Exploration against accuracy: every grid point's switches against its tail temperature.
fn tuning_figure(r: &MultiWellResult, path: &std::path::Path) -> Result<(), ExperimentError> {
    let x_range = (0.5, 2.0);
    let series: Vec<Series> = Method::ALL
        .iter()
        .enumerate()
        .map(|(k, m)| {
            Series::new(
                m.label(),
                r.tuning
                    .iter()
                    .filter(|t| t.method == *m && !t.failed)
                    .map(|t| {
                        (
                            t.tail_temperature,
                            1.0 + t.switches as f64 / TUNE_CHAINS as f64,
                        )
                    })
                    .collect(),
                k + 1,
            )
        })
        .collect();
    let off = r
        .tuning
        .iter()
        .filter(|t| t.failed || !(x_range.0..=x_range.1).contains(&t.tail_temperature))
        .count();
    marker_chart(
        path,
        &format!(
            "Tuning: switches vs tail temperature ({off} of {} points off the chart)",
            r.tuning.len(),
        ),
        ("tail temperature (truth ≈ 1)", "1 + switches per chain"),
        x_range,
        true,
        &series,
        &[
            (1.0 - TOLERANCE) * r.true_tail_temperature,
            (1.0 + TOLERANCE) * r.true_tail_temperature,
        ],
    )?;
    Ok(())
}

/// method | tuned for | modes visited (ours) | paper | switches, plus the temperatures and the
/// settings.
pub fn table(r: &MultiWellResult) -> Table {
    let mut t = Table::new([
        "method",
        "tuned for",
        "modes visited (ours, pooled)",
        "per chain",
        "paper",
        "switches",
        "Rice ceiling",
        "switches / ceiling",
        "σ_θ channel (Kramers)",
        "E[U] − U(μ)",
        "tail T",
        "settings",
    ]);
    for run in &r.runs {
        t.row([
            run.method.label().to_string(),
            run.criterion.label().to_string(),
            run.modes_visited().to_string(),
            run.per_chain_modes()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" "),
            run.method
                .paper_modes()
                .map_or("–".into(), |m| m.to_string()),
            run.switches().to_string(),
            sig(run.crossing_ceiling, 3),
            sig(run.switches() as f64 / run.crossing_ceiling, 3),
            sig(run.overdamped_switches, 3),
            sig(run.potential_temperature(), 3),
            sig(run.tail_temperature, 3),
            run.settings.describe(run.method),
        ]);
    }
    t
}

/// Per chain: modes, switches, time per mode, temperature, mean ξ, seconds.
pub fn per_chain_table(r: &MultiWellResult) -> Table {
    let mut header = vec![
        "method".to_string(),
        "tuned for".into(),
        "chain".into(),
        "modes visited".into(),
        "switches".into(),
    ];
    header.extend((1..=MODES).map(|k| format!("time in mode {k}")));
    header.extend([
        "time outside".into(),
        "E[U] − U(μ)".into(),
        "tail T".into(),
        "mean ξ (2nd half)".into(),
        "seconds".into(),
    ]);
    let mut t = Table::new(header);
    for run in &r.runs {
        for (c, ch) in run.chains.iter().enumerate() {
            let n = ch.tracker.steps().max(1) as f64;
            let mut row = vec![
                run.method.label().to_string(),
                run.criterion.label().to_string(),
                (c + 1).to_string(),
                ch.tracker.modes_visited().to_string(),
                ch.tracker.switches.to_string(),
            ];
            row.extend(ch.tracker.fractions().iter().map(|f| format!("{f:.4}")));
            row.push(format!("{:.4}", ch.tracker.outside as f64 / n));
            row.push(sig(ch.potential_temperature, 4));
            row.push(sig(ch.tail_temperature, 4));
            row.push(sig(ch.mean_xi, 4));
            row.push(format!("{:.2}", ch.seconds));
            t.row(row);
        }
    }
    t
}

/// Pooled time in each mode against its true mass.
pub fn occupancy_table(r: &MultiWellResult) -> Table {
    let mut header = vec!["method".to_string(), "tuned for".into()];
    header.extend((1..=MODES).map(|k| format!("mode {k}")));
    header.push("outside".into());
    let mut t = Table::new(header);
    let mut truth = vec!["true mass".to_string(), String::new()];
    truth.extend(r.true_masses.iter().map(|m| format!("{m:.4}")));
    truth.push(format!("{:.4}", 1.0 - r.true_masses.iter().sum::<f64>()));
    t.row(truth);
    for run in &r.runs {
        let n = run.pooled.steps().max(1) as f64;
        let mut row = vec![
            run.method.label().to_string(),
            run.criterion.label().to_string(),
        ];
        row.extend(run.pooled.fractions().iter().map(|f| format!("{f:.4}")));
        row.push(format!("{:.4}", run.pooled.outside as f64 / n));
        t.row(row);
    }
    t
}

/// The tuning grid with what each point did.
pub fn tuning_table(r: &MultiWellResult) -> Table {
    let mut t = Table::new([
        "method",
        "settings",
        "modes per chain",
        "switches",
        "Rice ceiling",
        "E[U] − U(μ)",
        "tail T",
        "both within 10 %",
        "chosen",
        "most modes (any T)",
    ]);
    for row in &r.tuning {
        t.row([
            row.method.label().to_string(),
            row.settings.describe(row.method),
            sig(row.modes_per_chain, 3),
            row.switches.to_string(),
            sig(row.crossing_ceiling, 3),
            if row.failed {
                "failed".into()
            } else {
                sig(row.potential_temperature, 3)
            },
            if row.failed {
                "failed".into()
            } else {
                sig(row.tail_temperature, 3)
            },
            if row.accurate { "yes" } else { "no" }.into(),
            if row.chosen { "*" } else { "" }.into(),
            if row.best_any { "+" } else { "" }.into(),
        ]);
    }
    t
}

/// The text the CLI prints: the main table, the occupancy table and a summary of the tuning.
pub fn report(r: &MultiWellResult, opts: &RunOptions) -> String {
    let mut s = format!(
        "Multi-well (Zhang et al. 2017 §4.1, Fig. 3): 5 unit Gaussians on a pentagon of radius {}, \
         barrier {:.2} between neighbours, gradient {}, B = {B}, γ = {GAMMA}, a = {MONOMIAL_A}; {} steps \
         (gradient evaluations) per chain, {} chain(s), all starting in mode 1. Truth: \
         E[U] − U(μ) = {}, tail T = {}.\n{}",
        MultiWell::RADIUS,
        r.barrier,
        r.noise.label(),
        r.steps,
        opts.chains,
        sig(r.true_temperature, 3),
        sig(r.true_tail_temperature, 3),
        table(r)
    );
    s += &format!(
        "\nTime in each mode (pooled) vs its true mass\n{}",
        occupancy_table(r)
    );
    if r.tuning.is_empty() {
        s += "\nQuick mode: settings from the full run's tuning (no tuning here).\n";
    } else {
        s += &format!(
            "\nTuning: {TUNE_CHAINS} chains × {} steps per grid point on other seeds. \
             Temperature-checked: most modes per chain, then most switches, among the points \
             whose E[U] − U(μ) and tail T are both within {:.0} % of the truth's. Full grid in \
             multi-well-tuning.csv and multi-well-tuning.png.\n",
            tune_steps(r.steps),
            TOLERANCE * 100.0,
        );
        for m in Method::ALL.into_iter().filter(Method::available) {
            let rows: Vec<&TuneRow> = r.tuning.iter().filter(|x| x.method == m).collect();
            s += &format!(
                "  {}: {} grid points, {} passed the temperature check, {} diverged\n",
                m.label(),
                rows.len(),
                rows.iter().filter(|x| x.accurate).count(),
                rows.iter().filter(|x| x.failed).count()
            );
        }
    }
    for row in r.tuning.iter().filter(|x| x.chosen && !x.accurate) {
        s += &format!(
            "{}: no grid point passed the temperature check; the checked run uses the closest \
             ({}).\n",
            row.method.label(),
            row.settings.describe(row.method)
        );
    }
    let missing: Vec<&str> = Method::ALL
        .iter()
        .filter(|m| !m.available())
        .map(|m| m.label())
        .collect();
    if !missing.is_empty() {
        s += &format!(
            "\nNot run (sampler not in sgmcmc yet): {}\n",
            missing.join(", ")
        );
    }
    s += &format!("\nWall-clock time {:.1} s\n", r.seconds);
    s
}

/// Runs the experiment with the given reading of the gradient noise and returns [`report`].
pub fn cli(opts: &RunOptions, noise: GradientNoise) -> Result<String, ExperimentError> {
    run_with_noise(opts, noise).map(|r| report(&r, opts))
}
