//! Streaming chain diagnostics in fixed memory: running moments, batch-means Monte Carlo standard error, a windowed ESS and a divergence monitor.
//!
//! Each takes one scalar per draw (a coordinate of θ, or any function of the state) with
//! `push`, holds its state in a value of fixed size (no allocation, no buffer to lend) and
//! answers at any time, so a firmware can stop a chain when its estimate is good enough:
//!
//! ```
//! use sgmcmc::diagnostics::{BatchMeans, WindowedEss};
//!
//! // An AR(1) series x_t = 0.5 x_{t−1} + e_t, whose integrated autocorrelation time is 3.
//! let (mut bm, mut window) = (BatchMeans::<f64, 32>::new(), WindowedEss::<f64, 256>::new());
//! let (mut x, mut state) = (0.0f64, 12345u64);
//! for _ in 0..20_000 {
//!     state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
//!     let e = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5; // uniform, variance 1/12
//!     x = 0.5 * x + e;
//!     bm.push(x).unwrap();
//!     window.push(x).unwrap();
//! }
//! let ess = bm.ess().unwrap();
//! assert!(ess > 20_000.0 / 3.0 * 0.6 && ess < 20_000.0 / 3.0 * 1.4, "{ess}");
//! let windowed = window.ess().unwrap(); // over the last 256 draws
//! assert!(windowed > 30.0 && windowed < 256.0, "{windowed}");
//! ```
//!
//! The estimators, their costs and their errors: `docs/diagnostics.md`. The host-side
//! estimators over whole chains (split-R̂, coda's spectral ESS, the kernel Stein discrepancy)
//! are in the harness, which checks these against them.

use crate::real::Real;
use crate::sampler::{Observer, StepStats};
use core::ops::ControlFlow;

/// Why a diagnostic refused a draw, an estimate or a setting. On an error nothing changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DiagnosticError {
    /// The draw is NaN or ±∞, or the running sums would overflow with it.
    NonFiniteDraw,
    /// An estimate needs more draws (or completed batches) than have been pushed.
    TooFewDraws {
        /// How many it needs.
        needed: u64,
        /// How many there are.
        found: u64,
    },
    /// [`DivergenceMonitor::with_temperature_limit`]: the limit must be finite and > 1.
    TemperatureLimit,
    /// [`DivergenceMonitor::with_acceptance_floor`]: the floor must lie in [0, 1).
    AcceptanceFloor,
}

/// The running mean and variance of a scalar series (Welford 1962): O(1) memory and work per
/// draw, and numerically stable in f32.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RunningMoments<T> {
    count: u64,
    mean: T,
    /// Σ (x − x̄)² over the draws so far.
    m2: T,
}

impl<T: Real> RunningMoments<T> {
    /// No draws yet.
    pub const fn new() -> Self {
        RunningMoments {
            count: 0,
            mean: T::ZERO,
            m2: T::ZERO,
        }
    }

    /// Adds a draw: x̄ ← x̄ + (x − x̄)/n, M₂ ← M₂ + (x − x̄_old)(x − x̄_new).
    /// [`DiagnosticError::NonFiniteDraw`] for a non-finite x or an overflowing M₂, with
    /// nothing changed.
    pub fn push(&mut self, x: T) -> Result<(), DiagnosticError> {
        let count = self.count.saturating_add(1);
        let delta = x - self.mean;
        let mean = self.mean + delta / T::from_u64(count);
        let m2 = self.m2 + delta * (x - mean);
        if !(x.is_finite() && mean.is_finite() && m2.is_finite()) {
            return Err(DiagnosticError::NonFiniteDraw);
        }
        *self = RunningMoments { count, mean, m2 };
        Ok(())
    }

    /// Draws pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sample mean; [`DiagnosticError::TooFewDraws`] before the first draw.
    pub fn mean(&self) -> Result<T, DiagnosticError> {
        self.needs(1)?;
        Ok(self.mean)
    }

    /// The sample variance (divisor n − 1); [`DiagnosticError::TooFewDraws`] before two draws.
    pub fn variance(&self) -> Result<T, DiagnosticError> {
        self.needs(2)?;
        Ok(self.m2 / T::from_u64(self.count.saturating_sub(1)))
    }

    fn needs(&self, needed: u64) -> Result<(), DiagnosticError> {
        if self.count >= needed {
            Ok(())
        } else {
            Err(DiagnosticError::TooFewDraws {
                needed,
                found: self.count,
            })
        }
    }
}

/// The Monte Carlo standard error of a chain's mean by batch means, in B slots.
///
/// The draws are cut into consecutive batches of b draws; the batch means are nearly
/// independent once b is well beyond the autocorrelation time τ, each with variance ≈ τσ²/b, so
/// the variance of their average is estimated by var(batch means)/k over the k completed
/// batches (Flegal & Jones 2010). b starts at 1 and doubles whenever the B slots are full, by
/// averaging neighbouring batches, so k stays between B/2 and B and b grows as n/B: the
/// estimator is consistent as n grows, in memory fixed at compile time. Its relative error is
/// about √(2/(k − 1)) (14 % at k = 100), and the draws of the batch being filled are not yet
/// counted. `B` must be even and at least 4 (a compile-time error otherwise).
#[derive(Clone, Copy, Debug)]
pub struct BatchMeans<T, const B: usize> {
    /// The means of the completed batches, `completed` of them.
    batches: [T; B],
    completed: usize,
    /// Draws per batch, b.
    batch_size: u64,
    /// The batch being filled: its running mean and draws so far.
    current: RunningMoments<T>,
    /// All the draws pushed.
    all: RunningMoments<T>,
}

impl<T: Real, const B: usize> Default for BatchMeans<T, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real, const B: usize> BatchMeans<T, B> {
    const SLOTS: () = assert!(
        B >= 4 && B.is_multiple_of(2),
        "BatchMeans needs an even B ≥ 4"
    );

    /// No draws yet; batches of one draw.
    pub const fn new() -> Self {
        // (Evaluated at compile time for each B: an odd or small B does not build.)
        #[allow(clippy::let_unit_value)]
        let () = Self::SLOTS;
        BatchMeans {
            batches: [T::ZERO; B],
            completed: 0,
            batch_size: 1,
            current: RunningMoments::new(),
            all: RunningMoments::new(),
        }
    }

    /// Adds a draw, closing its batch when it holds b draws (and halving the batches, b
    /// doubled, when the slots are full). [`DiagnosticError::NonFiniteDraw`] as
    /// [`RunningMoments::push`], with nothing changed.
    pub fn push(&mut self, x: T) -> Result<(), DiagnosticError> {
        let (mut all, mut current) = (self.all, self.current);
        all.push(x)?;
        current.push(x)?;
        self.all = all;
        if current.count < self.batch_size {
            self.current = current;
            return Ok(());
        }
        // (`completed` < B always: the slots are halved as soon as they fill.)
        if let Some(slot) = self.batches.get_mut(self.completed) {
            *slot = current.mean;
        }
        self.completed += 1;
        self.current = RunningMoments::new();
        if self.completed == B {
            // Neighbours averaged into the first B/2 slots. (Pairs by pattern, not by index:
            // no bounds check to leave a panic path at a low opt-level.)
            let full = self.batches;
            for (slot, pair) in self.batches.iter_mut().zip(full.chunks_exact(2)) {
                if let [a, b] = *pair {
                    *slot = (a + b) * T::HALF;
                }
            }
            self.completed = B / 2;
            self.batch_size = self.batch_size.saturating_mul(2);
        }
        Ok(())
    }

    /// Draws pushed, and the running mean and variance over all of them.
    pub fn moments(&self) -> &RunningMoments<T> {
        &self.all
    }

    /// Draws per batch, b.
    pub fn batch_size(&self) -> u64 {
        self.batch_size
    }

    /// Completed batches, k.
    pub fn batches(&self) -> usize {
        self.completed
    }

    /// The Monte Carlo standard error of the mean of the draws in the completed batches,
    /// √(var(batch means)/k); [`DiagnosticError::TooFewDraws`] before two batches.
    pub fn mcse(&self) -> Result<T, DiagnosticError> {
        Ok((self.batch_variance()? / T::from_usize(self.completed)).sqrt())
    }

    /// The effective sample size s²/MCSE², s² the sample variance of all the draws;
    /// [`DiagnosticError::TooFewDraws`] before two batches. Batch means that are all equal (a
    /// constant series) give a zero MCSE and, by the convention of [`WindowedEss`] and ArviZ,
    /// an ESS of n.
    pub fn ess(&self) -> Result<T, DiagnosticError> {
        let var_mean = self.batch_variance()? / T::from_usize(self.completed);
        if var_mean == T::ZERO {
            return Ok(T::from_u64(self.all.count));
        }
        Ok(self.all.variance()? / var_mean)
    }

    /// The sample variance of the completed batches' means.
    fn batch_variance(&self) -> Result<T, DiagnosticError> {
        let k = self.completed;
        if k < 2 {
            return Err(DiagnosticError::TooFewDraws {
                needed: 2u64.saturating_mul(self.batch_size),
                found: self.all.count,
            });
        }
        let mut moments = RunningMoments::new();
        for &m in self.batches.iter().take(k) {
            // (Means of finite draws whose running sums stayed finite: cannot fail.)
            let _ = moments.push(m);
        }
        moments.variance()
    }
}

/// The effective sample size of the last W draws, by Geyer's initial monotone sequence.
///
/// The draws are kept in a ring of W entries; [`WindowedEss::ess`] computes
/// the autocorrelations of the window directly, lag by lag, until Geyer's initial positive
/// sequence ends, and applies the initial monotone sequence (Geyer 1992): the estimator the
/// harness (and Stan, ArviZ) applies to one chain, on the window. Its cost is bounded by
/// W²/2 multiply-adds per call (the lags stop at W − 3); pushing is O(1).
#[derive(Clone, Debug)]
pub struct WindowedEss<T, const W: usize> {
    /// The ring: the oldest draw at `next` once it is full, else at 0.
    ring: [T; W],
    /// Where the next draw goes.
    next: usize,
    /// Draws held (at most W).
    len: usize,
}

impl<T: Real, const W: usize> Default for WindowedEss<T, W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real, const W: usize> WindowedEss<T, W> {
    /// The fewest draws an estimate needs.
    pub const MIN_DRAWS: usize = 4;

    /// An empty window.
    pub const fn new() -> Self {
        WindowedEss {
            ring: [T::ZERO; W],
            next: 0,
            len: 0,
        }
    }

    /// Adds a draw, dropping the oldest when the window is full.
    /// [`DiagnosticError::NonFiniteDraw`] for NaN or ±∞, with nothing changed.
    pub fn push(&mut self, x: T) -> Result<(), DiagnosticError> {
        if !x.is_finite() {
            return Err(DiagnosticError::NonFiniteDraw);
        }
        // (A ring of checked accesses rather than `heapless::HistoryBuf`, whose `write` and
        // `as_slices` link bounds-check panics in the Cortex-M builds: tools/panic_matrix.sh.)
        if let Some(slot) = self.ring.get_mut(self.next) {
            *slot = x;
        }
        self.next = if self.next + 1 >= W { 0 } else { self.next + 1 };
        self.len = (self.len + 1).min(W);
        Ok(())
    }

    /// Draws in the window (at most W).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no draw has been pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ESS of the window's draws, n/τ̂ with τ̂ Geyer's initial monotone sequence estimate
    /// (bounded below by 1/log₁₀ n, as in Stan); n for a constant window.
    /// [`DiagnosticError::TooFewDraws`] below [`Self::MIN_DRAWS`].
    pub fn ess(&self) -> Result<T, DiagnosticError> {
        Ok(T::from_usize(self.len) / self.integrated_time()?)
    }

    /// τ̂ of the window (module docs of `harness::diagnostics::ess`, for one chain): with
    /// ρ̂ₖ = 1 − (s² − ĉₖ)/ĉ₀, the pair sums ρ̂₂ⱼ + ρ̂₂ⱼ₊₁ are summed while positive, each
    /// capped by the one before, and τ̂ = −1 + 2 Σ_{k<T} ρ̂ₖ + ρ̂_T⁺.
    pub fn integrated_time(&self) -> Result<T, DiagnosticError> {
        let n = self.len;
        if n < Self::MIN_DRAWS {
            return Err(DiagnosticError::TooFewDraws {
                needed: Self::MIN_DRAWS as u64,
                found: n as u64,
            });
        }
        let nf = T::from_usize(n);
        let mean = self.draws().fold(T::ZERO, |s, x| s + x) / nf;
        let c0 = self.autocovariance(mean, 0);
        if c0 == T::ZERO {
            // A constant window: no autocorrelation to estimate.
            return Ok(T::ONE);
        }
        let variance = c0 * nf / (nf - T::ONE);
        let rho = |k: usize| T::ONE - (variance - self.autocovariance(mean, k)) / c0;

        // The initial positive sequence, and over the pairs wholly below its end the
        // monotone cap, in one pass.
        let (mut even, mut odd) = (T::ONE, rho(1));
        let (mut sum, mut previous) = (T::ZERO, T::ZERO);
        let mut t = 0;
        let mut accepted = true;
        while t + 4 < n && even + odd > T::ZERO {
            // The pair at t is below the truncation lag: capped by the pair before it.
            if t >= 2 && even + odd > previous {
                even = previous * T::HALF;
                odd = previous * T::HALF;
            }
            sum = sum + even + odd;
            previous = even + odd;
            t += 2;
            even = rho(t);
            odd = rho(t + 1);
            accepted = even + odd >= T::ZERO;
        }
        // ρ̂_T: the accepted value whatever its sign, else its positive part.
        let last = if accepted || even > T::ZERO {
            even
        } else {
            T::ZERO
        };
        let tau = -T::ONE + T::TWO * sum + last;
        let floor = T::ONE / (nf.ln() / T::from_f64(core::f64::consts::LN_10));
        Ok(tau.max(floor))
    }

    /// The oldest-first draws: the ring from `next` on, then up to `next` (the first `len`
    /// entries until it is full).
    fn draws(&self) -> impl Iterator<Item = T> + '_ {
        let (newer, older) = if self.len < W {
            (self.ring.get(..self.len).unwrap_or(&[]), &[][..])
        } else {
            self.ring
                .split_at_checked(self.next)
                .unwrap_or((&self.ring, &[]))
        };
        older.iter().chain(newer).copied()
    }

    /// ĉₖ = (1/n) Σₜ (xₜ − x̄)(xₜ₊ₖ − x̄).
    fn autocovariance(&self, mean: T, lag: usize) -> T {
        let sum = self
            .draws()
            .zip(self.draws().skip(lag))
            .fold(T::ZERO, |s, (a, b)| s + (a - mean) * (b - mean));
        sum / T::from_usize(self.len)
    }
}

/// An [`Observer`] that counts divergent steps, and can stop a run at the first.
///
/// A step is divergent when its kinetic temperature exceeds a limit (default 100: at
/// stationarity it is about 1, within a few √(2/d)), or when an HMC proposal's acceptance
/// probability is at or below a floor (default 0, i.e. an energy error beyond the float's
/// `exp` range: about 745 in f64 and 103 in f32, near Stan's 1000). Samplers already refuse a
/// step whose state is not finite ([`crate::StepError`]); this sees the ones that heat up
/// first. Use it as the observer of [`crate::sampler::Sampler::run`], or call
/// [`DivergenceMonitor::check`] from your own.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DivergenceMonitor<T> {
    temperature_limit: T,
    acceptance_floor: T,
    stop: bool,
    divergent: u64,
    first: Option<u64>,
}

impl<T: Real> Default for DivergenceMonitor<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real> DivergenceMonitor<T> {
    /// Counts, never stops; the default limits.
    pub fn new() -> Self {
        DivergenceMonitor {
            temperature_limit: T::from_f64(100.0),
            acceptance_floor: T::ZERO,
            stop: false,
            divergent: 0,
            first: None,
        }
    }

    /// A kinetic temperature above `limit` (finite, > 1) is divergent.
    pub fn with_temperature_limit(self, limit: T) -> Result<Self, DiagnosticError> {
        if limit.is_finite() && limit > T::ONE {
            Ok(DivergenceMonitor {
                temperature_limit: limit,
                ..self
            })
        } else {
            Err(DiagnosticError::TemperatureLimit)
        }
    }

    /// An HMC acceptance probability at or below `floor` (in [0, 1)) is divergent.
    pub fn with_acceptance_floor(self, floor: T) -> Result<Self, DiagnosticError> {
        if floor >= T::ZERO && floor < T::ONE {
            Ok(DivergenceMonitor {
                acceptance_floor: floor,
                ..self
            })
        } else {
            Err(DiagnosticError::AcceptanceFloor)
        }
    }

    /// Stops the run (`ControlFlow::Break` with the step's index) at the first divergence.
    pub fn stopping(self) -> Self {
        DivergenceMonitor { stop: true, ..self }
    }

    /// Whether `stats` is divergent by the limits.
    pub fn is_divergent(&self, stats: &StepStats<T>) -> bool {
        let hot = stats
            .kinetic_temperature
            .is_some_and(|t| t > self.temperature_limit || !t.is_finite());
        let rejected = stats
            .acceptance
            .is_some_and(|a| a <= self.acceptance_floor || !a.is_finite());
        hot || rejected
    }

    /// Records step `step`: counts it if divergent; `true` if it was.
    pub fn check(&mut self, step: u64, stats: &StepStats<T>) -> bool {
        let divergent = self.is_divergent(stats);
        if divergent {
            self.divergent = self.divergent.saturating_add(1);
            self.first.get_or_insert(step);
        }
        divergent
    }

    /// Divergent steps seen.
    pub fn divergent(&self) -> u64 {
        self.divergent
    }

    /// The index of the first divergent step seen.
    pub fn first_divergence(&self) -> Option<u64> {
        self.first
    }
}

impl<S: ?Sized, T: Real> Observer<S, T> for DivergenceMonitor<T> {
    /// The index of the divergent step that stopped the run.
    type Stop = u64;
    fn observe(&mut self, step: u64, _sampler: &mut S, stats: &StepStats<T>) -> ControlFlow<u64> {
        if self.check(step, stats) && self.stop {
            ControlFlow::Break(step)
        } else {
            ControlFlow::Continue(())
        }
    }
}
