//! The kernel Stein discrepancy with the inverse multiquadric kernel (Gorham & Mackey 2017): how far a sample is from a target known only through its score ∇log p.
//!
//! For the IMQ base kernel k(x, y) = (c² + ‖x − y‖²)^β (c > 0, −1 < β < 0; Gorham & Mackey's
//! choice is c = 1, β = −½) and the Langevin Stein operator, the Stein kernel of two points with
//! scores b(x) = ∇log p(x) is, with r = x − y and s = c² + ‖r‖²,
//!
//! ```text
//! k₀(x, y) = b(x)·b(y) s^β                       (b(x)ᵀ b(y) k)
//!          − 2β s^{β−1} b(x)·r                    (b(x)ᵀ ∇_y k)
//!          + 2β s^{β−1} b(y)·r                    (b(y)ᵀ ∇_x k)
//!          − 4β(β − 1) s^{β−2} ‖r‖² − 2βd s^{β−1}  (tr ∇_x ∇_y k)
//! ```
//!
//! and the discrepancy of the sample x₁ … xₙ is the V-statistic
//! KSD = √((1/n²) Σᵢ Σⱼ k₀(xᵢ, xⱼ)), O(n²d). It is zero only for samples whose empirical law is
//! p, and with the IMQ kernel it detects non-convergence (Gorham & Mackey 2017, Thm. 8), which is
//! why Coullon, South & Nemeth (2023) tune SG-MCMC step sizes by it. `tools/arviz/ksd_check.py`
//! checks this implementation against a direct NumPy computation.

use crate::error::DiagnosticError;

/// The IMQ base kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Imq {
    /// c > 0.
    pub c: f64,
    /// −1 < β < 0.
    pub beta: f64,
}

impl Default for Imq {
    /// Gorham & Mackey's c = 1, β = −½.
    fn default() -> Self {
        Imq { c: 1.0, beta: -0.5 }
    }
}

impl Imq {
    /// Refuses parameters outside c > 0 (finite), −1 < β < 0, where the IMQ KSD is not
    /// convergence-determining (Gorham & Mackey 2017, Thm. 8).
    pub(crate) fn check(self) -> Result<(), DiagnosticError> {
        let Imq { c, beta } = self;
        if c.is_finite() && c > 0.0 && beta > -1.0 && beta < 0.0 {
            Ok(())
        } else {
            Err(DiagnosticError::InvalidArgument(
                "the IMQ kernel needs c > 0 and -1 < beta < 0",
            ))
        }
    }
}

/// The IMQ kernel Stein discrepancy of `points` (n rows of d, row-major) whose scores ∇log p are
/// `scores` (the same layout). Requires n ≥ 1, d ≥ 1, matching lengths, finite values and a
/// valid kernel.
pub fn imq_ksd(
    points: &[f64],
    scores: &[f64],
    d: usize,
    kernel: Imq,
) -> Result<f64, DiagnosticError> {
    kernel.check()?;
    let Imq { c, beta } = kernel;
    if d == 0
        || points.is_empty()
        || !points.len().is_multiple_of(d)
        || scores.len() != points.len()
    {
        return Err(DiagnosticError::InvalidArgument(
            "points and scores must be n >= 1 rows of d >= 1 values each",
        ));
    }
    if !points.iter().chain(scores).all(|v| v.is_finite()) {
        return Err(DiagnosticError::InvalidArgument(
            "points and scores must be finite",
        ));
    }
    let n = points.len() / d;
    let c2 = c * c;
    let df = d as f64;
    let mut total = 0.0;
    // k₀ is symmetric in its two points, so each off-diagonal pair is computed once and counted
    // twice; one `powf` per pair gives all three powers of s (s^{β−1} = s^β/s, s^{β−2} = s^β/s²).
    for i in 0..n {
        let (xi, bi) = (&points[i * d..(i + 1) * d], &scores[i * d..(i + 1) * d]);
        for j in i..n {
            let (xj, bj) = (&points[j * d..(j + 1) * d], &scores[j * d..(j + 1) * d]);
            let (mut r2, mut bb, mut bi_r, mut bj_r) = (0.0, 0.0, 0.0, 0.0);
            for k in 0..d {
                let r = xi[k] - xj[k];
                r2 += r * r;
                bb += bi[k] * bj[k];
                bi_r += bi[k] * r;
                bj_r += bj[k] * r;
            }
            let s = c2 + r2;
            let s_b = s.powf(beta);
            let (s_b1, s_b2) = (s_b / s, s_b / (s * s));
            let k0 = bb * s_b - 2.0 * beta * s_b1 * bi_r + 2.0 * beta * s_b1 * bj_r
                - 4.0 * beta * (beta - 1.0) * s_b2 * r2
                - 2.0 * beta * df * s_b1;
            total += if i == j { k0 } else { 2.0 * k0 };
        }
    }
    // (A sum of Stein-kernel values is ≥ 0 in exact arithmetic; rounding can leave −ε.)
    Ok((total / (n as f64 * n as f64)).max(0.0).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_pcg::Pcg64;
    use sgmcmc::rng::standard_normal_f64;

    /// One point: k₀(x, x) = ‖b‖² c^{2β} − 2βd c^{2(β−1)}, by hand.
    #[test]
    fn one_point_is_the_stein_kernel_on_the_diagonal() {
        let (x, b) = ([0.3, -1.2], [0.5, 2.0]);
        let k = Imq { c: 1.5, beta: -0.5 };
        let want = ((0.25 + 4.0) * 1.5f64.powf(-1.0) - 2.0 * -0.5 * 2.0 * 1.5f64.powf(-3.0)).sqrt();
        let got = imq_ksd(&x, &b, 2, k).unwrap();
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
    }

    /// Draws of N(0, I) score −x: the KSD falls as n grows (it is O(n^{−1/2}) for exact
    /// draws), and a sample shifted by 1 in every coordinate stays far away.
    #[test]
    fn the_discrepancy_sees_a_shifted_sample() {
        let d = 2;
        let mut rng = Pcg64::new(3, 4);
        let sample = |n: usize, shift: f64, rng: &mut Pcg64| {
            let x: Vec<f64> = (0..n * d)
                .map(|_| standard_normal_f64(rng) + shift)
                .collect();
            let b: Vec<f64> = x.iter().map(|v| -v).collect();
            imq_ksd(&x, &b, d, Imq::default()).unwrap()
        };
        let (small, large) = (sample(100, 0.0, &mut rng), sample(1600, 0.0, &mut rng));
        let shifted = sample(1600, 1.0, &mut rng);
        // n × 16: the KSD of exact draws shrinks about 4× (by 2.5× at the least, allowing for
        // its own sampling noise at n = 100).
        assert!(large < small / 2.5, "{small} -> {large}");
        assert!(shifted > 5.0 * large, "shifted {shifted}, exact {large}");
    }

    /// The summation (each pair once, one `powf` per pair) against the definition term by term
    /// over all n² ordered pairs with three `powf`s each, on a 3-d sample with arbitrary scores
    /// and a non-default kernel: equal to rounding (1e-12 relative).
    #[test]
    fn matches_the_direct_double_sum() {
        let (n, d) = (40, 3);
        let mut rng = Pcg64::new(5, 6);
        let x: Vec<f64> = (0..n * d).map(|_| standard_normal_f64(&mut rng)).collect();
        let b: Vec<f64> = (0..n * d).map(|_| standard_normal_f64(&mut rng)).collect();
        let (c, beta) = (0.7, -0.3);
        let mut total = 0.0;
        for i in 0..n {
            for j in 0..n {
                let (xi, xj) = (&x[i * d..(i + 1) * d], &x[j * d..(j + 1) * d]);
                let (bi, bj) = (&b[i * d..(i + 1) * d], &b[j * d..(j + 1) * d]);
                let r: Vec<f64> = (0..d).map(|k| xi[k] - xj[k]).collect();
                let dot = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(p, q)| p * q).sum::<f64>();
                let r2 = dot(&r, &r);
                let s = c * c + r2;
                total += dot(bi, bj) * s.powf(beta) - 2.0 * beta * s.powf(beta - 1.0) * dot(bi, &r)
                    + 2.0 * beta * s.powf(beta - 1.0) * dot(bj, &r)
                    - 4.0 * beta * (beta - 1.0) * s.powf(beta - 2.0) * r2
                    - 2.0 * beta * d as f64 * s.powf(beta - 1.0);
            }
        }
        let want = (total / (n * n) as f64).sqrt();
        let got = imq_ksd(&x, &b, d, Imq { c, beta }).unwrap();
        assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
    }

    #[test]
    fn bad_input_is_refused() {
        let bad = Imq { c: 1.0, beta: 0.5 };
        assert!(imq_ksd(&[0.0], &[0.0], 1, bad).is_err());
        assert!(imq_ksd(&[0.0, 1.0], &[0.0], 1, Imq::default()).is_err());
        assert!(imq_ksd(&[f64::NAN], &[0.0], 1, Imq::default()).is_err());
        assert!(imq_ksd(&[], &[], 1, Imq::default()).is_err());
    }
}
