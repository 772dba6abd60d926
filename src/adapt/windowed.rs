//! Stan's windowed warm-up for HMC: the step size by dual averaging throughout, and a diagonal inverse mass from the variances of θ over doubling windows.

use super::dual_averaging::{AdaptationStop, DualAveraging};
use crate::error::{Buffer, Error, LinalgError, Param, ParamError};
use crate::integrator::state::{check_len, check_nonempty};
use crate::kinetic::AdaptiveMass;
use crate::lanes::copy_into;
use crate::real::Real;
use crate::rows::Fitted;
use crate::sampler::{ChainState, Checkpoint, Observer, StepSize, StepStats};
use core::ops::ControlFlow;

/// Stan's warm-up (Stan Reference Manual, *HMC algorithm parameters*, "Automatic parameter
/// tuning"): an [`Observer`] for the W warm-up proposals of an HMC whose mass is a diagonal
/// [`MassBuffer`](crate::kinetic::MassBuffer).
///
/// * Proposals 1…`initial` (75): dual averaging only ([`DualAveraging`], restarted below).
/// * Then slow windows of `base` (25), 2·25, 4·25, … proposals, the last stretched to end
///   `terminal` (50) proposals before W: over each window the running variance of every θᵢ is
///   kept (Welford), and at its end M⁻¹ᵢ is set to Stan's regularised variance
///   (k/(k + 5))·s²ᵢ + 10⁻³·5/(k + 5) (k draws) and dual averaging restarts from the current
///   step size, as Stan's does.
/// * The last `terminal` proposals: dual averaging only. At proposal W the sampler gets h̄.
///
/// Stan's fallback for short warm-ups is kept: if `initial + terminal + base` > W, the buffers
/// become 15 % and 10 % of W and the one window the rest; below W = 20 only the step size
/// adapts. After W proposals the observer does
/// nothing. The running variance lives in a caller workspace of 3n entries (mean, sum of
/// squared deviations, and the new M⁻¹).
///
/// A `Break` leaves the sampler and the adaptation as they were before the proposal it saw,
/// with one exception: at the end of a window, once the sampler's mass has been found to take
/// n entries, the window's statistics are folded into the new M⁻¹ before the mass and the step
/// size are set; should either then be refused (a variance that overflowed, a step size the
/// sampler does not take — neither happens with finite draws and the tuner's clamped h), the
/// run stops with the window's statistics spent.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::adapt::WindowedAdaptation;
/// use sgmcmc::kinetic::AdaptiveMass;
/// use sgmcmc::prelude::*;
///
/// // N(0, diag(0.01, 100)): the identity mass would need h ≈ 0.1.
/// let mut model = Model::new(
///     |t: &[f64], g: &mut [f64]| { g[0] = t[0] / 0.01; g[1] = t[1] / 100.0; },
///     |t: &[f64]| 0.5 * (t[0] * t[0] / 0.01 + t[1] * t[1] / 100.0),
/// );
/// let (mut theta, mut p, mut work, mut inv_mass) = ([0.1, 1.0], [0.0; 2], [0.0; 8], [1.0; 2]);
/// let mut hmc = Hmc::new(HmcParams::new(0.1).with_leapfrog_steps(10), &mut theta, &mut p, &mut work)
///     .unwrap();
/// hmc.set_mass(MassBuffer::diagonal(&mut inv_mass).unwrap()).unwrap();
/// let mut adaptation_work = [0.0; 6];
/// let mut warm_up = WindowedAdaptation::new(1000, 0.1, &mut adaptation_work).unwrap();
/// hmc.run(&mut model, &mut Pcg64::new(1, 2), 1000, &mut warm_up).unwrap();
/// let m = hmc.mass().inverse_slice();
/// assert!(m[1] / m[0] > 1000.0); // ≈ 100 / 0.01
/// ```
#[derive(Debug)]
pub struct WindowedAdaptation<'b, T> {
    tuner: DualAveraging<T>,
    target: T,
    warm_up: u64,
    initial: u64,
    terminal: u64,
    base: u64,
    /// The end (exclusive, in proposals) of the current slow window.
    window_end: u64,
    /// The size of the current slow window.
    window: u64,
    proposals: u64,
    /// The last slow window has closed.
    slow_done: bool,
    mean: &'b mut [T],
    squares: &'b mut [T],
    estimate: &'b mut [T],
    draws: u64,
}

impl<'b, T: Real> WindowedAdaptation<'b, T> {
    /// A warm-up of `warm_up` proposals starting from the step size `initial_step` (finite and
    /// positive), with Stan's buffers (75, 50), first window (25) and target acceptance 0.8,
    /// over a workspace of 3n entries (n = θ's length).
    pub fn new(warm_up: u64, initial_step: T, work: &'b mut [T]) -> Result<Self, Error> {
        let tuner = DualAveraging::new(initial_step)?;
        let n = work.len() / 3;
        check_nonempty(n)?;
        check_len(Buffer::Workspace, n.saturating_mul(3), work.len())?;
        work.fill(T::ZERO);
        let (mean, rest) = work.split_fitted_mut(n);
        let (squares, estimate) = rest.split_fitted_mut(n);
        let mut adaptation = WindowedAdaptation {
            tuner,
            target: T::from_f64(0.8),
            warm_up,
            initial: 75,
            terminal: 50,
            base: 25,
            window_end: 0,
            window: 0,
            proposals: 0,
            slow_done: false,
            mean,
            squares,
            estimate,
            draws: 0,
        };
        adaptation.plan();
        Ok(adaptation)
    }

    /// The target acceptance δ ∈ (0, 1) of the dual averaging (default 0.8).
    pub fn with_target(mut self, target: T) -> Result<Self, ParamError> {
        self.tuner = self.tuner.with_target(target)?;
        self.target = target;
        Ok(self)
    }

    /// The buffers and first window (Stan's `adapt_init_buffer`, `adapt_term_buffer`,
    /// `adapt_window`; 75, 50, 25 by default; the window ≥ 1).
    pub fn with_windows(
        mut self,
        initial: u64,
        terminal: u64,
        base: u64,
    ) -> Result<Self, ParamError> {
        if base == 0 {
            return Err(ParamError::OutOfRange(Param::AdaptationWindow));
        }
        (self.initial, self.terminal, self.base) = (initial, terminal, base);
        self.plan();
        Ok(self)
    }

    /// Stan's short-warm-up fallback, and the first window.
    fn plan(&mut self) {
        let w = self.warm_up;
        let needed = self
            .initial
            .saturating_add(self.terminal)
            .saturating_add(self.base);
        if w < 20 {
            // Stan adapts only the step size in a warm-up this short.
            self.base = 0;
        } else if needed > w {
            self.initial = w * 15 / 100;
            self.terminal = w / 10;
            self.base = w.saturating_sub(self.initial + self.terminal);
        }
        self.window = self.base;
        self.window_end = self.stretched(self.initial.saturating_add(self.base));
        self.slow_done = self.base == 0;
    }

    /// A window ending at `end`, stretched to the terminal buffer when the next, doubled one
    /// would not fit before it.
    fn stretched(&self, end: u64) -> u64 {
        let slow_end = self.warm_up.saturating_sub(self.terminal);
        if end.saturating_add(self.window.saturating_mul(2)) > slow_end {
            slow_end
        } else {
            end
        }
    }

    /// The proposals observed.
    pub fn proposals(&self) -> u64 {
        self.proposals
    }

    /// The dual averaging in force (its h̄ is the step size after the warm-up).
    pub fn step_size_tuner(&self) -> &DualAveraging<T> {
        &self.tuner
    }

    /// The end of the current slow window, in proposals.
    pub fn window_end(&self) -> u64 {
        self.window_end
    }

    /// Welford's update of the window's variance with θ.
    fn accumulate(&mut self, theta: &[T]) {
        self.draws += 1;
        let k = T::from_u64(self.draws);
        let all = self.mean.iter_mut().zip(self.squares.iter_mut()).zip(theta);
        for ((m, s), &x) in all {
            let d = x - *m;
            *m += d / k;
            *s += d * (x - *m);
        }
    }

    /// The regularised variance into `estimate`; then the window statistics restart.
    fn close_window(&mut self) {
        let k = T::from_u64(self.draws);
        let five = T::from_f64(5.0);
        let shrink = k / (k + five);
        let floor = T::from_f64(1e-3) * five / (k + five);
        let denominator = (k - T::ONE).max(T::ONE);
        for (e, s) in self.estimate.iter_mut().zip(self.squares.iter()) {
            *e = shrink * (*s / denominator) + floor;
        }
        self.mean.fill(T::ZERO);
        self.squares.fill(T::ZERO);
        self.draws = 0;
    }
}

impl<S, T> Observer<S, T> for WindowedAdaptation<'_, T>
where
    T: Real,
    S: StepSize<T> + AdaptiveMass<T> + ChainState<T> + ?Sized,
{
    type Stop = AdaptationStop;
    fn observe(
        &mut self,
        _step: u64,
        sampler: &mut S,
        stats: &StepStats<T>,
    ) -> ControlFlow<AdaptationStop> {
        if self.proposals >= self.warm_up {
            return ControlFlow::Continue(());
        }
        let Some(acceptance) = stats.acceptance else {
            return ControlFlow::Break(AdaptationStop::NoAcceptance);
        };
        // The step's updates go to copies (the tuner, the counter) and are committed once the
        // sampler took them: a `Break` leaves the adaptation as it was (see the type's docs for
        // the one exception).
        let t = self.proposals + 1;
        let mut tuner = self.tuner;
        let mut next = tuner.update(acceptance);
        let slow_start = self.window_end.saturating_sub(self.window);
        let in_window = !self.slow_done && t > slow_start && t <= self.window_end;
        let closing = !self.slow_done && t == self.window_end;
        if t == self.warm_up && !closing {
            next = tuner.final_step_size();
        }
        if !closing {
            if let Err(e) = sampler.set_step_size(next) {
                return ControlFlow::Break(AdaptationStop::StepSize(e));
            }
            if in_window {
                self.accumulate(sampler.position());
            }
            self.tuner = tuner;
            self.proposals = t;
            return ControlFlow::Continue(());
        }
        // A window closes. Whether the sampler's mass takes a new diagonal M⁻¹ is asked first,
        // with an empty slice, which every mass refuses without a change (`ReadOnly` for the
        // identity and a fixed diagonal, a dimension mismatch naming the length it expects
        // otherwise): a mass that cannot take n entries stops the adaptation before anything
        // moved.
        let n = self.estimate.len();
        match sampler.set_inverse_mass(&[]) {
            Err(LinalgError::DimensionMismatch { expected, .. }) if expected == n => {}
            Err(e) => return ControlFlow::Break(AdaptationStop::Mass(e)),
            Ok(()) => {
                let found = 0;
                let e = LinalgError::DimensionMismatch { expected: n, found };
                return ControlFlow::Break(AdaptationStop::Mass(e));
            }
        }
        self.accumulate(sampler.position());
        self.close_window();
        if let Err(e) = sampler.set_inverse_mass(self.estimate) {
            return ControlFlow::Break(AdaptationStop::Mass(e));
        }
        // Stan restarts the step-size adaptation after every metric update.
        let restarted = DualAveraging::new(next).and_then(|d| d.with_target(self.target));
        let tuner = match restarted {
            Ok(d) => d,
            Err(e) => return ControlFlow::Break(AdaptationStop::StepSize(e)),
        };
        if t == self.warm_up {
            next = tuner.final_step_size();
        }
        if let Err(e) = sampler.set_step_size(next) {
            return ControlFlow::Break(AdaptationStop::StepSize(e));
        }
        self.tuner = tuner;
        self.proposals = t;
        if self.window_end >= self.warm_up.saturating_sub(self.terminal) {
            self.slow_done = true;
        } else {
            self.window = self.window.saturating_mul(2);
            self.window_end = self.stretched(self.window_end.saturating_add(self.window));
        }
        ControlFlow::Continue(())
    }
}

impl<T> WindowedAdaptation<'_, T> {
    /// The workspace length for n coordinates: 3n (the window's mean and squared deviations, and
    /// the new M⁻¹).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(3)
    }
}

/// The scalar part of a [`WindowedAdaptation`] checkpoint ([`Checkpoint::State`]): the step-size
/// tuner, the proposals seen, where the current window ends and how long it is, whether the
/// slow windows are done, and the draws in the current window. Opaque: keep it with the saved
/// buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowedScalars<T> {
    tuner: DualAveraging<T>,
    proposals: u64,
    window_end: u64,
    window: u64,
    slow_done: bool,
    draws: u64,
}

/// The window's running mean and sum of squared deviations and the last M⁻¹ estimate (3n
/// entries); the scalars of [`WindowedScalars`]. Restore into an adaptation built with the same
/// warm-up length, settings and dimension: the warm-up then continues bit for bit.
impl<T: Real> Checkpoint<T> for WindowedAdaptation<'_, T> {
    type State = WindowedScalars<T>;
    fn checkpoint_len(&self) -> usize {
        Self::workspace_len(self.mean.len())
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, crate::error::LayoutError> {
        crate::sampler::write_parts(out, &[self.mean, self.squares, self.estimate])?;
        Ok(WindowedScalars {
            tuner: self.tuner,
            proposals: self.proposals,
            window_end: self.window_end,
            window: self.window,
            slow_done: self.slow_done,
            draws: self.draws,
        })
    }
    /// Errors, with nothing changed: the lengths ([`crate::error::LayoutError::LengthMismatch`]),
    /// a non-finite entry, a negative sum of squares or estimate
    /// ([`crate::error::LayoutError::InvalidValue`] on [`Buffer::Checkpoint`], at its index).
    fn restore(
        &mut self,
        state: &Self::State,
        data: &[T],
    ) -> Result<(), crate::error::LayoutError> {
        let n = self.mean.len();
        let [mean, squares, estimate] = crate::sampler::read_parts(data, [n, n, n], 3)?;
        let negative = squares
            .iter()
            .chain(estimate.iter())
            .position(|v| *v < T::ZERO);
        if let Some(k) = negative {
            return Err(crate::error::LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: n + k,
            });
        }
        copy_into(self.mean, mean);
        copy_into(self.squares, squares);
        copy_into(self.estimate, estimate);
        self.tuner = state.tuner;
        self.proposals = state.proposals;
        self.window_end = state.window_end;
        self.window = state.window;
        self.slow_done = state.slow_done;
        self.draws = state.draws;
        Ok(())
    }
}
