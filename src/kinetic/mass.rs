//! Mass matrices for the Gaussian kinetics K(p) = ½ pᵀM⁻¹p: identity, diagonal and dense, in caller buffers.
//!
//! The formulas and the cost of each operation are documented on [`Mass`] (this module is
//! private; [`crate::kinetic`] re-exports it); the design (the precision and its Cholesky
//! factor, the exact friction flow): `docs/mass-matrix.md`.

use crate::arith::{Arith, Plain};
use crate::error::{Buffer, LayoutError, LinalgError};
use crate::lanes::copy_into;
use crate::linalg::{check_symmetric, cholesky_in_place, dot, spd_inverse};
use crate::real::Real;
use crate::rows::{Fitted, carve, rows, rows_mut};
use rand_core::Rng;

/// The three shapes of M⁻¹; the dense one also carries the Cholesky factor of M⁻¹.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Repr<'a, T> {
    /// M = I.
    Identity,
    /// diag(M⁻¹), every entry finite and > 0.
    Diagonal(&'a [T]),
    /// M⁻¹ (d × d, row-major, finite, exactly symmetric) and its lower Cholesky factor C
    /// (M⁻¹ = CCᵀ, strict upper triangle zero, positive finite diagonal).
    Dense {
        precision: &'a [T],
        factor: &'a [T],
        dim: usize,
        /// The eigendecomposition M⁻¹ = V diag(λ) Vᵀ (V row-major d × d, then λ), if the buffer
        /// was built with one ([`MassBuffer::dense_with_eigen`]).
        eigen: Option<(&'a [T], &'a [T])>,
    },
}

/// A mass matrix M for the Gaussian kinetic energy K(p) = ½ pᵀM⁻¹p, stored as its precision M⁻¹.
///
/// This is the kinetics of HMC, SGHMC, SGNHT and SG-NPHMC with a general mass (Roychowdhury &
/// Parthasarathy 2017, §2–3), and what their MCEM adaptation learns. Samplers hold it as a
/// [`MassBuffer`] (their `set_mass`); a `Mass` is the read-only view. Three shapes:
///
/// * [`Mass::identity`]: M = I, no buffer;
/// * [`Mass::diagonal`]: a borrowed diagonal of M⁻¹;
/// * [`Mass::dense`]: a borrowed d × d row-major M⁻¹ (d² entries of the caller's memory) and a
///   second caller buffer of d² entries into which the constructor writes the lower Cholesky
///   factor C of the *precision*, M⁻¹ = CCᵀ ([`Mass::dense_from_mass`] starts from M instead).
///
/// ```text
/// K(p)   = ½ pᵀM⁻¹p                         energy
/// ∇K(p)  = M⁻¹p                             kinetic_gradient
/// p ~ N(0, M) ∝ exp(−K):                    sample
///     identity:  p = z
///     diagonal:  pᵢ = zᵢ / √(m⁻¹ᵢ)
///     dense:     p = C⁻ᵀz   (solve Cᵀp = z), since Cov(C⁻ᵀz) = C⁻ᵀC⁻¹ = (CCᵀ)⁻¹ = M
/// with z ~ N(0, I).
/// ```
///
/// (Why the factor of M⁻¹ rather than of M: `docs/mass-matrix.md`.)
///
/// | operation               | identity | diagonal           | dense                         |
/// |-------------------------|----------|--------------------|-------------------------------|
/// | construction            | —        | d checks           | d² checks + d³/3 (Cholesky)   |
/// | `kinetic_gradient`      | copy     | d mul              | d² multiply-adds              |
/// | `energy`                | d        | 2d                 | d²/2 multiply-adds            |
/// | `sample`                | d normals| d normals, d sqrt  | d normals + d²/2 + d div      |
///
/// A cheap `Copy` value (at most two borrowed slices and d). The slices passed to the
/// methods must have length d ([`Mass::check_dim`] checks it once, as the samplers' constructors
/// do); called with a wrong length, the methods do not panic but return NaN / fill `out` with
/// NaN (and [`Mass::sample`] then draws nothing). The identity accepts any length, but `p` and
/// `out` must match.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::kinetic::Mass;
///
/// // M⁻¹ = [[2, 1], [1, 2]], i.e. M = [[2, −1], [−1, 2]] / 3.
/// let precision = [2.0f64, 1.0, 1.0, 2.0];
/// let mut factor = [0.0; 4];
/// let mass = Mass::dense(&precision, &mut factor, 2).unwrap();
/// assert!(mass.check_dim(2).is_ok());
///
/// let p = [1.0, -1.0];
/// let mut grad = [0.0; 2];
/// mass.kinetic_gradient(&p, &mut grad);
/// assert_eq!(grad, [1.0, -1.0]);            // M⁻¹p
/// assert_eq!(mass.energy(&p), 1.0);         // ½ pᵀM⁻¹p = ½ · 2
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let mut draw = [0.0; 2];
/// mass.sample(&mut rng, &mut draw);         // p ~ N(0, M)
/// assert!(draw.iter().all(|x| x.is_finite()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mass<'a, T> {
    repr: Repr<'a, T>,
}

impl<T: Real> Default for Mass<'_, T> {
    /// The identity mass, as [`Mass::identity`].
    fn default() -> Self {
        Self::identity()
    }
}

/// NaN without a NaN constant in [`Real`].
#[inline]
fn nan<T: Real>() -> T {
    T::ZERO * T::INFINITY
}

#[inline]
fn fill_nan<T: Real>(out: &mut [T]) {
    for x in out {
        *x = nan();
    }
}

impl<'a, T: Real> Mass<'a, T> {
    /// The identity mass M = M⁻¹ = I: K(p) = ½ Σ pᵢ², p ~ N(0, I).
    pub fn identity() -> Self {
        Mass {
            repr: Repr::Identity,
        }
    }

    /// A diagonal mass given by its inverse diag(M⁻¹) = `inv_mass`: K(p) = ½ Σ m⁻¹ᵢ pᵢ².
    ///
    /// Every entry must be finite ([`LinalgError::NonFinite`] names the first that is not) and
    /// positive ([`LinalgError::NotPositiveDefinite`] names the first that is not, as its pivot).
    /// An empty slice is accepted (dimension 0).
    ///
    /// # Example
    ///
    /// ```
    /// use sgmcmc::{LinalgError, kinetic::Mass};
    ///
    /// let inv_mass = [1.0f64, 4.0];
    /// let mass = Mass::diagonal(&inv_mass).unwrap();
    /// assert_eq!(mass.energy(&[1.0, 0.5]), 1.0); // ½ (1 + 4 · 0.25)
    /// assert_eq!(
    ///     Mass::diagonal(&[1.0f64, 0.0]),
    ///     Err(LinalgError::NotPositiveDefinite { pivot: 1 })
    /// );
    /// ```
    pub fn diagonal(inv_mass: &'a [T]) -> Result<Self, LinalgError> {
        for (index, &m) in inv_mass.iter().enumerate() {
            if !m.is_finite() {
                return Err(LinalgError::NonFinite { index });
            }
            if m <= T::ZERO {
                return Err(LinalgError::NotPositiveDefinite { pivot: index });
            }
        }
        Ok(Mass {
            repr: Repr::Diagonal(inv_mass),
        })
    }

    /// A dense mass given by its precision M⁻¹ = `precision` (d × d, row-major); the lower
    /// Cholesky factor C of M⁻¹ (M⁻¹ = CCᵀ) is written into `factor` (d² entries, the
    /// previous contents are ignored).
    ///
    /// `precision` must be finite and exactly symmetric ([`crate::linalg::check_symmetric`]) and
    /// positive definite; errors, in the order checked: [`LinalgError::DimensionMismatch`] (either
    /// slice is not d² long), [`LinalgError::NonFinite`], [`LinalgError::NotSymmetric`],
    /// [`LinalgError::NotPositiveDefinite`] with the failing pivot (then `factor` holds a partial
    /// factor). Cost: d³/3 flops for the factorisation ([`crate::linalg::cholesky_in_place`]).
    ///
    /// An MCEM M-step that changes M⁻¹ calls this again on the new precision (the same
    /// `factor` buffer can be reused once the previous `Mass` is dropped).
    ///
    /// # Example
    ///
    /// ```
    /// use sgmcmc::kinetic::Mass;
    ///
    /// let precision = [4.0f64, 2.0, 2.0, 5.0];
    /// let mut factor = [0.0; 4];
    /// let mass = Mass::dense(&precision, &mut factor, 2).unwrap();
    /// assert_eq!(mass.factor(), Some(&[2.0, 0.0, 1.0, 2.0][..]));
    /// ```
    pub fn dense(precision: &'a [T], factor: &'a mut [T], d: usize) -> Result<Self, LinalgError> {
        check_symmetric(precision, d)?;
        if factor.len() != precision.len() {
            return Err(LinalgError::DimensionMismatch {
                expected: precision.len(),
                found: factor.len(),
            });
        }
        copy_into(factor, precision);
        cholesky_in_place(factor, d)?;
        let factor: &'a [T] = factor;
        Ok(Mass {
            repr: Repr::Dense {
                precision,
                factor,
                dim: d,
                eigen: None,
            },
        })
    }

    /// A dense mass given by M itself (`mass`, d × d, row-major, finite, exactly symmetric,
    /// positive definite): writes M⁻¹ into `precision` ([`crate::linalg::spd_inverse`], d³
    /// flops; exactly symmetric) and then proceeds as [`Mass::dense`] (d³/3 more).
    ///
    /// Errors as [`Mass::dense`]; a `NotPositiveDefinite` can come from either factorisation
    /// (M itself, or an M⁻¹ that rounding made indefinite when M is very badly conditioned).
    ///
    /// # Example
    ///
    /// ```
    /// use sgmcmc::kinetic::Mass;
    ///
    /// let m = [2.0f64, -1.0, -1.0, 2.0];
    /// let (mut precision, mut factor) = ([0.0; 4], [0.0; 4]);
    /// let mass = Mass::dense_from_mass(&m, &mut precision, &mut factor, 2).unwrap();
    /// let expect = [2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0];
    /// let got = mass.precision().unwrap();
    /// assert!(got.iter().zip(&expect).all(|(x, y)| (x - y).abs() < 1e-15));
    /// ```
    pub fn dense_from_mass(
        mass: &[T],
        precision: &'a mut [T],
        factor: &'a mut [T],
        d: usize,
    ) -> Result<Self, LinalgError> {
        spd_inverse(mass, d, precision)?;
        let precision: &'a [T] = precision;
        Self::dense(precision, factor, d)
    }

    /// The dimension d this mass was built for; `None` for the identity, which fits any.
    pub fn dim(&self) -> Option<usize> {
        match self.repr {
            Repr::Identity => None,
            Repr::Diagonal(m) => Some(m.len()),
            Repr::Dense { dim, .. } => Some(dim),
        }
    }

    /// Checks that this mass fits a momentum of dimension `n` (for the samplers' constructors):
    /// [`LayoutError::LengthMismatch`] on [`Buffer::InverseMass`] otherwise.
    pub fn check_dim(&self, n: usize) -> Result<(), LayoutError> {
        match self.dim() {
            Some(d) if d != n => Err(LayoutError::LengthMismatch {
                buffer: Buffer::InverseMass,
                expected: n,
                found: d,
            }),
            _ => Ok(()),
        }
    }

    /// `true` for [`Mass::identity`].
    pub fn is_identity(&self) -> bool {
        matches!(self.repr, Repr::Identity)
    }

    /// The diagonal of M⁻¹ of a [`Mass::diagonal`]; `None` otherwise.
    pub fn inv_mass_diagonal(&self) -> Option<&'a [T]> {
        match self.repr {
            Repr::Diagonal(m) => Some(m),
            _ => None,
        }
    }

    /// The d × d precision M⁻¹ of a dense mass; `None` otherwise.
    pub fn precision(&self) -> Option<&'a [T]> {
        match self.repr {
            Repr::Dense { precision, .. } => Some(precision),
            _ => None,
        }
    }

    /// The lower Cholesky factor C of M⁻¹ (M⁻¹ = CCᵀ, strict upper triangle zero) of a dense
    /// mass; `None` otherwise.
    pub fn factor(&self) -> Option<&'a [T]> {
        match self.repr {
            Repr::Dense { factor, .. } => Some(factor),
            _ => None,
        }
    }

    /// The eigendecomposition M⁻¹ = V diag(λ) Vᵀ of a dense mass built with one
    /// ([`MassBuffer::dense_with_eigen`]): V (d × d, row-major, eigenvectors as columns) and λ;
    /// `None` otherwise.
    pub fn eigen(&self) -> Option<(&'a [T], &'a [T])> {
        match self.repr {
            Repr::Dense { eigen, .. } => eigen,
            _ => None,
        }
    }

    /// `true` when `len` fits this mass.
    #[inline]
    fn fits(&self, len: usize) -> bool {
        self.dim().is_none_or(|d| d == len)
    }

    /// ∇K(p) = M⁻¹p, written into `out`.
    ///
    /// Dense: one contiguous inner product per row of M⁻¹ (d² multiply-adds). If `p` or `out`
    /// has the wrong length, `out` is filled with NaN.
    #[inline]
    pub fn kinetic_gradient(&self, p: &[T], out: &mut [T]) {
        if p.len() != out.len() || !self.fits(p.len()) {
            fill_nan(out);
            return;
        }
        match self.repr {
            Repr::Identity => copy_into(out, p),
            Repr::Diagonal(m) => {
                for ((o, &x), &mi) in out.iter_mut().zip(p).zip(m) {
                    *o = mi * x;
                }
            }
            Repr::Dense { precision, dim, .. } => {
                for (o, row) in out.iter_mut().zip(rows(precision, dim)) {
                    *o = dot(row, p);
                }
            }
        }
    }

    /// K(p) = ½ pᵀM⁻¹p; NaN if `p` has the wrong length.
    ///
    /// Dense: from the lower triangle of the (symmetric) precision A = M⁻¹,
    ///
    /// ```text
    /// ½ pᵀAp = Σᵢ pᵢ (½ aᵢᵢ pᵢ + Σ_{j<i} aᵢⱼ pⱼ)
    /// ```
    ///
    /// d²/2 multiply-adds with contiguous rows, and consistent to rounding with
    /// [`Mass::kinetic_gradient`] (both use the same M⁻¹).
    #[inline]
    pub fn energy(&self, p: &[T]) -> T {
        if !self.fits(p.len()) {
            return nan();
        }
        match self.repr {
            Repr::Identity => T::HALF * dot(p, p),
            Repr::Diagonal(m) => {
                let mut s = T::ZERO;
                for (&x, &mi) in p.iter().zip(m) {
                    s += mi * x * x;
                }
                T::HALF * s
            }
            Repr::Dense { precision, dim, .. } => {
                let mut s = T::ZERO;
                for (i, (row, &pi)) in rows(precision, dim).zip(p).enumerate() {
                    // Row i's strictly lower part and diagonal, by checked splits (no panic
                    // path; the lengths were validated when the mass was built).
                    let (Some((lower, rest)), Some(p_head)) = (row.split_at_checked(i), p.get(..i))
                    else {
                        continue;
                    };
                    let diagonal = rest.first().copied().unwrap_or(T::ZERO);
                    s += pi * (T::HALF * diagonal * pi + dot(lower, p_head));
                }
                s
            }
        }
    }

    /// Maps `z` ~ N(0, I) in place to a draw from N(0, M) (the deterministic half of
    /// [`Mass::sample`]); fills `z` with NaN if its length does not fit.
    ///
    /// ```text
    /// identity: z;   diagonal: zᵢ / √(m⁻¹ᵢ);   dense: C⁻ᵀz (back substitution with Cᵀ)
    /// ```
    #[inline]
    pub fn scale_standard_normal(&self, z: &mut [T]) {
        if !self.fits(z.len()) {
            fill_nan(z);
            return;
        }
        match self.repr {
            Repr::Identity => {}
            Repr::Diagonal(m) => {
                for (x, &mi) in z.iter_mut().zip(m) {
                    *x /= mi.sqrt();
                }
            }
            Repr::Dense { factor, dim, .. } => {
                // Lengths were checked (z.len() == dim, factor.len() == dim²), so this cannot
                // fail; the NaN fill only keeps the no-panic contract explicit.
                if crate::linalg::solve_lower_transpose_in_place(factor, dim, z).is_err() {
                    fill_nan(z);
                }
            }
        }
    }

    /// Fills `out` with one draw p ~ N(0, M): `out.len()` standard normals
    /// (the samplers' noise: [`crate::rng::fill_lane_normals`] on vector targets, the ziggurat on
    /// scalar cores; `docs/rng.md`) mapped by [`Mass::scale_standard_normal`].
    ///
    /// If `out` has the wrong length it is filled with NaN and nothing is drawn.
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [T]) {
        if !self.fits(out.len()) {
            fill_nan(out);
            return;
        }
        crate::variates::step_normals(rng, out);
        self.scale_standard_normal(out);
    }
}

impl<'a, T: Real> Mass<'a, T> {
    /// tr M⁻¹ (d for the identity of dimension d; `n` is that dimension, ignored otherwise).
    pub fn trace_inverse(&self, n: usize) -> T {
        match self.repr {
            Repr::Identity => T::from_usize(n),
            Repr::Diagonal(m) => m.iter().fold(T::ZERO, |s, &x| s + x),
            Repr::Dense { precision, dim, .. } => precision
                .iter()
                .step_by(dim.saturating_add(1))
                .take(dim)
                .fold(T::ZERO, |s, &x| s + x),
        }
    }

    /// M⁻¹ as stored: its diagonal (d entries), the dense d × d precision (d²), or empty for
    /// the identity.
    pub fn inverse_slice(&self) -> &'a [T] {
        match self.repr {
            Repr::Identity => &[],
            Repr::Diagonal(m) => m,
            Repr::Dense { precision, .. } => precision,
        }
    }

    /// The shape of this mass.
    pub fn shape(&self) -> MassShape {
        match self.repr {
            Repr::Identity => MassShape::Identity,
            Repr::Diagonal(_) => MassShape::Diagonal,
            Repr::Dense { .. } => MassShape::Dense,
        }
    }

    /// The diagonal of M⁻¹ as an `Option` (`None` for the identity), or `Err(())` for a dense
    /// mass: the form the identity/diagonal fast paths of the samplers take.
    #[allow(clippy::result_unit_err)]
    pub(crate) fn diagonal_option(&self) -> Result<Option<&'a [T]>, ()> {
        match self.repr {
            Repr::Identity => Ok(None),
            Repr::Diagonal(m) => Ok(Some(m)),
            Repr::Dense { .. } => Err(()),
        }
    }
}

impl<T: Real> Mass<'_, T> {
    /// Whether a dense mass carries its eigendecomposition (so the exact friction flow
    /// [`Mass::friction_flow`] is available); `true` for the identity and a diagonal mass.
    pub fn has_friction_flow(&self) -> bool {
        !matches!(self.repr, Repr::Dense { eigen: None, .. })
    }

    /// The exact flow of dp = −c M⁻¹p dt over time t, in place: p ← exp(−ct M⁻¹) p
    /// (identity: e^{−ct}; diagonal: e^{−ct m⁻¹ᵢ} per coordinate; dense with eigendecomposition:
    /// V diag(e^{−ctλᵢ}) Vᵀp, using `work` (length d) for Vᵀp). Fills `p` with NaN for a dense
    /// mass without eigendecomposition or a wrong length.
    pub fn friction_flow(&self, p: &mut [T], ct: T, work: &mut [T]) {
        self.friction_flow_in::<Plain>(p, ct, work);
    }

    /// [`Mass::friction_flow`] with its polynomial exp in the rounding `A` (a dispatched step's,
    /// [`crate::arith::Arith`]). Not forced inline, as `friction_flow` was not: forced into the
    /// steps' two flow sites, it grew the Cortex-M SGHMC and SGNHT steps by about 900 bytes of
    /// flash and their stacks by up to 56 bytes (`docs/firmware.md`).
    pub(crate) fn friction_flow_in<A: Arith>(&self, p: &mut [T], ct: T, work: &mut [T]) {
        if !self.fits(p.len()) {
            fill_nan(p);
            return;
        }
        match self.repr {
            Repr::Identity => {
                let e = (-ct).exp();
                for x in p.iter_mut() {
                    *x *= e;
                }
            }
            Repr::Diagonal(m) => {
                for (x, &mi) in p.iter_mut().zip(m) {
                    *x *= (-ct * mi).exp_in::<A>();
                }
            }
            Repr::Dense {
                dim,
                eigen: Some((v, lambda)),
                ..
            } if work.len() == dim => {
                // w = Vᵀp scaled by e^{−ctλ}
                for (j, (w, &lambda_j)) in work.iter_mut().zip(lambda).enumerate() {
                    // Column j of V (row-major): v[j], v[dim + j], … (iterated, not indexed:
                    // no bounds check and no panic path).
                    let mut acc = T::ZERO;
                    for (&vij, &pi) in v.iter().skip(j).step_by(dim.max(1)).zip(p.iter()) {
                        acc += vij * pi;
                    }
                    *w = acc * (-ct * lambda_j).exp_in::<A>();
                }
                for (row, x) in rows(v, dim).zip(p.iter_mut()) {
                    *x = dot(row, work);
                }
            }
            Repr::Dense { .. } => fill_nan(p),
        }
    }
}

/// (V, λ) from a dense buffer's eigendecomposition storage (V d × d, then λ, then scratch), or
/// `None` when it is empty. Checked splits: the length was validated when the buffer was built,
/// and an unchecked split would link a panic path.
fn eigen_parts<T>(eigen: &[T], dim: usize) -> Option<(&[T], &[T])> {
    if eigen.is_empty() {
        return None;
    }
    let (v, rest) = eigen.split_at_checked(dim.checked_mul(dim)?)?;
    Some((v, rest.get(..dim)?))
}

/// The eigendecomposition of the symmetric d × d `a` by the cyclic Jacobi method: `out` (2d² + d)
/// receives V (row-major, orthonormal columns = eigenvectors), then λ (d), and its last d² entries
/// are the work matrix. Stops when the off-diagonal mass is below (d ε)² times the diagonal's,
/// or after 64 sweeps. Eigenvalues of an SPD `a` are clamped at 0 from below (rounding).
///
/// Every caller sizes `a` and `out` from the same d; were they not sized so, `out` would be
/// filled with NaN (which the samplers' finiteness checks reject) rather than panic. Within the
/// iteration every row and entry is reached by a checked access that cannot miss (indices
/// below d, rows of d entries): an index would link a panic path the compiler cannot rule out.
pub(crate) fn symmetric_eigen<T: Real>(a: &[T], out: &mut [T], d: usize) {
    let dd = d.saturating_mul(d);
    if a.len() != dd || out.len() != dd.saturating_mul(2).saturating_add(d) {
        fill_nan(out);
        return;
    }
    let mut rest = &mut *out;
    let v = carve(&mut rest, dd);
    let lambda = carve(&mut rest, d);
    let w = rest;
    copy_into(w, a);
    for (i, row) in rows_mut(v, d).enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = if i == j { T::ONE } else { T::ZERO };
        }
    }
    let tol = T::from_usize(d) * T::EPSILON;
    for _ in 0..64 {
        let (mut off, mut diag) = (T::ZERO, T::ZERO);
        for (i, row) in rows(w, d).enumerate() {
            let Some((lower, rest)) = row.split_at_checked(i) else {
                continue;
            };
            if let Some(&wii) = rest.first() {
                diag += wii * wii;
            }
            for &wij in lower {
                off += wij * wij;
            }
        }
        // Converged (or not finite, where rotating cannot help): stop.
        let converged = off <= tol * tol * diag || !off.is_finite();
        if converged {
            break;
        }
        for p in 0..d {
            for q in p + 1..d {
                let (Some(&apq), Some(&aqq), Some(&app)) =
                    (w.get(p * d + q), w.get(q * d + q), w.get(p * d + p))
                else {
                    continue;
                };
                if apq == T::ZERO {
                    continue;
                }
                let theta = (aqq - app) / (T::TWO * apq);
                let t = T::ONE / (theta.abs() + (theta * theta + T::ONE).sqrt());
                let t = if theta < T::ZERO { -t } else { t };
                if !t.is_finite() {
                    continue;
                }
                let c = T::ONE / (t * t + T::ONE).sqrt();
                let s = t * c;
                // Columns p and q of W, then rows p and q, then columns p and q of V.
                for row in rows_mut(w, d) {
                    rotate_pair(row, p, q, c, s);
                }
                if let Some((top, bottom)) = w.split_at_mut_checked(q * d) {
                    let row_p = top.fitted_mut(p * d..);
                    for (x, y) in row_p.iter_mut().zip(bottom.iter_mut()).take(d) {
                        let (xv, yv) = (*x, *y);
                        *x = c * xv - s * yv;
                        *y = s * xv + c * yv;
                    }
                }
                for row in rows_mut(v, d) {
                    rotate_pair(row, p, q, c, s);
                }
            }
        }
    }
    for ((i, row), l) in rows(w, d).enumerate().zip(lambda.iter_mut()) {
        if let Some(&wii) = row.get(i) {
            *l = wii.max(T::ZERO);
        }
    }
}

/// The Givens rotation of entries p < q of one row: (x, y) ← (cx − sy, sx + cy).
#[inline]
fn rotate_pair<T: Real>(row: &mut [T], p: usize, q: usize, c: T, s: T) {
    if let Some((left, right)) = row.split_at_mut_checked(q)
        && let (Some(x), Some(y)) = (left.get_mut(p), right.first_mut())
    {
        let (xv, yv) = (*x, *y);
        *x = c * xv - s * yv;
        *y = s * xv + c * yv;
    }
}

/// The three shapes a [`Mass`] (or [`MassBuffer`]) can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MassShape {
    /// M = I.
    Identity,
    /// A diagonal M⁻¹ (d entries).
    Diagonal,
    /// A dense M⁻¹ (d² entries) with its Cholesky factor.
    Dense,
}

/// The caller-owned storage of a mass matrix that a sampler can use and *change in place*: the
/// MCEM M-step (Roychowdhury & Parthasarathy 2017, eq. 5) replaces M⁻¹ between E-steps with
/// [`MassBuffer::set_inverse_mass`], which copies the new M⁻¹ into the caller's buffers and
/// refactorizes without allocating. Give it to a sampler with its `set_mass`.
///
/// * [`MassBuffer::identity`]: M = I, no buffer (not adaptable);
/// * [`MassBuffer::diagonal`]: a mutable diag(M⁻¹) of d entries;
/// * [`MassBuffer::fixed_diagonal`]: a read-only diag(M⁻¹) (a mass kept in flash; not adaptable);
/// * [`MassBuffer::dense`]: a mutable d × d M⁻¹ and a work buffer of
///   [`MassBuffer::dense_work_len`]`(d)` = d² + 3d entries (its lower Cholesky factor, the
///   vector M⁻¹p the samplers form each step, and the copy of θ and p that undoes a failed step); [`MassBuffer::dense_with_eigen`] adds the
///   eigendecomposition the splitting integrator's exact friction flow needs.
///
/// [`MassBuffer::mass`] gives the read-only [`Mass`] view.
///
/// ```
/// use sgmcmc::kinetic::{MassBuffer, MassShape};
///
/// let mut precision = [4.0f64, 2.0, 2.0, 5.0];
/// let mut work = [0.0; MassBuffer::<f64>::dense_work_len(2)];
/// let mut buf = MassBuffer::dense(&mut precision, &mut work, 2).unwrap();
/// assert_eq!(buf.mass().shape(), MassShape::Dense);
/// buf.set_inverse_mass(&[1.0, 0.0, 0.0, 9.0]).unwrap();
/// assert_eq!(buf.mass().factor(), Some(&[1.0, 0.0, 0.0, 3.0][..]));
/// // An indefinite M⁻¹ is refused and the previous one stays in force.
/// assert!(buf.set_inverse_mass(&[1.0, 2.0, 2.0, 1.0]).is_err());
/// assert_eq!(buf.mass().precision(), Some(&[1.0, 0.0, 0.0, 9.0][..]));
/// assert_eq!(buf.mass().factor(), Some(&[1.0, 0.0, 0.0, 3.0][..]));
/// ```
#[derive(Debug)]
pub struct MassBuffer<'a, T> {
    repr: BufRepr<'a, T>,
}

#[derive(Debug)]
enum BufRepr<'a, T> {
    Identity,
    /// A diagonal M⁻¹ borrowed read-only (validated by its constructor).
    Fixed(&'a [T]),
    Diagonal(&'a mut [T]),
    Dense {
        precision: &'a mut [T],
        factor: &'a mut [T],
        /// M⁻¹p of the current step (d entries).
        inv_mass_p: &'a mut [T],
        /// θ and p before an SDE step (2d), to undo a step whose result is not finite.
        backup: &'a mut [T],
        dim: usize,
        /// Empty, or 2d² + d: V, λ and a d² work matrix for the Jacobi iteration.
        eigen: &'a mut [T],
    },
}

/// What a sampler's step works with: the view and, for a dense mass, its M⁻¹p vector.
pub(crate) enum MassParts<'b, T> {
    Identity,
    Diagonal(&'b [T]),
    Dense(Mass<'b, T>, &'b mut [T], &'b mut [T]),
}

impl<'a, T: Real> MassBuffer<'a, T> {
    /// M = I (not adaptable).
    pub fn identity() -> Self {
        MassBuffer {
            repr: BufRepr::Identity,
        }
    }

    /// A diagonal mass given by diag(M⁻¹) = `inv_mass` (validated as [`Mass::diagonal`]).
    pub fn diagonal(inv_mass: &'a mut [T]) -> Result<Self, LinalgError> {
        Mass::diagonal(inv_mass)?;
        Ok(MassBuffer {
            repr: BufRepr::Diagonal(inv_mass),
        })
    }

    /// A diagonal mass diag(M⁻¹) = `inv_mass` borrowed read-only (validated as
    /// [`Mass::diagonal`]); [`MassBuffer::set_inverse_mass`] is [`LinalgError::ReadOnly`].
    pub fn fixed_diagonal(inv_mass: &'a [T]) -> Result<Self, LinalgError> {
        Mass::diagonal(inv_mass)?;
        Ok(MassBuffer {
            repr: BufRepr::Fixed(inv_mass),
        })
    }

    /// The work-buffer length of a dense mass of dimension d: d² for its Cholesky factor, d for
    /// M⁻¹p and 2d for the copy of θ and p that undoes an SDE step whose result is not finite
    /// (`usize::MAX` on overflow).
    pub const fn dense_work_len(d: usize) -> usize {
        match d.checked_mul(d) {
            Some(dd) => match d.checked_mul(3) {
                Some(d3) => match dd.checked_add(d3) {
                    Some(x) => x,
                    None => usize::MAX,
                },
                None => usize::MAX,
            },
            None => usize::MAX,
        }
    }

    /// A dense mass given by its precision M⁻¹ = `precision` (d × d, row-major); `work`
    /// ([`MassBuffer::dense_work_len`]`(d)` entries, contents ignored) receives the lower
    /// Cholesky factor and later the samplers' M⁻¹p and step backup. Errors as [`Mass::dense`], and
    /// [`LinalgError::DimensionMismatch`] for `work`.
    pub fn dense(precision: &'a mut [T], work: &'a mut [T], d: usize) -> Result<Self, LinalgError> {
        Self::dense_with_eigen(precision, work, &mut [], d)
    }

    /// As [`MassBuffer::dense`], plus the eigendecomposition M⁻¹ = V diag(λ) Vᵀ in `eigen`
    /// (2d² + d entries: V, λ and a d² work matrix; cyclic Jacobi, about 10 sweeps of 3d³
    /// flops, recomputed by [`MassBuffer::set_inverse_mass`]). With it the splitting integrator
    /// can take a dense mass: its friction sub-flow dp = −c M⁻¹p dt is solved exactly,
    /// p ← V diag(e^{−cλᵢt}) Vᵀp (2d² multiply-adds). An empty `eigen` is [`MassBuffer::dense`].
    pub fn dense_with_eigen(
        precision: &'a mut [T],
        work: &'a mut [T],
        eigen: &'a mut [T],
        d: usize,
    ) -> Result<Self, LinalgError> {
        let need = Self::dense_work_len(d);
        if work.len() != need {
            return Err(LinalgError::DimensionMismatch {
                expected: need,
                found: work.len(),
            });
        }
        let need_eigen = d
            .checked_mul(d)
            .and_then(|dd| dd.checked_mul(2))
            .and_then(|x| x.checked_add(d))
            .unwrap_or(usize::MAX);
        if !eigen.is_empty() && eigen.len() != need_eigen {
            return Err(LinalgError::DimensionMismatch {
                expected: need_eigen,
                found: eigen.len(),
            });
        }
        // (`work` was checked to hold d² + 3d entries: the parts fit.)
        let mut rest = work;
        let factor = carve(&mut rest, d.saturating_mul(d));
        let inv_mass_p = carve(&mut rest, d);
        let backup = rest;
        Mass::dense(precision, factor, d)?;
        if !eigen.is_empty() {
            symmetric_eigen(precision, eigen, d);
        }
        Ok(MassBuffer {
            repr: BufRepr::Dense {
                precision,
                factor,
                inv_mass_p,
                backup,
                dim: d,
                eigen,
            },
        })
    }

    /// The read-only view the kinetics use.
    pub fn mass(&self) -> Mass<'_, T> {
        let repr = match &self.repr {
            BufRepr::Identity => Repr::Identity,
            BufRepr::Fixed(m) => Repr::Diagonal(m),
            BufRepr::Diagonal(m) => Repr::Diagonal(m),
            BufRepr::Dense {
                precision,
                factor,
                dim,
                eigen,
                ..
            } => Repr::Dense {
                precision,
                factor,
                dim: *dim,
                eigen: eigen_parts(eigen, *dim),
            },
        };
        Mass { repr }
    }

    /// The view and the dense M⁻¹p vector, for a step.
    pub(crate) fn parts(&mut self) -> MassParts<'_, T> {
        match &mut self.repr {
            BufRepr::Identity => MassParts::Identity,
            BufRepr::Fixed(m) => MassParts::Diagonal(m),
            BufRepr::Diagonal(m) => MassParts::Diagonal(m),
            BufRepr::Dense {
                precision,
                factor,
                inv_mass_p,
                backup,
                dim,
                eigen,
            } => {
                let eigen = eigen_parts(eigen, *dim);
                let mass = Mass {
                    repr: Repr::Dense {
                        precision,
                        factor,
                        dim: *dim,
                        eigen,
                    },
                };
                MassParts::Dense(mass, inv_mass_p, backup)
            }
        }
    }

    /// The view and the M⁻¹p vector of a dense mass (empty for the others).
    pub(crate) fn split(&mut self) -> (Mass<'_, T>, &mut [T]) {
        match self.parts() {
            MassParts::Identity => (Mass::identity(), &mut []),
            MassParts::Diagonal(m) => (
                Mass {
                    repr: Repr::Diagonal(m),
                },
                &mut [],
            ),
            MassParts::Dense(mass, inv_mass_p, _) => (mass, inv_mass_p),
        }
    }

    /// The current M⁻¹ as stored: d entries (diagonal), d² (dense), empty (identity).
    pub fn inverse_mass(&self) -> &[T] {
        match &self.repr {
            BufRepr::Identity => &[],
            BufRepr::Fixed(m) => m,
            BufRepr::Diagonal(m) => m,
            BufRepr::Dense { precision, .. } => precision,
        }
    }

    /// Whether [`MassBuffer::set_inverse_mass`] can succeed (a diagonal or dense buffer the
    /// buffer owns mutably).
    pub fn is_adaptable(&self) -> bool {
        matches!(self.repr, BufRepr::Diagonal(_) | BufRepr::Dense { .. })
    }

    /// Replaces M⁻¹ by `new` (d entries for a diagonal mass, d² for a dense one) by copying, and
    /// refactorizes a dense mass (d³/3 flops, no allocation).
    ///
    /// Errors, with the previous M⁻¹ (and factor) left in force, bit for bit:
    /// [`LinalgError::ReadOnly`] for the identity or a fixed diagonal;
    /// [`LinalgError::DimensionMismatch`]; [`LinalgError::NonFinite`];
    /// [`LinalgError::NotSymmetric`] (dense); [`LinalgError::NotPositiveDefinite`] (an entry
    /// ≤ 0, or a failed Cholesky pivot).
    pub fn set_inverse_mass(&mut self, new: &[T]) -> Result<(), LinalgError> {
        match &mut self.repr {
            BufRepr::Identity | BufRepr::Fixed(_) => Err(LinalgError::ReadOnly),
            BufRepr::Diagonal(m) => {
                if new.len() != m.len() {
                    return Err(LinalgError::DimensionMismatch {
                        expected: m.len(),
                        found: new.len(),
                    });
                }
                Mass::diagonal(new)?;
                copy_into(m, new);
                Ok(())
            }
            BufRepr::Dense {
                precision,
                factor,
                dim,
                eigen,
                ..
            } => {
                // `new` is d² long (checked), as are `factor` and `precision` (checked when the
                // buffer was built): the copies copy all of it.
                check_symmetric(new, *dim)?;
                copy_into(factor, new);
                if let Err(e) = cholesky_in_place(factor, *dim) {
                    // Refactor the old precision: it factored before, and the factorisation is
                    // deterministic, so this restores the old factor bit for bit.
                    copy_into(factor, precision);
                    let _ = cholesky_in_place(factor, *dim);
                    return Err(e);
                }
                copy_into(precision, new);
                if !eigen.is_empty() {
                    symmetric_eigen(precision, eigen, *dim);
                }
                Ok(())
            }
        }
    }
}

/// The identity mass M = I fixed at compile time (a sampler's `with_mass`): a sampler with it
/// compiles the identity's step code only. (At run time, [`MassBuffer::identity`].)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IdentityMass;

/// A diagonal mass fixed at compile time (a sampler's `with_mass`): diag(M⁻¹) in caller memory,
/// mutable (adaptable in place, as [`MassBuffer::diagonal`]) or read-only (a mass kept in flash, as
/// [`MassBuffer::fixed_diagonal`]). A sampler with it compiles the diagonal mass's step code only.
#[derive(Debug)]
pub struct DiagonalMass<'a, T>(pub(crate) MassBuffer<'a, T>);

impl<'a, T: Real> DiagonalMass<'a, T> {
    /// diag(M⁻¹) = `inv_mass`, adaptable (validated as [`Mass::diagonal`]).
    pub fn new(inv_mass: &'a mut [T]) -> Result<Self, LinalgError> {
        MassBuffer::diagonal(inv_mass).map(DiagonalMass)
    }

    /// diag(M⁻¹) = `inv_mass`, read-only (validated as [`Mass::diagonal`]).
    pub fn fixed(inv_mass: &'a [T]) -> Result<Self, LinalgError> {
        MassBuffer::fixed_diagonal(inv_mass).map(DiagonalMass)
    }

    /// diag(M⁻¹) as a slice: the one variant this type holds.
    #[inline(always)]
    pub(crate) fn inverse(&self) -> &[T] {
        self.0.inverse_mass()
    }
}

/// A dense mass fixed at compile time (a sampler's `with_mass`): M⁻¹ (d × d) and its work buffers
/// in caller memory, as [`MassBuffer::dense`] and [`MassBuffer::dense_with_eigen`]. A sampler with
/// it compiles the dense mass's step code only.
#[derive(Debug)]
pub struct DenseMass<'a, T>(pub(crate) MassBuffer<'a, T>);

impl<'a, T: Real> DenseMass<'a, T> {
    /// As [`MassBuffer::dense`] (`work` of [`MassBuffer::dense_work_len`]`(d)` entries).
    pub fn new(precision: &'a mut [T], work: &'a mut [T], d: usize) -> Result<Self, LinalgError> {
        MassBuffer::dense(precision, work, d).map(DenseMass)
    }

    /// As [`MassBuffer::dense_with_eigen`]: with the eigendecomposition the splitting
    /// integrator's exact friction flow needs.
    pub fn with_eigen(
        precision: &'a mut [T],
        work: &'a mut [T],
        eigen: &'a mut [T],
        d: usize,
    ) -> Result<Self, LinalgError> {
        MassBuffer::dense_with_eigen(precision, work, eigen, d).map(DenseMass)
    }

    /// The view, M⁻¹p vector and step backup of the one variant this type holds (`None` is
    /// unreachable: the constructors build only a dense buffer).
    #[inline(always)]
    pub(crate) fn dense_parts(&mut self) -> Option<(Mass<'_, T>, &mut [T], &mut [T])> {
        match self.0.parts() {
            MassParts::Dense(mass, inv_mass_p, backup) => Some((mass, inv_mass_p, backup)),
            _ => None,
        }
    }
}

impl<'a, T> From<DiagonalMass<'a, T>> for MassBuffer<'a, T> {
    fn from(mass: DiagonalMass<'a, T>) -> Self {
        mass.0
    }
}

impl<'a, T> From<DenseMass<'a, T>> for MassBuffer<'a, T> {
    fn from(mass: DenseMass<'a, T>) -> Self {
        mass.0
    }
}

/// A sampler whose Gaussian mass can be read and replaced in place (HMC, SGHMC, SGNHT and
/// SG-NPHMC with a mass from their `set_mass`): what the MCEM wrapper [`crate::adapt::Mcem`]
/// needs to push its M-step (Roychowdhury & Parthasarathy 2017, eq. 5) into the sampler between
/// E-steps.
pub trait AdaptiveMass<T: Real> {
    /// The current mass.
    fn mass(&self) -> Mass<'_, T>;
    /// Replaces M⁻¹ (see [`MassBuffer::set_inverse_mass`] for the layout and the errors; the old
    /// mass stays in force on error).
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError>;
}
