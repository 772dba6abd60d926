//! A 2-d potential with five isolated modes joined by low-density regions, standing in for the
//! "multiple-well synthetic potential" of Zhang et al. 2017 §4.1 (Fig. 3), whose definition is in
//! the paper's supplement, which we do not have.
//!
//! # Definition
//!
//! U(θ) = −ln Σ_{k=1..5} w_k N(θ; μ_k, s² I), θ ∈ ℝ², an equally weighted (w_k = 1/5) mixture of
//! isotropic Gaussians with standard deviation s = 1 whose means sit on a regular pentagon of
//! radius R = 8 centred at the origin, μ_k = R (cos φ_k, sin φ_k), φ_k = π/2 + 2π(k − 1)/5. The
//! density e^{−U} is therefore normalised exactly, and
//!
//! ∇U(θ) = Σ_k r_k(θ) (θ − μ_k)/s²,   r_k(θ) = w_k N(θ; μ_k, s² I) / Σ_j w_j N(θ; μ_j, s² I),
//!
//! evaluated with log-sum-exp so it stays finite far from every mode. Neighbouring modes are
//! d = 2R sin(π/5) ≈ 9.40 apart; the barrier between them (the saddle at the midpoint of the edge,
//! where the minimum-energy path crosses) is ΔU = U(saddle) − U(μ_k) ≈ d²/(8s²) − ln 2 ≈ 10.36
//! units (see [`MultiWell::barrier`]), and the centre of the pentagon is a maximum ≈ 30 units
//! above the modes, so a chain only goes round the ring. At temperature 1 the equilibrium
//! crossing rate of a well-tuned second-order sampler is of order 0.1·e^{−ΔU} ≈ 3·10⁻⁶ per unit
//! time and edge: over 10⁶ steps of h = 0.1 (10⁵ time units) an exact sampler switches modes
//! about once. The barrier was fixed before any SGMGT run (R = 7, ΔU ≈ 7.8, let SGNHT at h = 0.1
//! switch ≈ 10 times per 10⁶ steps, too often for "isolated" modes).
//!
//! # Modes
//!
//! [`MultiWell::mode_of`] assigns θ to mode k when |θ − μ_k| < ρ = 3s (the basins are disjoint:
//! 2ρ < d); a point outside every basin belongs to no mode. A switch is a change between two
//! successively *visited* modes, so an excursion into the low-density region that returns to the
//! same basin is not counted ([`ModeTracker`], [`count_switches`]). The true mass of each basin
//! is ≈ w_k (1 − e^{−ρ²/2}) ≈ 0.1978 ([`MultiWell::basin_masses`], by quadrature).
//!
//! # Gradient noise
//!
//! Two readings, [`GradientNoise`]. By default, as in Ding et al. 2014 §3 and [`super::double_well`], the
//! stochastic gradient is ∇Ũ = ∇U + N(0, 2B/h) per coordinate, i.e. noise of variance 2Bh per
//! step once multiplied by h: a diffusion 2B per unit time whatever the step. Zhang et al. 2017 §4.1 prints
//! ∇Ũ = ∇U + N(0, 2B) ("similar to Ding et al."), which read literally is noise of variance 2B
//! per evaluation, 2Bh² per step, a diffusion 2Bh per unit time that fades as h → 0
//! ([`GradientNoise::PerEvaluation`]).

use rand_pcg::Pcg64;
use sgmcmc::rng::standard_normal_f64;
use std::f64::consts::PI;

/// Number of modes.
pub const MODES: usize = 5;

/// How the simulated gradient noise of [`MultiWell::noisy_gradient`] scales with the step h.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GradientNoise {
    /// ∇Ũ = ∇U + N(0, 2B/h): Ding et al. 2014 §3's ∇Ũh = ∇Uh + N(0, 2Bh). The momentum receives noise of
    /// variance 2Bh per step, a diffusion 2B per unit time at every h, which the thermostat
    /// must absorb with a friction ≈ B.
    #[default]
    PerStep,
    /// ∇Ũ = ∇U + N(0, 2B): Zhang et al. 2017 §4.1 as printed. Variance 2Bh² per step, a diffusion 2Bh per unit
    /// time: the smaller the step, the less noise there is to absorb.
    PerEvaluation,
}

impl GradientNoise {
    /// Standard deviation of the noise added to each gradient coordinate at step `h`.
    pub fn sd(&self, h: f64, b: f64) -> f64 {
        match self {
            GradientNoise::PerStep => (2.0 * b / h).sqrt(),
            GradientNoise::PerEvaluation => (2.0 * b).sqrt(),
        }
    }

    /// The noise in SGHMC's units, B_SGHMC = ½hV for variance V per evaluation: `b` per step,
    /// `h b` per evaluation (what a sampler's noise estimate B̂ should be set to).
    pub fn sghmc_b(&self, h: f64, b: f64) -> f64 {
        match self {
            GradientNoise::PerStep => b,
            GradientNoise::PerEvaluation => h * b,
        }
    }

    /// The noise term alone, for figure titles.
    pub fn short_label(&self) -> &'static str {
        match self {
            GradientNoise::PerStep => "N(0, 2B/h)",
            GradientNoise::PerEvaluation => "N(0, 2B)",
        }
    }

    /// The formula, for reports.
    pub fn label(&self) -> &'static str {
        match self {
            GradientNoise::PerStep => "∇U + N(0, 2B/h) (Ding et al. 2014 §3)",
            GradientNoise::PerEvaluation => "∇U + N(0, 2B) (Zhang et al. 2017 §4.1 as printed)",
        }
    }
}

/// The five-mode Gaussian-mixture potential (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct MultiWell {
    means: [[f64; 2]; MODES],
    log_weights: [f64; MODES],
    weights: [f64; MODES],
    sd: f64,
    basin_radius: f64,
}

impl Default for MultiWell {
    fn default() -> Self {
        MultiWell::standard()
    }
}

impl MultiWell {
    /// Pentagon radius R of [`MultiWell::standard`].
    pub const RADIUS: f64 = 8.0;
    /// Component standard deviation s of [`MultiWell::standard`].
    pub const SD: f64 = 1.0;
    /// Basin radius ρ in units of s.
    pub const BASIN: f64 = 3.0;

    /// The documented potential: equal weights, s = 1, pentagon radius R = 8, basins of radius 3.
    pub fn standard() -> Self {
        MultiWell::pentagon(Self::RADIUS, Self::SD, [0.2; MODES])
    }

    /// Modes on a regular pentagon of radius `radius` (the first at the top), standard deviation
    /// `sd`, weights normalised to sum 1. Panics on non-positive `radius`, `sd` or weights, or if
    /// the basins (radius 3·sd) would overlap.
    pub fn pentagon(radius: f64, sd: f64, weights: [f64; MODES]) -> Self {
        assert!(radius > 0.0 && sd > 0.0 && weights.iter().all(|&w| w > 0.0));
        let total: f64 = weights.iter().sum();
        let mut means = [[0.0; 2]; MODES];
        for (k, m) in means.iter_mut().enumerate() {
            let phi = PI / 2.0 + 2.0 * PI * k as f64 / MODES as f64;
            *m = [radius * phi.cos(), radius * phi.sin()];
        }
        let basin_radius = Self::BASIN * sd;
        assert!(
            2.0 * basin_radius < 2.0 * radius * (PI / 5.0).sin(),
            "basins overlap"
        );
        let w = weights.map(|w| w / total);
        MultiWell {
            means,
            log_weights: w.map(f64::ln),
            weights: w,
            sd,
            basin_radius,
        }
    }

    /// The mode locations μ_k.
    pub fn means(&self) -> &[[f64; 2]; MODES] {
        &self.means
    }

    /// The mixture weights w_k (summing to 1).
    pub fn weights(&self) -> &[f64; MODES] {
        &self.weights
    }

    /// The component standard deviation s.
    pub fn sd(&self) -> f64 {
        self.sd
    }

    /// The basin radius ρ used by [`MultiWell::mode_of`].
    pub fn basin_radius(&self) -> f64 {
        self.basin_radius
    }

    /// ln w_k N(θ; μ_k, s² I) for every k.
    fn log_terms(&self, theta: &[f64]) -> [f64; MODES] {
        let s2 = self.sd * self.sd;
        let norm = -(2.0 * PI * s2).ln();
        let mut out = [0.0; MODES];
        for (k, o) in out.iter_mut().enumerate() {
            let dx = theta[0] - self.means[k][0];
            let dy = theta[1] - self.means[k][1];
            *o = self.log_weights[k] + norm - 0.5 * (dx * dx + dy * dy) / s2;
        }
        out
    }

    /// ln p(θ) (normalised).
    pub fn log_density(&self, theta: &[f64]) -> f64 {
        let t = self.log_terms(theta);
        let m = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        m + t.iter().map(|&x| (x - m).exp()).sum::<f64>().ln()
    }

    /// U(θ) = −ln p(θ).
    pub fn potential(&self, theta: &[f64]) -> f64 {
        -self.log_density(theta)
    }

    /// The normalised density p(θ) = e^{−U(θ)} at (x, y).
    pub fn density(&self, x: f64, y: f64) -> f64 {
        self.log_density(&[x, y]).exp()
    }

    /// ∇U(θ) into `g` (both of length 2).
    pub fn gradient(&self, theta: &[f64], g: &mut [f64]) {
        let t = self.log_terms(theta);
        let m = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let r = t.map(|x| (x - m).exp());
        let z: f64 = r.iter().sum();
        let s2 = self.sd * self.sd;
        for (i, gi) in g.iter_mut().enumerate().take(2) {
            *gi = (0..MODES)
                .map(|k| r[k] * (theta[i] - self.means[k][i]))
                .sum::<f64>()
                / (z * s2);
        }
    }

    /// The mode whose basin (the disc of radius ρ around μ_k) contains θ, if any.
    pub fn mode_of(&self, theta: &[f64]) -> Option<usize> {
        let r2 = self.basin_radius * self.basin_radius;
        self.means.iter().position(|m| {
            let dx = theta[0] - m[0];
            let dy = theta[1] - m[1];
            dx * dx + dy * dy < r2
        })
    }

    /// The density on the cell centres of an n × n grid over [lo, hi]², row-major by x
    /// (`out[ix][iy]`), for heat maps.
    pub fn density_grid(&self, lo: f64, hi: f64, n: usize) -> Vec<Vec<f64>> {
        let w = (hi - lo) / n as f64;
        (0..n)
            .map(|i| {
                let x = lo + (i as f64 + 0.5) * w;
                (0..n)
                    .map(|j| self.density(x, lo + (j as f64 + 0.5) * w))
                    .collect()
            })
            .collect()
    }

    /// The true mass of each basin, by polar quadrature (Gauss–Legendre in the radius, the
    /// trapezoid rule — spectrally accurate for periodic integrands — in the angle).
    pub fn basin_masses(&self) -> [f64; MODES] {
        // 16-point Gauss–Legendre on [0, ρ] in 8 panels, 256 angles.
        const X: [f64; 8] = [
            0.095_012_509_837_637_44,
            0.281_603_550_779_258_9,
            0.458_016_777_657_227_4,
            0.617_876_244_402_643_8,
            0.755_404_408_355_003,
            0.865_631_202_387_831_8,
            0.944_575_023_073_232_6,
            0.989_400_934_991_649_9,
        ];
        const W: [f64; 8] = [
            0.189_450_610_455_068_5,
            0.182_603_415_044_923_6,
            0.169_156_519_395_002_5,
            0.149_595_988_816_576_7,
            0.124_628_971_255_533_9,
            0.095_158_511_682_492_78,
            0.062_253_523_938_647_89,
            0.027_152_459_411_754_095,
        ];
        let panels = 8;
        let angles = 256;
        let mut out = [0.0; MODES];
        for (k, o) in out.iter_mut().enumerate() {
            let [mx, my] = self.means[k];
            let mut sum = 0.0;
            for pnl in 0..panels {
                let a = self.basin_radius * pnl as f64 / panels as f64;
                let b = self.basin_radius * (pnl + 1) as f64 / panels as f64;
                let (c, hw) = (0.5 * (a + b), 0.5 * (b - a));
                for (&x, &w) in X.iter().zip(&W) {
                    for rho in [c - hw * x, c + hw * x] {
                        let mut ring = 0.0;
                        for j in 0..angles {
                            let phi = 2.0 * PI * j as f64 / angles as f64;
                            ring += self.density(mx + rho * phi.cos(), my + rho * phi.sin());
                        }
                        sum += w * hw * rho * ring * 2.0 * PI / angles as f64;
                    }
                }
            }
            *o = sum;
        }
        out
    }

    /// The barrier from mode `i` towards mode `j`: the maximum of U on the segment μ_i → μ_j
    /// (5000 points) minus U(μ_i). Between neighbours this segment is, by the mirror symmetry of
    /// the pair, the minimum-energy path up to the pull of the other three modes.
    pub fn barrier(&self, i: usize, j: usize) -> f64 {
        let (a, b) = (self.means[i], self.means[j]);
        let n = 5000;
        let top = (0..=n)
            .map(|t| {
                let u = t as f64 / n as f64;
                self.potential(&[a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1])])
            })
            .fold(f64::NEG_INFINITY, f64::max);
        top - self.potential(&a)
    }

    /// The dividing ray between mode `k` and its neighbour `k + 1` (mod 5): the half-line from
    /// the pentagon's centre (the origin) through the midpoint of the edge μ_k μ_{k+1}, as
    /// (unit direction, unit normal pointing from μ_k's side to μ_{k+1}'s). The five rays cut the
    /// plane into five sectors with one basin in each, so every path from one basin to another
    /// crosses at least one ray, and a mode switch needs at least one crossing.
    pub fn dividing_ray(&self, k: usize) -> ([f64; 2], [f64; 2]) {
        let (a, b) = (self.means[k % MODES], self.means[(k + 1) % MODES]);
        let mid = [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])];
        let len = mid[0].hypot(mid[1]);
        let dir = [mid[0] / len, mid[1] / len];
        // The edge direction μ_k → μ_{k+1} is perpendicular to the ray (the pentagon is
        // regular), so it is the normal, pointing into μ_{k+1}'s sector.
        let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
        let el = ex.hypot(ey);
        (dir, [ex / el, ey / el])
    }

    /// ∫ p(θ) ds along [`MultiWell::dividing_ray`] `k`, by composite Simpson on
    /// s ∈ [0, |midpoint| + 12 s] (4000 intervals; the density beyond is below e^{−72}).
    ///
    /// With Rice's formula this gives the rate at which a stationary chain whose position moves
    /// with velocity v crosses the ray: E[crossings per unit time] = ∫ p ds · E|n·v|, the
    /// momentum average taken under the kinetic energy's marginal (p independent of θ). Mode
    /// switches cannot outnumber crossings, which caps the switches of any correct sampler
    /// with θ̇ = ∇K(p) at (simulated time) × Σ_k ∫ p ds · E|n_k·∇K(p)| — whatever its
    /// friction, thermostat or resampling (see `experiments::multi_well::NormalSpeeds::crossing_rate`).
    pub fn dividing_ray_density(&self, k: usize) -> f64 {
        let (dir, _) = self.dividing_ray(k);
        let (a, b) = (self.means[k % MODES], self.means[(k + 1) % MODES]);
        let reach = (0.5 * (a[0] + b[0])).hypot(0.5 * (a[1] + b[1])) + 12.0 * self.sd;
        let n = 4000;
        let w = reach / n as f64;
        let f = |i: usize| {
            let s = i as f64 * w;
            self.density(s * dir[0], s * dir[1])
        };
        let mut sum = f(0) + f(n);
        for i in 1..n {
            sum += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i);
        }
        sum * w / 3.0
    }

    /// Expected mode switches per unit time of the overdamped Langevin diffusion
    /// dθ = −∇U dt + √2 dW at stationarity, by the Eyring–Kramers (Langer) formula for each
    /// neighbour pair: k = |λ_b|/(2π) · √(det H_a / |det H_b|) · e^{−ΔU}, H_a and H_b the Hessians
    /// of U at the mode and at the saddle (the edge midpoint), λ_b the saddle's negative
    /// eigenvalue, ΔU = [`MultiWell::barrier`]; summed as Σ_a P(a) Σ_b k_{a→b}, basin masses from
    /// the weights. An asymptotic estimate for high barriers (ΔU ≈ 10.4 here), not a bound.
    ///
    /// SGMGT-D's first-order term −σ_θ∇U dt + √(2σ_θ) dW is this diffusion run at speed σ_θ,
    /// a transport channel Rice's ceiling ([`MultiWell::dividing_ray_density`]) does not cover.
    pub fn overdamped_switch_rate(&self) -> f64 {
        let hessian = |t: [f64; 2]| {
            let e = 1e-4;
            let mut h = [[0.0; 2]; 2];
            for (j, row) in h.iter_mut().enumerate() {
                let (mut a, mut b) = (t, t);
                a[j] += e;
                b[j] -= e;
                let (mut ga, mut gb) = ([0.0; 2], [0.0; 2]);
                self.gradient(&a, &mut ga);
                self.gradient(&b, &mut gb);
                for i in 0..2 {
                    row[i] = (ga[i] - gb[i]) / (2.0 * e);
                }
            }
            h
        };
        let det = |h: [[f64; 2]; 2]| h[0][0] * h[1][1] - h[0][1] * h[1][0];
        let mut total = 0.0;
        for a in 0..MODES {
            for b in [(a + 1) % MODES, (a + MODES - 1) % MODES] {
                let (ma, mb) = (self.means[a], self.means[b]);
                let saddle = [0.5 * (ma[0] + mb[0]), 0.5 * (ma[1] + mb[1])];
                let (ha, hb) = (hessian(ma), hessian(saddle));
                // Eigenvalues of the symmetric 2×2 saddle Hessian; the smaller is negative.
                let tr = hb[0][0] + hb[1][1];
                let disc = (0.25 * tr * tr - det(hb)).max(0.0).sqrt();
                let lambda = 0.5 * tr - disc;
                let k = lambda.abs() / (2.0 * PI)
                    * (det(ha) / det(hb).abs()).sqrt()
                    * (-self.barrier(a, b)).exp();
                total += self.weights[a] * k;
            }
        }
        total
    }

    /// E_π[U(θ)] by the midpoint rule on [−R − 8s, R + 8s]² (800² cells): the average potential
    /// energy an exact sampler reports (a temperature check: an overheated chain sits higher).
    pub fn mean_potential(&self) -> f64 {
        let r = self.means[0][1].hypot(self.means[0][0]) + 8.0 * self.sd;
        let n = 800;
        let w = 2.0 * r / n as f64;
        let mut s = 0.0;
        for i in 0..n {
            for j in 0..n {
                let th = [-r + (i as f64 + 0.5) * w, -r + (j as f64 + 0.5) * w];
                let lp = self.log_density(&th);
                s += lp.exp() * (-lp);
            }
        }
        s * w * w
    }

    /// The temperature T at which a single isotropic Gaussian mode would leave the fraction
    /// `outside` of its mass beyond the basin radius ρ: P(|θ − μ| > ρ) = e^{−ρ²/(2s²T)}, so
    /// T = ρ²/(2s² ln(1/outside)). Applied to the time a chain spends outside every basin, it is
    /// a temperature read off the tails (where the barriers are), to set beside the mean-energy
    /// one; for the exact density it is ≈ 1 (see [`MultiWell::basin_masses`]).
    pub fn tail_temperature(&self, outside: f64) -> f64 {
        let z = self.basin_radius / self.sd;
        0.5 * z * z / (1.0 / outside).ln()
    }

    /// A stochastic gradient ∇U + N(0, σ²) per coordinate, σ from `noise` ([`GradientNoise::sd`]),
    /// drawn from its own RNG.
    pub fn noisy_gradient(
        &self,
        h: f64,
        b: f64,
        noise: GradientNoise,
        seed: u64,
    ) -> impl FnMut(&[f64], &mut [f64]) {
        let model = self.clone();
        let mut rng = Pcg64::new(seed as u128, 0x3a11e);
        let sd = noise.sd(h, b);
        move |t: &[f64], g: &mut [f64]| {
            model.gradient(t, g);
            for gi in g.iter_mut() {
                *gi += sd * standard_normal_f64(&mut rng);
            }
        }
    }
}

/// Streaming bookkeeping of which modes a chain visits: time in each basin, time outside every
/// basin, switches between successively visited modes, first-visit times.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModeTracker {
    current: Option<usize>,
    /// Steps spent in each basin.
    pub time_in: [u64; MODES],
    /// Steps spent outside every basin.
    pub outside: u64,
    /// Changes between successively visited modes.
    pub switches: u64,
    /// The step at which each mode was first entered.
    pub first_visit: [Option<u64>; MODES],
    steps: u64,
}

impl ModeTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> Self {
        ModeTracker::default()
    }

    /// Records the mode (or none) of the next draw.
    pub fn observe(&mut self, mode: Option<usize>) {
        match mode {
            Some(k) => {
                self.time_in[k] += 1;
                if self.first_visit[k].is_none() {
                    self.first_visit[k] = Some(self.steps);
                }
                if self.current.is_some_and(|c| c != k) {
                    self.switches += 1;
                }
                self.current = Some(k);
            }
            None => self.outside += 1,
        }
        self.steps += 1;
    }

    /// Draws recorded.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The last visited mode.
    pub fn current(&self) -> Option<usize> {
        self.current
    }

    /// Which modes were visited.
    pub fn visited(&self) -> [bool; MODES] {
        self.time_in.map(|t| t > 0)
    }

    /// How many distinct modes were visited.
    pub fn modes_visited(&self) -> usize {
        self.time_in.iter().filter(|&&t| t > 0).count()
    }

    /// Fraction of all draws in each basin.
    pub fn fractions(&self) -> [f64; MODES] {
        let n = self.steps.max(1) as f64;
        self.time_in.map(|t| t as f64 / n)
    }

    /// Adds another chain's counts (switches add; the current mode is not carried over).
    pub fn merge(&mut self, other: &ModeTracker) {
        for k in 0..MODES {
            self.time_in[k] += other.time_in[k];
            self.first_visit[k] = match (self.first_visit[k], other.first_visit[k]) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        self.outside += other.outside;
        self.switches += other.switches;
        self.steps += other.steps;
    }
}

/// Switches between successively visited modes in a sequence of mode assignments (`None`, an
/// excursion outside every basin, is skipped).
pub fn count_switches(modes: impl IntoIterator<Item = Option<usize>>) -> u64 {
    let mut last = None;
    let mut switches = 0;
    for k in modes.into_iter().flatten() {
        if last.is_some_and(|l| l != k) {
            switches += 1;
        }
        last = Some(k);
    }
    switches
}

/// The distinct modes in a sequence of mode assignments, in order of first visit.
pub fn modes_visited(modes: impl IntoIterator<Item = Option<usize>>) -> Vec<usize> {
    let mut seen = Vec::new();
    for k in modes.into_iter().flatten() {
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overdamped_switch_rate_matches_the_two_gaussian_closed_form() {
        // Two unit Gaussians 2m apart: U″ = 1 at a mode and 1 − m² along the edge at the
        // midpoint (1 across it), so k = (m² − 1)/(2π) · (m² − 1)^{−1/2} · e^{−ΔU}; every mode
        // has two neighbours, so the stationary switch rate is 2k (the other modes shift the
        // numbers by far less than 1 %).
        let m = MultiWell::standard();
        let half = MultiWell::RADIUS * (PI / 5.0).sin();
        let k = (half * half - 1.0).sqrt() / (2.0 * PI) * (-m.barrier(0, 1)).exp();
        let got = m.overdamped_switch_rate();
        assert!(
            ((got - 2.0 * k) / (2.0 * k)).abs() < 0.01,
            "{got} vs {}",
            2.0 * k
        );
    }

    #[test]
    fn dividing_rays_separate_neighbours_and_carry_the_two_mode_density() {
        let m = MultiWell::standard();
        let d = 2.0 * MultiWell::RADIUS * (PI / 5.0).sin();
        for k in 0..MODES {
            let (dir, n) = m.dividing_ray(k);
            // The normal points from μ_k to μ_{k+1}, perpendicular to the ray.
            let (a, b) = (m.means()[k], m.means()[(k + 1) % MODES]);
            assert!((dir[0] * n[0] + dir[1] * n[1]).abs() < 1e-12);
            assert!(n[0] * (b[0] - a[0]) + n[1] * (b[1] - a[1]) > 0.0);
            // Near the ray only μ_k and μ_{k+1} matter: their two components give
            // ∫ p ds = 2 w φ(d/2) ∫ φ(t) dt, t from −|midpoint| (≈ −6.5 s) to ∞, i.e. 2 w φ(d/2)
            // up to 1e-10; the other three modes add less than 1e-4 of it (they are ≥ 11 s
            // away from the ray's densest part).
            let phi = (-(d / 2.0) * (d / 2.0) / 2.0).exp() / (2.0 * PI).sqrt();
            let two_mode = 2.0 * 0.2 * phi;
            let got = m.dividing_ray_density(k);
            assert!(
                ((got - two_mode) / two_mode).abs() < 1e-4,
                "ray {k}: {got} vs {two_mode}"
            );
        }
    }

    #[test]
    fn gradient_matches_central_differences() {
        let m = MultiWell::standard();
        let e = 1e-5;
        for i in -12..=12 {
            for j in -12..=12 {
                let t = [i as f64 * 0.83 + 0.1, j as f64 * 0.79 - 0.05];
                let mut g = [0.0; 2];
                m.gradient(&t, &mut g);
                for d in 0..2 {
                    let (mut a, mut b) = (t, t);
                    a[d] += e;
                    b[d] -= e;
                    let fd = (m.potential(&a) - m.potential(&b)) / (2.0 * e);
                    assert!(
                        (fd - g[d]).abs() < 1e-6 * (1.0 + fd.abs()),
                        "θ = {t:?}, d = {d}: {fd} vs {}",
                        g[d]
                    );
                }
            }
        }
        // Far away the gradient stays finite (log-sum-exp) and points outwards.
        let mut g = [0.0; 2];
        m.gradient(&[300.0, -40.0], &mut g);
        assert!(g[0] > 250.0 && g[0].is_finite() && g[1] < 0.0);
    }

    #[test]
    fn density_is_normalised_and_modes_are_minima() {
        let m = MultiWell::standard();
        let (lo, hi, n) = (-16.0, 16.0, 640);
        let w = (hi - lo) / n as f64;
        let total: f64 = m.density_grid(lo, hi, n).iter().flatten().sum::<f64>() * w * w;
        assert!((total - 1.0).abs() < 1e-6, "total {total}");
        for mu in m.means() {
            let mut g = [0.0; 2];
            m.gradient(mu, &mut g);
            assert!(g[0].abs() < 1e-6 && g[1].abs() < 1e-6);
        }
    }

    #[test]
    fn barriers_and_basins() {
        let m = MultiWell::standard();
        let d = 2.0 * MultiWell::RADIUS * (PI / 5.0).sin();
        for k in 0..MODES {
            let b = m.barrier(k, (k + 1) % MODES);
            assert!((b - (d * d / 8.0 - 2f64.ln())).abs() < 0.01, "barrier {b}");
        }
        let masses = m.basin_masses();
        let expect = 0.2 * (1.0 - (-4.5f64).exp());
        for &x in &masses {
            assert!((x - expect).abs() < 1e-6, "mass {x} vs {expect}");
        }
        assert_eq!(m.mode_of(&m.means()[3]), Some(3));
        assert_eq!(m.mode_of(&[0.0, 0.0]), None);
        let outside = 1.0 - masses.iter().sum::<f64>();
        assert!((m.tail_temperature(outside) - 1.0).abs() < 1e-3);
        let mp = m.mean_potential();
        // E[U] = 1 + ln(2π) − ln(1/5) for well-separated equal components.
        assert!(
            (mp - (1.0 + (2.0 * PI).ln() + 5f64.ln())).abs() < 1e-3,
            "{mp}"
        );
    }

    #[test]
    fn switches_skip_excursions() {
        let seq = [
            Some(0),
            None,
            Some(0),
            None,
            None,
            Some(1),
            Some(1),
            None,
            Some(0),
            Some(4),
        ];
        assert_eq!(count_switches(seq), 3);
        assert_eq!(modes_visited(seq), vec![0, 1, 4]);
        let mut t = ModeTracker::new();
        for s in seq {
            t.observe(s);
        }
        assert_eq!(t.switches, 3);
        assert_eq!(t.modes_visited(), 3);
        assert_eq!(t.outside, 4);
        assert_eq!(t.first_visit[1], Some(5));
        assert_eq!(count_switches([None, None]), 0);
    }
}
