//! The Gaussian kinetic energy K(p) = ½ Σᵢ pᵢ² m⁻¹ᵢ with identity, uniform or diagonal mass.
//!
//! The formulas are documented on [`Gaussian`] (this module is private; [`crate::kinetic`]
//! re-exports it).

use super::Kinetic;
use crate::arith::{Arith, Plain};
use crate::error::{Buffer, LayoutError, Param, ParamError};
use crate::real::Real;
use crate::validate::positive;
use rand_core::Rng;

/// The inverse mass: one scalar for every coordinate, or a borrowed diagonal.
#[derive(Clone, Copy, Debug, PartialEq)]
enum InvMass<'a, T> {
    /// m⁻¹ and the standard deviation √m = 1/√(m⁻¹) of a momentum draw (precomputed, so
    /// sampling costs no square root).
    Uniform { inv_mass: T, std_dev: T },
    /// The diagonal of M⁻¹ (every entry finite and > 0, checked by [`Gaussian::diagonal`]).
    Diagonal(&'a [T]),
}

/// The Gaussian kinetic energy K(p) = ½ Σᵢ pᵢ² m⁻¹ᵢ.
///
/// This is the standard kinetics of HMC, SGHMC and SGNHT (Zhang et al. 2017, §2,
/// K(p) = ½ pᵀM⁻¹p) restricted to a diagonal mass M, and it is what the monomial-gamma kinetics
/// reduce to at a = ½ (up to the factor ½; Zhang et al. 2017, eq. 3). As a [`Kinetic`] it serves
/// SGMGT as K or as the thermostat potential F. Per coordinate, with m⁻¹ the inverse mass of
/// that coordinate:
///
/// ```text
/// K(p)   = ½ m⁻¹ p²
/// ∇K(p)  = m⁻¹ p
/// ∇²K(p) = m⁻¹
/// exp(−K) ∝ N(0, m):            p = z / √(m⁻¹),  z ~ N(0, 1)   (one normal, always accepted)
/// dp/dt = −κ ∇K(p) = −κ m⁻¹ p:  p(t) = p(0) · exp(−κ t m⁻¹)   (exact)
/// ```
///
/// A cheap `Copy` value: the identity mass ([`Gaussian::identity`], also [`Default`]), one
/// uniform mass ([`Gaussian::scaled`]) or a borrowed diagonal inverse mass
/// ([`Gaussian::diagonal`]).
///
/// A diagonal inverse mass must have the state's length; [`Kinetic::check_dim`] checks it (the
/// samplers call it in their constructors). Called directly with a coordinate index `i` beyond
/// the diagonal, the methods return NaN rather than panic.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::kinetic::{Gaussian, Kinetic};
///
/// let inv_mass = [1.0f64, 4.0];
/// let k = Gaussian::diagonal(&inv_mass).unwrap();
/// assert!(k.check_dim(2).is_ok());
/// assert_eq!(k.energy(1, 0.5), 0.5);      // ½ · 4 · 0.25
/// assert_eq!(k.gradient(1, 0.5), 2.0);    // 4 · 0.5
/// assert_eq!(k.curvature(1, 0.5), 4.0);
/// // The friction flow is exact: p e^{−κt m⁻¹}.
/// assert!((k.friction_flow(1, 1.0, 0.25) - (-1.0f64).exp()).abs() < 1e-15);
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let (p, proposals) = k.sample_counted(0, &mut rng);
/// assert!(p.is_finite() && proposals == 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gaussian<'a, T> {
    inv_mass: InvMass<'a, T>,
}

impl<T: Real> Default for Gaussian<'_, T> {
    /// The identity mass, as [`Gaussian::identity`].
    fn default() -> Self {
        Self::identity()
    }
}

impl<'a, T: Real> Gaussian<'a, T> {
    /// The identity mass M = I: K(p) = ½ Σ pᵢ².
    pub fn identity() -> Self {
        Gaussian {
            inv_mass: InvMass::Uniform {
                inv_mass: T::ONE,
                std_dev: T::ONE,
            },
        }
    }

    /// A uniform mass M = m·I given by its inverse `inv_mass` = m⁻¹: K(p) = ½ m⁻¹ Σ pᵢ².
    ///
    /// # Errors
    ///
    /// [`ParamError::NonFinite`] or [`ParamError::OutOfRange`] (≤ 0) for
    /// [`Param::InverseMass`].
    pub fn scaled(inv_mass: T) -> Result<Self, ParamError> {
        let inv_mass = positive(inv_mass, Param::InverseMass)?;
        let std_dev = T::ONE / inv_mass.sqrt();
        // A subnormal m⁻¹ can make 1/√m⁻¹ overflow; such a mass cannot be sampled from.
        if !std_dev.is_finite() {
            return Err(ParamError::OutOfRange(Param::InverseMass));
        }
        Ok(Gaussian {
            inv_mass: InvMass::Uniform { inv_mass, std_dev },
        })
    }

    /// A diagonal mass given by the diagonal of its inverse, M⁻¹ = diag(`inv_mass`), borrowed.
    ///
    /// # Errors
    ///
    /// [`LayoutError::InvalidValue`] for [`Buffer::InverseMass`] at the first entry that is not
    /// finite or is ≤ 0. The length is checked against the state by [`Kinetic::check_dim`].
    pub fn diagonal(inv_mass: &'a [T]) -> Result<Self, LayoutError> {
        if let Some(index) = inv_mass
            .iter()
            .position(|&m| !(m.is_finite() && m > T::ZERO))
        {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::InverseMass,
                index,
            });
        }
        Ok(Gaussian {
            inv_mass: InvMass::Diagonal(inv_mass),
        })
    }

    /// The diagonal inverse mass, if this kinetic energy has one (`None` for a uniform mass).
    pub fn inverse_mass_diagonal(&self) -> Option<&'a [T]> {
        match self.inv_mass {
            InvMass::Uniform { .. } => None,
            InvMass::Diagonal(m) => Some(m),
        }
    }

    /// m⁻¹ of coordinate `i` (NaN for an index beyond a diagonal: no panic path).
    #[inline(always)]
    fn inv_mass_at(&self, i: usize) -> T {
        match self.inv_mass {
            InvMass::Uniform { inv_mass, .. } => inv_mass,
            InvMass::Diagonal(m) => match m.get(i) {
                Some(&x) => x,
                // NaN (0·∞); `Real` has no NaN constant.
                None => T::ZERO * T::INFINITY,
            },
        }
    }
}

impl<T: Real> Kinetic<T> for Gaussian<'_, T> {
    /// A diagonal inverse mass must have length `n`; a uniform mass fits any `n`.
    fn check_dim(&self, n: usize) -> Result<(), LayoutError> {
        match self.inv_mass {
            InvMass::Diagonal(m) if m.len() != n => Err(LayoutError::LengthMismatch {
                buffer: Buffer::InverseMass,
                expected: n,
                found: m.len(),
            }),
            _ => Ok(()),
        }
    }

    /// ½ m⁻¹ p²
    #[inline]
    fn energy(&self, i: usize, p: T) -> T {
        T::HALF * self.inv_mass_at(i) * p * p
    }

    /// m⁻¹ p
    #[inline]
    fn gradient(&self, i: usize, p: T) -> T {
        self.inv_mass_at(i) * p
    }

    /// m⁻¹ (constant).
    #[inline]
    fn curvature(&self, i: usize, _p: T) -> T {
        self.inv_mass_at(i)
    }

    #[inline]
    fn gradient_and_curvature(&self, i: usize, p: T) -> (T, T) {
        let m = self.inv_mass_at(i);
        (m * p, m)
    }

    /// p = z/√(m⁻¹) with one standard normal z; always 1 proposal.
    #[inline]
    fn sample_counted<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> (T, u32) {
        let z = T::standard_normal(rng);
        let p = match self.inv_mass {
            InvMass::Uniform { std_dev, .. } => z * std_dev,
            InvMass::Diagonal(_) => z / self.inv_mass_at(i).sqrt(),
        };
        (p, 1)
    }

    #[inline]
    fn tempered_sampling(&self) -> bool {
        true
    }

    /// √T times the untempered draw (exp(−K/T) is the Gaussian with covariance T·M); at T = 1
    /// the draw itself.
    #[inline]
    fn sample_tempered_counted<R: Rng + ?Sized>(
        &self,
        i: usize,
        rng: &mut R,
        temperature: T,
    ) -> (T, u32) {
        let (p, k) = self.sample_counted(i, rng);
        if temperature == T::ONE {
            (p, k)
        } else {
            (p * temperature.sqrt(), k)
        }
    }

    /// Exact: p·exp(−κt·m⁻¹) (for κt < 0 the momentum grows; it may overflow to ±∞ for an
    /// extreme κt·m⁻¹, which the samplers report as a non-finite state).
    #[inline]
    fn friction_flow(&self, i: usize, p: T, kt: T) -> T {
        self.friction_flow_in::<Plain>(i, p, kt)
    }
    #[inline]
    fn friction_flow_in<A: Arith>(&self, i: usize, p: T, kt: T) -> T {
        p * (-kt * self.inv_mass_at(i)).exp_in::<A>()
    }
}
