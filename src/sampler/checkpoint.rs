//! Checkpoint and resume: [`Checkpoint`] exports a sampler's complete state into caller memory and restores it, bit for bit.

use crate::error::{Buffer, LayoutError};
use crate::integrator::state::check_finite;
use crate::lanes::copy_into;
use crate::real::Real;
use crate::rows::{Fitted, carve};

/// Export and import of a sampler's complete state.
///
/// A chain's state is the caller's generator plus what [`Checkpoint::save`] exports: the
/// buffers (θ, p, ξ, a cached ∇U, MCEM's statistics and M⁻¹) into a caller slice of
/// [`Checkpoint::checkpoint_len`] entries, and the scalars (counters, cached U, thermostat
/// scalars, pending MCEM offsets) as a small `Copy` value. To resume, build a sampler of the
/// same kind, settings and dimension over any buffers and call [`Checkpoint::restore`] with both
/// parts and a clone of the generator: the chain then continues exactly as if it had never
/// stopped (`tests/checkpoint.rs` checks this bit for bit for every sampler × integrator × float
/// type, at checkpoints that no resampling period divides and in the middle of MCEM batches).
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// use sgmcmc::sampler::Checkpoint;
///
/// let model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
/// let (mut theta, mut work) = ([1.0f64; 3], [0.0; 6]);
/// let params = SgldParams::with_schedule(StepSchedule::polynomial(0.1, 1.0, 0.55).unwrap());
/// let mut sgld = Sgld::new(params, &mut theta, &mut work).unwrap();
/// let mut rng = Pcg64::new(1, 2);
/// sgld.run(&mut { model }, &mut rng, 10, &mut ()).unwrap();
/// // Save: the buffers into caller memory, the scalars (here the schedule's t) as a value.
/// let mut saved = vec![0.0; sgld.checkpoint_len()];
/// let state = sgld.save(&mut saved).unwrap();
/// let saved_rng = rng.clone();
/// // ... later, anywhere: a new sampler over new buffers, restored.
/// let (mut theta2, mut work2) = ([0.0f64; 3], [0.0; 6]);
/// let mut resumed = Sgld::new(params, &mut theta2, &mut work2).unwrap();
/// resumed.restore(&state, &saved).unwrap();
/// assert_eq!(resumed.iteration(), 10);
/// # let _ = saved_rng;
/// ```
pub trait Checkpoint<T: Real> {
    /// The scalar part of the state: counters, cached values, thermostat scalars. An opaque
    /// `Copy` value: keep it with the saved buffer and hand both to [`Checkpoint::restore`].
    type State: Copy + core::fmt::Debug;

    /// The number of entries [`Checkpoint::save`] writes.
    fn checkpoint_len(&self) -> usize;

    /// Writes the buffer part of the state into `out` ([`Checkpoint::checkpoint_len`] entries,
    /// else [`LayoutError::LengthMismatch`] on [`Buffer::Checkpoint`] with nothing written) and
    /// returns the scalar part.
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError>;

    /// Restores a state saved by a sampler of the same kind, settings and dimension. Errors
    /// ([`LayoutError::LengthMismatch`] for `data` of the wrong length,
    /// [`LayoutError::InvalidValue`] on [`Buffer::Checkpoint`] for a non-finite θ, p or ξ)
    /// leave the sampler unchanged.
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError>;
}

/// Writes `parts` one after another into `out`, which must hold exactly their total length.
pub(crate) fn write_parts<T: Copy>(out: &mut [T], parts: &[&[T]]) -> Result<(), LayoutError> {
    let total = parts.iter().fold(0usize, |n, p| n.saturating_add(p.len()));
    check_checkpoint_len(total, out.len())?;
    let mut rest = out;
    for part in parts {
        copy_into(carve(&mut rest, part.len()), part);
    }
    Ok(())
}

/// Splits `data` into `K` consecutive pieces of `lens` (their total must be `data.len()`); the
/// first `finite` pieces (θ, p, ξ) must hold finite values.
pub(crate) fn read_parts<T: Real, const K: usize>(
    data: &[T],
    lens: [usize; K],
    finite: usize,
) -> Result<[&[T]; K], LayoutError> {
    let total = lens.iter().fold(0usize, |n, &l| n.saturating_add(l));
    check_checkpoint_len(total, data.len())?;
    let mut parts: [&[T]; K] = [&[]; K];
    let mut rest = data;
    let mut offset = 0;
    for (k, (part, &len)) in parts.iter_mut().zip(&lens).enumerate() {
        let (head, tail) = rest.split_fitted(len.min(rest.len()));
        if k < finite {
            check_finite(Buffer::Checkpoint, head).map_err(|e| match e {
                LayoutError::InvalidValue { buffer, index } => LayoutError::InvalidValue {
                    buffer,
                    index: offset + index,
                },
                other => other,
            })?;
        }
        *part = head;
        rest = tail;
        offset += len;
    }
    Ok(parts)
}

fn check_checkpoint_len(expected: usize, found: usize) -> Result<(), LayoutError> {
    if expected == found {
        Ok(())
    } else {
        Err(LayoutError::LengthMismatch {
            buffer: Buffer::Checkpoint,
            expected,
            found,
        })
    }
}

/// The scalar part of a checkpoint of SGLD, SGHMC, SGNHT, mSGNHT, SGMGT, HMC and SG-NPHMC
/// ([`Checkpoint::State`]): whichever of these the sampler has.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Scalars<T> {
    /// Steps taken (SGLD's schedule t, SGMGT's resampling clock).
    pub(crate) steps: u64,
    /// Coordinates redrawn and proposals used (the SDE samplers' statistics).
    pub(crate) redrawn: (u64, u64),
    /// SGNHT's scalar ξ, SG-NPHMC's s.
    pub(crate) thermostat: Option<T>,
    /// SG-NPHMC's q.
    pub(crate) thermostat_momentum: Option<T>,
    /// SG-NPHMC's H₀.
    pub(crate) energy_level: Option<T>,
    /// The cached U(θ) of HMC and SG-NPHMC (with ∇U in the buffer part).
    pub(crate) energy: Option<T>,
    /// SG-NPHMC's thermostat mass Q (which SG-NPHMC-EM learns).
    pub(crate) thermostat_mass: Option<T>,
}

/// The first word of [`Scalars::to_words`]: "SGSC", format version 1, then a presence mask.
const SCALARS_TAG: u64 = 0x5347_5343_0001_0000;
/// The bits of the tag's presence mask: one per optional scalar.
const SCALARS_MASK: u64 = 0b1_1111;

/// The float stored in `word` as the bits of its `f64` value (the encodings' `to_words`):
/// [`LayoutError::InvalidValue`] on [`Buffer::Checkpoint`] at `index` unless it is finite and
/// `T` holds it exactly (words written for `f64` read as `f32` are refused, not rounded).
pub(crate) fn real_from_word<T: Real>(word: u64, index: usize) -> Result<T, LayoutError> {
    statistic_from_word(word, index).and_then(|value: T| {
        if value.is_finite() {
            Ok(value)
        } else {
            Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index,
            })
        }
    })
}

/// [`real_from_word`] for a running statistic, which may be ±∞ or NaN: only exactness in `T`
/// is checked (a word written from an `f32`, NaN included, reads back to the same bits).
pub(crate) fn statistic_from_word<T: Real>(word: u64, index: usize) -> Result<T, LayoutError> {
    let value = T::from_f64(f64::from_bits(word));
    if value.to_f64().to_bits() == word {
        Ok(value)
    } else {
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        })
    }
}

/// A wrapper's copy of its sampler's [`Scalars::to_words`], written into `words` from `at`.
pub(crate) fn put_scalars<T: Real>(words: &mut [u64], at: usize, scalars: &Scalars<T>) {
    for (w, &s) in words.iter_mut().skip(at).zip(&scalars.to_words()) {
        *w = s;
    }
}

/// The sampler's [`Scalars`] embedded in a wrapper's words from `at` ([`put_scalars`]), read
/// as [`Scalars::from_words`] reads them; a refusal names the word's index in `words`.
pub(crate) fn scalars_at<T: Real>(words: &[u64], at: usize) -> Result<Scalars<T>, LayoutError> {
    let mut inner = [0u64; SCALARS_WORDS];
    for (w, &s) in inner.iter_mut().zip(words.iter().skip(at)) {
        *w = s;
    }
    Scalars::from_words(&inner).map_err(|e| match e {
        LayoutError::InvalidValue { buffer, index } => LayoutError::InvalidValue {
            buffer,
            index: index.saturating_add(at),
        },
        other => other,
    })
}

/// The length of [`Scalars::to_words`].
pub const SCALARS_WORDS: usize = 9;

impl<T: Real> Scalars<T> {
    /// The scalars as plain words, for storing a checkpoint outside the process (a file, a
    /// message to another machine): a tag with the format version and which scalars are
    /// present, the three counters, then each scalar as the bits of its `f64` value (an `f32`
    /// widens exactly), 0 when absent. [`Scalars::from_words`] reads them back exactly.
    ///
    /// ```
    /// use sgmcmc::prelude::*;
    /// use sgmcmc::sampler::{Checkpoint, SCALARS_WORDS, Scalars};
    ///
    /// let (mut theta, mut p, mut xi, mut work) = ([0.5f32; 2], [0.0; 2], [1.0; 1], [0.0; 4]);
    /// let mut sgnht = Sgnht::new(SgnhtParams::new(0.01), &mut theta, &mut p, &mut xi, &mut work)
    ///     .unwrap();
    /// let mut rng = rand_pcg::Pcg64::new(3, 0);
    /// sgnht.run(&mut |t: &[f32], g: &mut [f32]| g.copy_from_slice(t), &mut rng, 5, &mut ())
    ///     .unwrap();
    /// let mut data = vec![0.0f32; sgnht.checkpoint_len()];
    /// let state = sgnht.save(&mut data).unwrap();
    /// let words: [u64; SCALARS_WORDS] = state.to_words();
    /// assert_eq!(Scalars::<f32>::from_words(&words), Ok(state));
    /// ```
    pub fn to_words(&self) -> [u64; SCALARS_WORDS] {
        let optional = [
            self.thermostat,
            self.thermostat_momentum,
            self.energy_level,
            self.energy,
            self.thermostat_mass,
        ];
        let mut words = [0u64; SCALARS_WORDS];
        words[0] = SCALARS_TAG;
        words[1] = self.steps;
        words[2] = self.redrawn.0;
        words[3] = self.redrawn.1;
        for (k, value) in optional.iter().enumerate() {
            if let Some(v) = value {
                words[0] |= 1 << k;
                words[4 + k] = v.to_f64().to_bits();
            }
        }
        words
    }

    /// Reads [`Scalars::to_words`] back. [`LayoutError::InvalidValue`] on
    /// [`Buffer::Checkpoint`] (at the index of the offending word) for a tag of another format
    /// or version, a word set for an absent scalar, a scalar that is not finite, or an `f64`
    /// that the float type `T` does not hold exactly (words written for `f64` read as `f32`).
    pub fn from_words(words: &[u64; SCALARS_WORDS]) -> Result<Self, LayoutError> {
        let invalid = |index| LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        };
        if words[0] & !SCALARS_MASK != SCALARS_TAG {
            return Err(invalid(0));
        }
        let mut optional = [None; 5];
        for (k, slot) in optional.iter_mut().enumerate() {
            let word = words[4 + k];
            if words[0] & (1 << k) == 0 {
                if word != 0 {
                    return Err(invalid(4 + k));
                }
                continue;
            }
            *slot = Some(real_from_word(word, 4 + k)?);
        }
        let [
            thermostat,
            thermostat_momentum,
            energy_level,
            energy,
            thermostat_mass,
        ] = optional;
        Ok(Scalars {
            steps: words[1],
            redrawn: (words[2], words[3]),
            thermostat,
            thermostat_momentum,
            energy_level,
            energy,
            thermostat_mass,
        })
    }

    /// Whether every value present is finite (a checkpoint of a finite state).
    pub(crate) fn finite(&self) -> bool {
        [
            self.thermostat,
            self.thermostat_momentum,
            self.energy_level,
            self.energy,
            self.thermostat_mass,
        ]
        .iter()
        .all(|x| x.is_none_or(|x| x.is_finite()))
    }

    /// [`LayoutError::InvalidValue`] on [`Buffer::Checkpoint`] unless [`Scalars::finite`].
    pub(crate) fn check(&self) -> Result<(), LayoutError> {
        if self.finite() {
            Ok(())
        } else {
            Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: 0,
            })
        }
    }
}

/// MCEM's rollback of an E-step: everything an E-step can change in its sampler, saved before
/// it by the MCEM wrapper so that a failed MCEM step can put the sampler back bit for bit (the state contract): θ, p, the
/// cached ∇U (HMC, SG-NPHMC), and the scalars — the thermostat (SGNHT's ξ, SG-NPHMC's s and
/// q), H₀ and the cached U, and the redraw counters.
#[derive(Debug)]
pub struct SavedState<'w, T> {
    /// θ (d entries).
    pub theta: &'w mut [T],
    /// p (d entries).
    pub p: &'w mut [T],
    /// The cached ∇U (d entries; unused by the SDE samplers).
    pub grad: &'w mut [T],
    /// Up to four scalars, each sampler its own.
    pub scalars: [Option<T>; 4],
    /// The redraw counters of the SDE samplers.
    pub counts: (u64, u64),
    /// HMC's leapfrog count L, which its E-step sets to LP_S: a failed MCEM step puts the
    /// caller's back (issue 33, F7).
    pub leapfrog_steps: u32,
}

/// What the MCEM wrapper's rollback needs of a sampler: its E-step state into a
/// [`SavedState`] before the step, and back, bit for bit, after a failed one.
pub(crate) trait Rollback<T> {
    /// Saves what an E-step can change.
    fn save_state(&self, saved: &mut SavedState<'_, T>);
    /// Restores what [`Rollback::save_state`] saved.
    fn restore_state(&mut self, saved: &SavedState<'_, T>);
}
