//! Bayesian logistic regression on 50 points of Ripley's data in flash, and its exact posterior moments by quadrature on the device.
//!
//! The model: weights w = (intercept, w₁, w₂), prior N(0, `PRIOR_VAR`·I), likelihood
//! Π σ(zₙ)^{yₙ} (1 − σ(zₙ))^{1 − yₙ} with zₙ = w₀ + w₁xₙ₁ + w₂xₙ₂ (data: `ripley.rs`), so
//!
//! ```text
//! U(w) = Σₙ [softplus(zₙ) − yₙ zₙ] + |w|²/(2·PRIOR_VAR),   ∇U(w) = Σₙ (σ(zₙ) − yₙ) x̃ₙ + w/PRIOR_VAR
//! ```
//!
//! with x̃ₙ = (1, xₙ₁, xₙ₂). The truth the samplers are checked against is computed here, in the
//! sampler's own float type: Newton's method to the mode ŵ and the Hessian H there, then the
//! trapezoidal rule on a 31³ grid u ∈ [−7.5, 7.5]³ (spacing ½) in the Laplace-whitened
//! coordinates w = ŵ + C⁻ᵀu (CCᵀ = H), weights e^{U(ŵ) − U(w)}. For this smooth, fast-decaying
//! integrand the rule converges geometrically: a host computation in `f64` on [−10, 10]³ with
//! spacing 0.4 agrees to 10⁻⁵ relative (means −0.2700, 1.3708, 2.8573; variances 0.2151,
//! 0.3237, 0.5303 — the mean is far from the mode, 2.558 for w₂: the posterior is skewed).
//! Fixed-size arrays throughout, so no access can fail (the firmware links no panic path).

use crate::ripley::{FEATURES, LABELS};
use sgmcmc::Real;

/// Weights: the intercept and the two features'.
pub const DIM: usize = 3;
/// The prior variance of every weight (`tools/gen_firmware_data.py` uses the same value).
pub const PRIOR_VAR: f32 = 4.0;

/// x̃ₙ = (1, xₙ₁, xₙ₂) in type T.
fn row<T: Real>(features: &[f32; 2]) -> [T; DIM] {
    [T::ONE, T::from_f32(features[0]), T::from_f32(features[1])]
}

fn dot<T: Real>(a: &[T; DIM], b: &[T; DIM]) -> T {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// ln(1 + eᶻ) without overflow.
fn softplus<T: Real>(z: T) -> T {
    if z > T::ZERO {
        z + (T::ONE + (-z).exp()).ln()
    } else {
        (T::ONE + z.exp()).ln()
    }
}

/// σ(z) = 1/(1 + e⁻ᶻ) without overflow.
fn sigmoid<T: Real>(z: T) -> T {
    if z >= T::ZERO {
        T::ONE / (T::ONE + (-z).exp())
    } else {
        let e = z.exp();
        e / (T::ONE + e)
    }
}

/// U(w).
fn energy<T: Real>(w: &[T; DIM]) -> T {
    let mut u = dot(w, w) / (T::TWO * T::from_f32(PRIOR_VAR));
    for (x, &y) in FEATURES.iter().zip(LABELS.iter()) {
        let z = dot(w, &row(x));
        u += softplus(z) - if y == 1 { z } else { T::ZERO };
    }
    u
}

/// ∇U(w) into `g`, and (with `hessian`) the Hessian Σ σ(1 − σ) x̃x̃ᵀ + I/PRIOR_VAR.
fn gradient<T: Real>(w: &[T; DIM], g: &mut [T; DIM], hessian: Option<&mut [[T; DIM]; DIM]>) {
    let inv_prior = T::ONE / T::from_f32(PRIOR_VAR);
    let mut h = [[T::ZERO; DIM]; DIM];
    for i in 0..DIM {
        g[i] = w[i] * inv_prior;
        h[i][i] = inv_prior;
    }
    for (x, &y) in FEATURES.iter().zip(LABELS.iter()) {
        let xt = row(x);
        let s = sigmoid(dot(w, &xt));
        let r = s - if y == 1 { T::ONE } else { T::ZERO };
        let c = s * (T::ONE - s);
        for i in 0..DIM {
            g[i] += r * xt[i];
            for j in 0..DIM {
                h[i][j] += c * xt[i] * xt[j];
            }
        }
    }
    if let Some(out) = hessian {
        *out = h;
    }
}

/// ∇U at θ = w into `g` (slices of length [`DIM`]: the samplers' buffers).
pub fn gradient_slice<T: Real>(theta: &[T], g: &mut [T]) {
    let mut w = [T::ZERO; DIM];
    for (wi, &t) in w.iter_mut().zip(theta) {
        *wi = t;
    }
    let mut gw = [T::ZERO; DIM];
    gradient(&w, &mut gw, None);
    for (gi, &v) in g.iter_mut().zip(gw.iter()) {
        *gi = v;
    }
}

/// U at θ = w.
pub fn energy_slice<T: Real>(theta: &[T]) -> T {
    let mut w = [T::ZERO; DIM];
    for (wi, &t) in w.iter_mut().zip(theta) {
        *wi = t;
    }
    energy(&w)
}

/// The Cholesky factor C (lower, CCᵀ = H) of a symmetric positive definite 3 × 3, or `None`.
fn cholesky<T: Real>(h: &[[T; DIM]; DIM]) -> Option<[[T; DIM]; DIM]> {
    let mut c = [[T::ZERO; DIM]; DIM];
    for i in 0..DIM {
        for j in 0..=i {
            let mut s = h[i][j];
            for k in 0..j {
                s -= c[i][k] * c[j][k];
            }
            if i == j {
                if !(s > T::ZERO) {
                    return None;
                }
                c[i][i] = s.sqrt();
            } else {
                c[i][j] = s / c[j][j];
            }
        }
    }
    Some(c)
}

/// Solves Cᵀx = u (back substitution).
fn solve_upper<T: Real>(c: &[[T; DIM]; DIM], u: [T; DIM]) -> [T; DIM] {
    let mut x = [T::ZERO; DIM];
    for i in (0..DIM).rev() {
        let mut s = u[i];
        for j in i + 1..DIM {
            s -= c[j][i] * x[j];
        }
        x[i] = s / c[i][i];
    }
    x
}

/// Grid points per axis and spacing of the quadrature (in whitened units): [−7.5, 7.5].
const GRID: usize = 31;
const SPACING: f32 = 0.5;

/// The posterior mean and variance of each weight (module docs), or `None` if Newton's
/// method did not reach a positive definite Hessian.
pub fn truth<T: Real>() -> Option<([T; DIM], [T; DIM])> {
    // Newton from 0: the log posterior is strictly concave, 25 steps are far more than enough.
    let mut w = [T::ZERO; DIM];
    let mut h = [[T::ZERO; DIM]; DIM];
    for _ in 0..25 {
        let mut g = [T::ZERO; DIM];
        gradient(&w, &mut g, Some(&mut h));
        let c = cholesky(&h)?;
        // H⁻¹g = C⁻ᵀ(C⁻¹g): forward, then back substitution.
        let mut y = [T::ZERO; DIM];
        for i in 0..DIM {
            let mut s = g[i];
            for k in 0..i {
                s -= c[i][k] * y[k];
            }
            y[i] = s / c[i][i];
        }
        let step = solve_upper(&c, y);
        for i in 0..DIM {
            w[i] -= step[i];
        }
    }
    let mut g = [T::ZERO; DIM];
    gradient(&w, &mut g, Some(&mut h));
    let c = cholesky(&h)?;
    let u_mode = energy(&w);
    // Σ weight, Σ weight·x, Σ weight·x² for x = w − ŵ (centred at the mode, so the variance
    // E x² − (E x)² does not cancel), summed per innermost row first (shorter sums keep the
    // f32 rounding far below the Monte Carlo error).
    let (mut z, mut s1, mut s2) = (T::ZERO, [T::ZERO; DIM], [T::ZERO; DIM]);
    let half = T::from_f32(SPACING * (GRID - 1) as f32 / 2.0);
    let at = |k: usize| T::from_f32(SPACING) * T::from_usize(k) - half;
    for a in 0..GRID {
        for b in 0..GRID {
            let (mut rz, mut r1, mut r2) = (T::ZERO, [T::ZERO; DIM], [T::ZERO; DIM]);
            for k in 0..GRID {
                let x = solve_upper(&c, [at(a), at(b), at(k)]);
                let p = [w[0] + x[0], w[1] + x[1], w[2] + x[2]];
                let e = (u_mode - energy(&p)).exp();
                rz += e;
                for i in 0..DIM {
                    r1[i] += e * x[i];
                    r2[i] += e * x[i] * x[i];
                }
            }
            z += rz;
            for i in 0..DIM {
                s1[i] += r1[i];
                s2[i] += r2[i];
            }
        }
    }
    let mut mean = [T::ZERO; DIM];
    let mut var = [T::ZERO; DIM];
    for i in 0..DIM {
        let shift = s1[i] / z;
        mean[i] = w[i] + shift;
        var[i] = s2[i] / z - shift * shift;
    }
    Some((mean, var))
}
