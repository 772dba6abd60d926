//! The layout of MCMC output for the diagnostics: [`Draws`] (chains × draws × dimensions) and the [`DrawCollector`] that records a chain.
//!
//! A run of `m` chains of `n` draws each of a `d`-dimensional parameter is stored flat, chain-major:
//! the value of dimension `j` at draw `t` of chain `c` is `data[(c·n + t)·d + j]`. The scalar
//! diagnostics ([`ess`](fn@super::ess), [`split_rhat`](fn@super::split_rhat), …) take one series per
//! chain as `&[C]` with `C: AsRef<[f64]>` (e.g. `&[Vec<f64>]` or `&[&[f64]]`);
//! [`Draws::dimension`] extracts those series for one dimension.
//!
//! Splitting (Gelman et al. 2013, BDA3 §11.4; Vehtari et al. 2021): a chain of `n` draws becomes
//! its first `⌊n/2⌋` and its last `⌊n/2⌋` draws; for odd `n` the middle draw is dropped, as Stan,
//! the R package `posterior` and ArviZ do.

use sgmcmc::sampler::{ChainState, Observer, StepStats};
use sgmcmc_diagnostics::DiagnosticError;
use std::convert::Infallible;
use std::ops::ControlFlow;

/// Draws of a `d`-dimensional parameter from `m ≥ 1` chains of `n ≥ 1` draws each, all finite.
#[derive(Clone, Debug, PartialEq)]
pub struct Draws {
    data: Vec<f64>,
    chains: usize,
    draws: usize,
    dims: usize,
}

impl Draws {
    /// Wraps a flat chain-major buffer: `data[(c·draws + t)·dims + j]`.
    ///
    /// Requires `chains, draws, dims ≥ 1`, `data.len() = chains·draws·dims` and every value
    /// finite; otherwise returns [`DiagnosticError::InvalidArgument`],
    /// [`DiagnosticError::MismatchedLengths`] or [`DiagnosticError::NonFinite`].
    pub fn from_flat(
        data: Vec<f64>,
        chains: usize,
        draws: usize,
        dims: usize,
    ) -> Result<Self, DiagnosticError> {
        if chains == 0 || draws == 0 || dims == 0 {
            return Err(DiagnosticError::InvalidArgument(
                "chains, draws and dimensions must all be at least 1",
            ));
        }
        let expected = chains
            .checked_mul(draws)
            .and_then(|x| x.checked_mul(dims))
            .ok_or(DiagnosticError::InvalidArgument(
                "chains·draws·dims overflows",
            ))?;
        if data.len() != expected {
            return Err(DiagnosticError::MismatchedLengths {
                expected,
                got: data.len(),
            });
        }
        if data.iter().any(|x| !x.is_finite()) {
            return Err(DiagnosticError::NonFinite);
        }
        Ok(Draws {
            data,
            chains,
            draws,
            dims,
        })
    }

    /// Builds from nested vectors: `chains[c][t][j]`.
    ///
    /// Requires at least one chain, every chain of the same non-zero number of draws, every draw
    /// of the same non-zero dimension, and every value finite.
    pub fn from_nested<C, V>(chains: &[C]) -> Result<Self, DiagnosticError>
    where
        C: AsRef<[V]>,
        V: AsRef<[f64]>,
    {
        let first = chains
            .first()
            .ok_or(DiagnosticError::TooFewChains { needed: 1, got: 0 })?;
        let draws = first.as_ref().len();
        let dims = first.as_ref().first().map_or(0, |v| v.as_ref().len());
        let mut data = Vec::with_capacity(chains.len() * draws * dims);
        for chain in chains {
            let chain = chain.as_ref();
            if chain.len() != draws {
                return Err(DiagnosticError::MismatchedLengths {
                    expected: draws,
                    got: chain.len(),
                });
            }
            for draw in chain {
                let draw = draw.as_ref();
                if draw.len() != dims {
                    return Err(DiagnosticError::MismatchedLengths {
                        expected: dims,
                        got: draw.len(),
                    });
                }
                data.extend_from_slice(draw);
            }
        }
        Draws::from_flat(data, chains.len(), draws, dims)
    }

    /// Number of chains `m`.
    pub fn chains(&self) -> usize {
        self.chains
    }

    /// Number of draws per chain `n`.
    pub fn draws(&self) -> usize {
        self.draws
    }

    /// Dimension `d` of the parameter.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The flat chain-major buffer.
    pub fn as_flat(&self) -> &[f64] {
        &self.data
    }

    /// The parameter vector at draw `t` of chain `c`, or `None` if either is out of range.
    pub fn draw(&self, c: usize, t: usize) -> Option<&[f64]> {
        if c >= self.chains || t >= self.draws {
            return None;
        }
        let start = (c * self.draws + t) * self.dims;
        Some(&self.data[start..start + self.dims])
    }

    /// The series of dimension `j`, one `Vec` per chain, or `None` if `j ≥ dims`.
    pub fn dimension(&self, j: usize) -> Option<Vec<Vec<f64>>> {
        if j >= self.dims {
            return None;
        }
        Some(
            (0..self.chains)
                .map(|c| {
                    (0..self.draws)
                        .map(|t| self.data[(c * self.draws + t) * self.dims + j])
                        .collect()
                })
                .collect(),
        )
    }
}

/// Records one chain's positions as it runs: an [`Observer`] of
/// [`Sampler::run`](sgmcmc::sampler::Sampler::run) that keeps θ after every `thin`-th step from
/// step `burn_in` on (steps counted from 0), each passed through `map` first (e.g. log τ → τ).
///
/// The draws are stored flat, draw-major: value `j` of draw `t` at `as_flat()[t·dims + j]`.
#[derive(Clone, Debug)]
pub struct DrawCollector {
    data: Vec<f64>,
    dims: usize,
    burn_in: u64,
    thin: u64,
    map: Option<fn(&mut [f64])>,
}

impl DrawCollector {
    /// Keeps every draw of a `dims`-dimensional θ.
    pub fn new(dims: usize) -> Self {
        DrawCollector {
            data: Vec::new(),
            dims,
            burn_in: 0,
            thin: 1,
            map: None,
        }
    }

    /// Skips the first `steps` steps.
    pub fn burn_in(self, steps: usize) -> Self {
        DrawCollector {
            burn_in: steps as u64,
            ..self
        }
    }

    /// Keeps every `every`-th step only (1: all; 0 counts as 1), counted from the burn-in.
    pub fn thin(self, every: usize) -> Self {
        DrawCollector {
            thin: every.max(1) as u64,
            ..self
        }
    }

    /// Maps each recorded θ in place before it is kept.
    pub fn map(self, map: fn(&mut [f64])) -> Self {
        DrawCollector {
            map: Some(map),
            ..self
        }
    }

    /// Reserves room for `draws` draws.
    pub fn with_capacity(mut self, draws: usize) -> Self {
        self.data.reserve(draws * self.dims);
        self
    }

    /// Dimension of a draw.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Draws kept so far.
    pub fn len(&self) -> usize {
        self.data.len() / self.dims.max(1)
    }

    /// No draw kept yet?
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The draws, flat and draw-major.
    pub fn as_flat(&self) -> &[f64] {
        &self.data
    }

    /// The draws, flat and draw-major.
    pub fn into_flat(self) -> Vec<f64> {
        self.data
    }

    /// The draws one at a time.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f64> {
        self.data.chunks_exact(self.dims.max(1))
    }

    /// Coordinate `j` of every draw.
    pub fn column(&self, j: usize) -> Vec<f64> {
        self.rows().map(|row| row[j]).collect()
    }

    /// The draws as one chain of [`Draws`] (which checks that there are some, all finite).
    pub fn into_draws(self) -> Result<Draws, DiagnosticError> {
        let (dims, draws) = (self.dims, self.len());
        Draws::from_flat(self.data, 1, draws, dims)
    }
}

impl<S: ChainState<f64> + ?Sized> Observer<S, f64> for DrawCollector {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        _: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let kept = step >= self.burn_in
            && (self.thin == 1 || (step - self.burn_in).is_multiple_of(self.thin));
        if kept {
            let at = self.data.len();
            self.data.extend_from_slice(sampler.position());
            if let Some(map) = self.map {
                map(&mut self.data[at..]);
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_layout_and_validation() {
        let nested = vec![
            vec![vec![1.0, 10.0], vec![2.0, 20.0], vec![3.0, 30.0]],
            vec![vec![4.0, 40.0], vec![5.0, 50.0], vec![6.0, 60.0]],
        ];
        let d = Draws::from_nested(&nested).unwrap();
        assert_eq!((d.chains(), d.draws(), d.dims()), (2, 3, 2));
        assert_eq!(d.draw(1, 2), Some(&[6.0, 60.0][..]));
        assert_eq!(d.draw(2, 0), None);
        assert_eq!(
            d.dimension(1),
            Some(vec![vec![10.0, 20.0, 30.0], vec![40.0, 50.0, 60.0]])
        );
        assert_eq!(d.dimension(2), None);
        assert_eq!(
            Draws::from_flat(vec![0.0; 5], 1, 2, 3),
            Err(DiagnosticError::MismatchedLengths {
                expected: 6,
                got: 5
            })
        );
        assert_eq!(
            Draws::from_flat(vec![f64::NAN], 1, 1, 1),
            Err(DiagnosticError::NonFinite)
        );
        assert!(Draws::from_flat(vec![], 0, 1, 1).is_err());
        let ragged = vec![vec![vec![1.0]], vec![vec![1.0], vec![2.0]]];
        assert!(Draws::from_nested(&ragged).is_err());
        let none: Vec<Vec<Vec<f64>>> = vec![];
        assert!(Draws::from_nested(&none).is_err());
    }

    /// The collector keeps θ after every `thin`-th step from `burn_in` on, mapped, in order.
    #[test]
    fn collector_keeps_thinned_mapped_draws_after_burn_in() {
        use sgmcmc::prelude::*;
        let (mut theta, mut work) = ([1.0, -1.0], [0.0; 4]);
        let mut sgld = Sgld::new(SgldParams::new(0.01), &mut theta, &mut work).unwrap();
        let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
        let mut rng = rand_pcg::Pcg64::new(1, 2);
        let mut all = DrawCollector::new(2);
        let mut kept = DrawCollector::new(2)
            .burn_in(3)
            .thin(2)
            .map(|x| x[1] = x[1].abs());
        sgld.run_with(&mut model, &mut rng, 10, |t, s, st| {
            all.observe(t, s, st);
            kept.observe(t, s, st);
        })
        .unwrap();
        assert_eq!((all.len(), kept.len(), kept.dims()), (10, 4, 2));
        for (i, row) in kept.rows().enumerate() {
            let step = all.rows().nth(3 + 2 * i).unwrap();
            assert_eq!(row, [step[0], step[1].abs()]);
        }
        assert_eq!(kept.column(0), [3, 5, 7, 9].map(|t| all.column(0)[t]));
        let draws = kept.clone().into_draws().unwrap();
        assert_eq!((draws.chains(), draws.draws(), draws.dims()), (1, 4, 2));
        assert_eq!(draws.as_flat(), kept.as_flat());
    }
}
