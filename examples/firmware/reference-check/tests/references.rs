//! Each hand-written reference of the cost curve against the crate's sampler: the same update, step by step on the crate's own noise, and the same stationary moments on independent noise.
//!
//! * `states_agree_on_the_crates_noise`: d = 1…5, `f32` and `f64`, a fixed seed. The reference
//!   draws its normals one at a time in coordinate order (zᵢ, then SGMGT's further normals of
//!   coordinate i); the host build of the crate draws them by whole blocks from a keyed
//!   vectorised generator instead (`src/lanes.rs`, `sweep`: per block of ≤ 128 coordinates,
//!   the block of z, then one block per further normal, each rounded up to whole rounds). So
//!   the reference's [`Noise`] here is a [`Replay`] of that stream: keyed from the same RNG at
//!   the same point of the step and read in the crate's layout, it hands the reference the
//!   very normals the crate used for each use. θ, p and ξ must then agree after every step
//!   to rounding (the schemes' sums, the merged half drifts, the crate's polynomial exp,
//!   tanh and friction flow). On a scalar core whose build draws one ziggurat normal per use
//!   in the reference's order, the same agreement holds with no replay at all; the firmware's
//!   `max |Δθ|` column shows it there.
//! * `stationary_moments_agree`: d = 3, 10⁵ steps (HMC: 2·10⁴ proposals) from the reference
//!   with its own ziggurat normals and from the crate with its own noise: each coordinate's
//!   mean and variance of θ agree within five standard errors of their difference (batch
//!   means), which holds whatever order either draws its normals in. It catches a noise or
//!   friction scale that the state check above would not separate from the crate's own (it
//!   cannot: it replays the crate's noise through the reference's scale).

use rand_core::Rng;
use rand_pcg::Pcg32;
use sgmcmc::prelude::*;
use sgmcmc::rng::NormalLanes;
use sgmcmc_reference_check::reference::{self, Noise, Ziggurat};

/// The firmware's Gaussian (`src/curve/main.rs`): N(μ, diag σ²), μ and σ² cycling through
/// three values.
const MEAN: [f32; 3] = [1.0, -0.5, 0.25];
const VAR: [f32; 3] = [1.0, 0.5, 2.0];

#[derive(Clone, Copy)]
struct Gaussian;

impl<T: Real> Gradient<T> for Gaussian {
    fn gradient(&mut self, theta: &[T], g: &mut [T]) {
        for (i, (gi, &t)) in g.iter_mut().zip(theta).enumerate() {
            *gi = (t - T::from_f32(MEAN[i % 3])) * (T::ONE / T::from_f32(VAR[i % 3]));
        }
    }
}

impl<T: Real> Energy<T> for Gaussian {
    fn energy(&mut self, theta: &[T]) -> T {
        let mut u = T::ZERO;
        for (i, &t) in theta.iter().enumerate() {
            let r = t - T::from_f32(MEAN[i % 3]);
            u += r * r * (T::ONE / T::from_f32(VAR[i % 3]));
        }
        T::HALF * u
    }
}

/// The samplers of the curve, with the firmware's settings.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Sgld,
    Sghmc(Integrator),
    Sgnht(Integrator),
    MSgnht(Integrator),
    /// SGMGT-D with the redraw periods (T_p, T_ξ).
    SgmgtD(Integrator, (u32, u32)),
    Hmc,
}

const EULER: Integrator = Integrator::Euler;
const SPLIT: Integrator = Integrator::Splitting;

fn kinds(periods: (u32, u32)) -> [Kind; 10] {
    [
        Kind::Sgld,
        Kind::Sghmc(EULER),
        Kind::Sghmc(SPLIT),
        Kind::Sgnht(EULER),
        Kind::Sgnht(SPLIT),
        Kind::MSgnht(EULER),
        Kind::MSgnht(SPLIT),
        Kind::SgmgtD(EULER, periods),
        Kind::SgmgtD(SPLIT, periods),
        Kind::Hmc,
    ]
}

fn sghmc_params<T: Real>(i: Integrator) -> SghmcParams<T> {
    SghmcParams::new(T::from_f32(0.1))
        .with_friction(T::ONE)
        .with_integrator(i)
}

fn sgnht_params<T: Real>(i: Integrator) -> SgnhtParams<T> {
    SgnhtParams::new(T::from_f32(0.1))
        .with_diffusion(T::ONE)
        .with_integrator(i)
}

fn sgmgt_params<T: Real>(i: Integrator, (tp, tx): (u32, u32)) -> SgmgtParams<T> {
    SgmgtParams::sgmgt_d(T::from_f32(0.05))
        .with_integrator(i)
        .with_resampling_steps(tp, tx)
}

fn hmc_params<T: Real>() -> HmcParams<T> {
    HmcParams::new(T::from_f32(0.15)).with_leapfrog_steps(10)
}

/// A zeroed buffer that lives for the test (so the samplers that borrow it can be stored).
fn buffer<T: Real>(n: usize) -> &'static mut [T] {
    Vec::leak(vec![T::ZERO; n])
}

/// The crate's side: a sampler over leaked buffers.
enum CrateSide<T: Real> {
    Sgld(Sgld<'static, T>),
    Sghmc(Sghmc<'static, T>),
    Sgnht(Sgnht<'static, T>),
    MSgnht(MSgnht<'static, T>),
    SgmgtD(Sgmgt<'static, T>),
    Hmc(Hmc<'static, T>),
}

impl<T: Real> CrateSide<T> {
    /// From θ = 0, p = 0, ξ₀ as the firmware's builders set it.
    fn new(kind: Kind, d: usize) -> Self {
        let (theta, p) = (buffer(d), buffer(d));
        match kind {
            Kind::Sgld => CrateSide::Sgld(
                Sgld::new(SgldParams::new(T::from_f32(0.05)), theta, buffer(2 * d)).unwrap(),
            ),
            Kind::Sghmc(i) => {
                CrateSide::Sghmc(Sghmc::new(sghmc_params(i), theta, p, buffer(2 * d)).unwrap())
            }
            Kind::Sgnht(i) => {
                let params = sgnht_params(i);
                let xi = Box::leak(Box::new([params.initial_thermostat()]));
                CrateSide::Sgnht(Sgnht::resume(params, theta, p, xi, buffer(2 * d)).unwrap())
            }
            Kind::MSgnht(i) => {
                let params = sgnht_params(i);
                let xi = buffer(d);
                xi.fill(params.initial_thermostat());
                CrateSide::MSgnht(MSgnht::resume(params, theta, p, xi, buffer(3 * d)).unwrap())
            }
            Kind::SgmgtD(i, periods) => {
                let params = sgmgt_params(i, periods);
                let xi = buffer(d);
                CrateSide::SgmgtD(Sgmgt::resume(params, theta, p, xi, buffer(3 * d)).unwrap())
            }
            Kind::Hmc => CrateSide::Hmc(Hmc::new(hmc_params(), theta, p, buffer(4 * d)).unwrap()),
        }
    }

    fn step<R: Rng>(&mut self, rng: &mut R) {
        let m = &mut Gaussian;
        match self {
            CrateSide::Sgld(s) => s.step(m, rng).map(drop),
            CrateSide::Sghmc(s) => s.step(m, rng).map(drop),
            CrateSide::Sgnht(s) => s.step(m, rng).map(drop),
            CrateSide::MSgnht(s) => s.step(m, rng).map(drop),
            CrateSide::SgmgtD(s) => s.step(m, rng).map(drop),
            CrateSide::Hmc(s) => s.step(m, rng).map(drop),
        }
        .expect("the crate's step failed");
    }

    /// θ, p (empty for SGLD) and ξ (empty without a thermostat).
    fn state(&self) -> (Vec<T>, Vec<T>, Vec<T>) {
        let (theta, p, xi): (&[T], &[T], Vec<T>) = match self {
            CrateSide::Sgld(s) => (s.position(), &[], vec![]),
            CrateSide::Sghmc(s) => (s.position(), s.momentum(), vec![]),
            CrateSide::Sgnht(s) => (s.position(), s.momentum(), vec![s.thermostat()]),
            CrateSide::MSgnht(s) => (s.position(), s.momentum(), s.thermostat().to_vec()),
            CrateSide::SgmgtD(s) => (s.position(), s.momentum(), s.thermostat().to_vec()),
            CrateSide::Hmc(s) => (s.position(), s.momentum(), vec![]),
        };
        (theta.to_vec(), p.to_vec(), xi)
    }
}

/// The reference's side: its settings (from the same parameter values as the crate's) and
/// state.
struct ReferenceSide<T: Real> {
    kind: Kind,
    theta: Vec<T>,
    p: Vec<T>,
    xi: Vec<T>,
    g: Vec<T>,
    saved: (Vec<T>, Vec<T>),
    energy: T,
    steps: u32,
}

impl<T: Real> ReferenceSide<T> {
    fn new(kind: Kind, d: usize) -> Self {
        let xi = match kind {
            Kind::Sgnht(i) => vec![sgnht_params::<T>(i).initial_thermostat()],
            Kind::MSgnht(i) => vec![sgnht_params::<T>(i).initial_thermostat(); d],
            Kind::SgmgtD(..) => vec![T::ZERO; d],
            _ => vec![],
        };
        let mut side = ReferenceSide {
            kind,
            theta: vec![T::ZERO; d],
            p: vec![T::ZERO; d],
            xi,
            g: vec![T::ZERO; d],
            saved: (vec![T::ZERO; d], vec![T::ZERO; d]),
            energy: T::ZERO,
            steps: 0,
        };
        if let Kind::Hmc = kind {
            side.energy = reference::Hmc::start(&mut Gaussian, &side.theta, &mut side.g);
        }
        side
    }

    /// Standard normals per coordinate in one step (the crate's blocks per block of
    /// coordinates).
    fn normals_per_coordinate(&self) -> usize {
        match self.kind {
            Kind::SgmgtD(EULER, _) => 3,
            Kind::SgmgtD(..) => 5,
            _ => 1,
        }
    }

    fn step<N: Noise<T>>(&mut self, noise: &mut N) {
        let m = &mut Gaussian;
        let euler = |i| i == EULER;
        let ReferenceSide {
            theta, p, xi, g, ..
        } = self;
        match self.kind {
            Kind::Sgld => reference::Sgld::new(T::from_f32(0.05)).step(theta, g, m, noise),
            Kind::Sghmc(i) => {
                let q = sghmc_params::<T>(i);
                let r = reference::Sghmc::new(q.step_size(), q.friction());
                if euler(i) {
                    r.euler(theta, p, g, m, noise)
                } else {
                    r.splitting(theta, p, g, m, noise)
                }
            }
            Kind::Sgnht(i) => {
                let q = sgnht_params::<T>(i);
                let r = reference::Sgnht::new(q.step_size(), q.diffusion());
                let x = &mut xi[0];
                if euler(i) {
                    r.euler(theta, p, x, g, m, noise)
                } else {
                    r.splitting(theta, p, x, g, m, noise)
                }
            }
            Kind::MSgnht(i) => {
                let q = sgnht_params::<T>(i);
                let r = reference::MSgnht::new(q.step_size(), q.diffusion());
                if euler(i) {
                    r.euler(theta, p, xi, g, m, noise)
                } else {
                    r.splitting(theta, p, xi, g, m, noise)
                }
            }
            Kind::SgmgtD(i, periods) => {
                let q = sgmgt_params::<T>(i, periods);
                let r = reference::SgmgtD::new(
                    q.step_size(),
                    q.kinetic().c(),
                    (q.sigma_p(), q.gamma()),
                    (q.sigma_theta(), q.sigma_xi()),
                    q.resampling_steps(),
                );
                let steps = &mut self.steps;
                if euler(i) {
                    r.euler(steps, theta, p, xi, g, m, noise)
                } else {
                    r.splitting(steps, theta, p, xi, g, m, noise)
                }
            }
            Kind::Hmc => {
                let q = hmc_params::<T>();
                let r = reference::Hmc::new(q.step_size(), q.steps());
                let (s1, s2) = &mut self.saved;
                r.step((theta, p, g), &mut self.energy, (s1, s2), m, noise);
            }
        }
    }
}

/// The crate's noise for one step, handed to the reference use by use: keyed from the RNG at
/// the point where the crate's step keys its generator (every sampler here draws nothing from
/// the RNG before that), filled with the crate's layout for d ≤ 128 — `per` consecutive
/// blocks of `width` normals, `width` = d rounded up to the generator's grain (the z of every
/// coordinate, then each further normal's block) — and read back in the reference's order
/// (coordinate i's z, then its further normals).
struct Replay<T> {
    rng: Pcg32,
    stream: Vec<T>,
    per: usize,
    width: usize,
    next: usize,
}

impl<T: Real> Replay<T> {
    fn key(&mut self, d: usize, per: usize) {
        let grain = <T::NormalLanes as NormalLanes<T>>::GRAIN;
        self.width = d.next_multiple_of(grain);
        self.per = per;
        self.next = 0;
        self.stream.clear();
        self.stream.resize(per * self.width, T::ZERO);
        T::NormalLanes::keyed(&mut self.rng).fill(&mut self.stream);
    }
}

impl<T: Real> Noise<T> for Replay<T> {
    type Rng = Pcg32;
    fn normal(&mut self) -> T {
        let k = self.next;
        self.next += 1;
        let at = (k % self.per) * self.width + k / self.per;
        assert!(
            k / self.per < self.width,
            "more normals than the crate drew"
        );
        self.stream[at]
    }
    fn rng(&mut self) -> &mut Pcg32 {
        &mut self.rng
    }
}

fn rng(seed: u64) -> Pcg32 {
    Pcg32::new(seed, 0xa02b_dbf7_bb3c_0a7a)
}

/// max |a − b| / (1 + |b|) over two states of the same shape.
fn deviation<T: Real>(a: &[T], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (x.to_f64() - y.to_f64()).abs() / (1.0 + y.to_f64().abs()))
        .fold(0.0, f64::max)
}

/// Steps the crate and the reference on the crate's noise; the largest relative deviation of
/// θ, p and ξ over the run.
fn replayed<T: Real>(kind: Kind, d: usize, steps: usize, seed: u64) -> f64 {
    let mut sampler = CrateSide::<T>::new(kind, d);
    let mut reference = ReferenceSide::<T>::new(kind, d);
    let mut crate_rng = rng(seed);
    let mut replay = Replay {
        rng: rng(seed),
        stream: vec![],
        per: 1,
        width: 0,
        next: 0,
    };
    let mut worst = 0.0f64;
    for step in 0..steps {
        sampler.step(&mut crate_rng);
        replay.key(d, reference.normals_per_coordinate());
        reference.step(&mut replay);
        assert_eq!(
            replay.next,
            reference.normals_per_coordinate() * d,
            "{kind:?}: the reference drew a different number of normals"
        );
        let (theta, p, xi) = sampler.state();
        let p_ref: &[T] = if let Kind::Sgld = kind {
            &[]
        } else {
            &reference.p
        };
        let dev = deviation(&reference.theta, &theta)
            .max(deviation(p_ref, &p))
            .max(deviation(&reference.xi, &xi));
        assert!(
            dev.is_finite(),
            "{kind:?} d = {d}: not finite at step {step}"
        );
        worst = worst.max(dev);
    }
    // Both sides drew the same words from their generators.
    assert_eq!(
        crate_rng.next_u64(),
        replay.rng.next_u64(),
        "{kind:?}: the RNGs diverged"
    );
    worst
}

#[test]
fn states_agree_on_the_crates_noise() {
    // Redraws every 7 (p) and 5 (ξ) steps, so that 30 steps hold several of each.
    let mut report = String::new();
    for kind in kinds((7, 5)) {
        for d in 1..=5 {
            let (f32_dev, f64_dev) = (
                replayed::<f32>(kind, d, 30, 7 + d as u64),
                replayed::<f64>(kind, d, 30, 7 + d as u64),
            );
            report += &format!("{kind:?} d = {d}: f32 {f32_dev:.1e}, f64 {f64_dev:.1e}\n");
            assert!(
                f32_dev < 1e-5 && f64_dev < 1e-13,
                "{kind:?} d = {d}: the reference left the crate's states (f32 {f32_dev:.2e}, f64 {f64_dev:.2e})\n{report}"
            );
        }
    }
    println!("{report}");
}

/// Running batch means of a coordinate's θ and (θ − μ)².
struct Moments {
    batches: Vec<[f64; 2]>,
    sums: [f64; 2],
    count: usize,
    per_batch: usize,
    mean: f64,
}

impl Moments {
    fn new(per_batch: usize, mean: f64) -> Self {
        Moments {
            batches: vec![],
            sums: [0.0; 2],
            count: 0,
            per_batch,
            mean,
        }
    }

    fn add(&mut self, x: f64) {
        self.sums[0] += x;
        self.sums[1] += (x - self.mean) * (x - self.mean);
        self.count += 1;
        if self.count == self.per_batch {
            let n = self.per_batch as f64;
            self.batches.push([self.sums[0] / n, self.sums[1] / n]);
            self.sums = [0.0; 2];
            self.count = 0;
        }
    }

    /// (estimate, standard error) of the mean (k = 0) or the second central moment (k = 1).
    fn estimate(&self, k: usize) -> (f64, f64) {
        let b = self.batches.len() as f64;
        let m = self.batches.iter().map(|x| x[k]).sum::<f64>() / b;
        let ss = self.batches.iter().map(|x| (x[k] - m).powi(2)).sum::<f64>();
        (m, (ss / (b * (b - 1.0))).sqrt())
    }
}

/// Each coordinate's moments of θ over `steps` steps after a burn-in of a tenth, in 50
/// batches.
fn moments<T: Real>(mut step: impl FnMut() -> Vec<T>, d: usize, steps: usize) -> Vec<Moments> {
    let per_batch = steps / 50;
    let mut m: Vec<_> = (0..d)
        .map(|i| Moments::new(per_batch, MEAN[i % 3] as f64))
        .collect();
    for _ in 0..steps / 10 {
        step();
    }
    for _ in 0..50 * per_batch {
        for (mi, x) in m.iter_mut().zip(step()) {
            mi.add(x.to_f64());
        }
    }
    m
}

fn stationary<T: Real>(kind: Kind) {
    let d = 3;
    let steps = if let Kind::Hmc = kind {
        20_000
    } else {
        100_000
    };
    let mut sampler = CrateSide::<T>::new(kind, d);
    let mut crate_rng = rng(11);
    let crate_moments = moments(
        || {
            sampler.step(&mut crate_rng);
            sampler.state().0
        },
        d,
        steps,
    );
    let mut reference = ReferenceSide::<T>::new(kind, d);
    let mut reference_rng = rng(12);
    let reference_moments = moments(
        || {
            reference.step(&mut Ziggurat(&mut reference_rng));
            reference.theta.clone()
        },
        d,
        steps,
    );
    for (i, (c, r)) in crate_moments.iter().zip(&reference_moments).enumerate() {
        for (k, what) in ["mean", "variance"].iter().enumerate() {
            let ((cm, cs), (rm, rs)) = (c.estimate(k), r.estimate(k));
            let z = (cm - rm) / (cs * cs + rs * rs).sqrt();
            assert!(
                z.abs() < 5.0,
                "{kind:?} {}: θ{i} {what}: crate {cm:.4} ± {cs:.4}, reference {rm:.4} ± {rs:.4} (z = {z:.1})",
                core::any::type_name::<T>()
            );
        }
    }
}

#[test]
fn stationary_moments_agree() {
    for kind in kinds((100, 100)) {
        stationary::<f32>(kind);
        stationary::<f64>(kind);
    }
}
