//! `sgmcmc::linalg` against a naive f64 Gauss–Jordan reference on random SPD matrices (d up to 64), f32 and f64, and its errors.
//!
//! Random SPD matrices are A = BBᵀ + δI with B uniform on [−1, 1]^{d×d} and δ ∈ {10⁻², 10⁻¹, 1}
//! (built in f64, rounded once to the tested type, exactly symmetric), for
//! d ∈ {1, 2, 3, 7, 16, 33, 64}: once per d and δ with a fixed seed, and again under proptest
//! (fixed seed, ChaCha, no persistence). The reference is Gauss–Jordan elimination with partial
//! pivoting in f64 on the *rounded* matrix, so for f32 it is exact to ~10⁻¹³ relative and for f64
//! its own error is of the size of ours (hence the factor 2 on the f64 bounds below).
//!
//! Tolerances, with ε the unit roundoff of the tested type (2⁻²⁴ or 2⁻⁵³), γₙ = nε/(1 − nε),
//! and κ∞(A) = ‖A‖∞‖A⁻¹‖∞ from the reference inverse:
//!
//! * Cholesky (Higham Thm. 10.3, rigorous): |LLᵀ − A|ᵢⱼ ≤ γ_{d+1} √(aᵢᵢ aⱼⱼ), times 2 for f64
//!   (the product LLᵀ is itself formed in f64);
//! * mat_vec (rigorous): |y − y_ref|ᵢ ≤ γ_d Σⱼ |aᵢⱼ xⱼ|, times 2 for f64;
//! * solves and inverses (normwise forward error, first order): ‖x − x_ref‖∞ / ‖x_ref‖∞ ≤
//!   c·(d + 2)·ε·κ∞ with c = 4 (c = 8 for f64, whose reference has an error of the same size).
//!   The rigorous first-order bound carries an extra factor up to d (from ‖|L||Lᵀ|‖ ≤ d‖A‖) and
//!   is vacuous for f32 at κ ≈ 10⁴, so this is the customary d·ε·κ scaling with a stated
//!   constant; the "+ 2" keeps d = 1 (a couple of roundings) from dominating. The observed
//!   ratios error/((d + 2)·ε·κ∞), printed by `every_dimension`, peak at 0.50 (f32) and 0.74
//!   (f64, spd_inverse), a margin of 8 to 10, while any O(1)-relative bug fails by orders of
//!   magnitude (κ∞ ≤ 4·10⁴ here). Triangular solves and the triangular inverse use κ∞(L).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed};
use rand_core::SeedableRng;
use rand_pcg::Pcg64;
use sgmcmc::linalg::{
    check_symmetric, cholesky_in_place, cholesky_solve_in_place, invert_lower_in_place, mat_vec,
    solve_lower_in_place, solve_lower_transpose_in_place, spd_inverse,
};
use sgmcmc::{LinalgError, Real};

const DIMS: [usize; 7] = [1, 2, 3, 7, 16, 33, 64];
const DELTAS: [f64; 3] = [1e-2, 1e-1, 1.0];

// ---- the f64 reference -----------------------------------------------------------------------

/// Solves A X = R for m right-hand sides (R is d × m, row-major) by Gauss–Jordan elimination
/// with partial pivoting, in f64. Panics on an exactly singular matrix (test code only).
fn gauss_jordan(a: &[f64], d: usize, r: &[f64], m: usize) -> Vec<f64> {
    let mut a = a.to_vec();
    let mut r = r.to_vec();
    for col in 0..d {
        let piv = (col..d)
            .max_by(|&i, &j| a[i * d + col].abs().total_cmp(&a[j * d + col].abs()))
            .unwrap();
        assert!(a[piv * d + col] != 0.0, "singular reference");
        for k in 0..d {
            a.swap(col * d + k, piv * d + k);
        }
        for k in 0..m {
            r.swap(col * m + k, piv * m + k);
        }
        let p = a[col * d + col];
        for k in 0..d {
            a[col * d + k] /= p;
        }
        for k in 0..m {
            r[col * m + k] /= p;
        }
        for i in 0..d {
            if i != col {
                let f = a[i * d + col];
                if f != 0.0 {
                    for k in 0..d {
                        a[i * d + k] -= f * a[col * d + k];
                    }
                    for k in 0..m {
                        r[i * m + k] -= f * r[col * m + k];
                    }
                }
            }
        }
    }
    r
}

fn identity(d: usize) -> Vec<f64> {
    let mut e = vec![0.0; d * d];
    for i in 0..d {
        e[i * d + i] = 1.0;
    }
    e
}

fn inf_norm(a: &[f64], d: usize) -> f64 {
    a.chunks(d)
        .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

fn vec_inf(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// κ∞(A) and the reference inverse.
fn condition(a: &[f64], d: usize) -> (f64, Vec<f64>) {
    let inv = gauss_jordan(a, d, &identity(d), d);
    (inf_norm(a, d) * inf_norm(&inv, d), inv)
}

// ---- matrices --------------------------------------------------------------------------------

/// A = BBᵀ + δI in f64 from a row-major B (exactly symmetric: the lower triangle is mirrored).
fn spd_from(b: &[f64], d: usize, delta: f64) -> Vec<f64> {
    let mut a = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (0..d).map(|k| b[i * d + k] * b[j * d + k]).sum();
            a[i * d + j] = s + if i == j { delta } else { 0.0 };
            a[j * d + i] = a[i * d + j];
        }
    }
    a
}

fn random_b(rng: &mut Pcg64, d: usize) -> Vec<f64> {
    (0..d * d)
        .map(|_| 2.0 * sgmcmc::rng::uniform_f64(rng) - 1.0)
        .collect()
}

fn to_t<T: Real>(x: &[f64]) -> Vec<T> {
    x.iter().map(|&v| T::from_f64(v)).collect()
}

fn to_f64<T: Real>(x: &[T]) -> Vec<f64> {
    x.iter().map(|v| v.to_f64()).collect()
}

fn eps<T: Real>() -> f64 {
    // Unit roundoff u = EPSILON/2.
    T::EPSILON.to_f64() / 2.0
}

fn gamma_n<T: Real>(n: usize) -> f64 {
    let nu = n as f64 * eps::<T>();
    nu / (1.0 - nu)
}

/// 1 for f32 (the f64 reference is exact at that scale), 2 for f64 (reference error included).
fn ref_factor<T: Real>() -> f64 {
    if T::EPSILON.to_f64() < 1e-10 {
        2.0
    } else {
        1.0
    }
}

/// The observed ratios (forward error)/((d + 2)·ε·κ) of one check, for reporting.
#[derive(Default, Debug, Clone, Copy)]
struct Worst {
    solve: f64,
    inverse: f64,
    lower: f64,
    lower_t: f64,
    lower_inv: f64,
}

/// All checks on one SPD matrix given in f64 (rounded to T here). Returns the error ratios.
fn check_all<T: Real>(a64: &[f64], d: usize, rhs64: &[f64]) -> Worst {
    let what = format!("{} d = {d}", core::any::type_name::<T>());
    let a_t: Vec<T> = to_t(a64);
    let a = to_f64(&a_t); // the matrix actually factored, exactly
    let rhs_t: Vec<T> = to_t(rhs64);
    let rhs = to_f64(&rhs_t);
    let e = eps::<T>();
    let c = 4.0 * ref_factor::<T>();
    assert_eq!(check_symmetric(&a_t, d), Ok(()), "{what}");

    // Cholesky: backward error, componentwise, rigorous.
    let mut l_t = a_t.clone();
    cholesky_in_place(&mut l_t, d).unwrap_or_else(|err| panic!("{what}: {err}"));
    let l = to_f64(&l_t);
    for i in 0..d {
        for j in 0..d {
            if j > i {
                assert_eq!(l[i * d + j], 0.0, "{what}: upper triangle not zeroed");
                continue;
            }
            let llt: f64 = (0..=j).map(|k| l[i * d + k] * l[j * d + k]).sum();
            let err = (llt - a[i * d + j]).abs();
            let tol =
                ref_factor::<T>() * gamma_n::<T>(d + 1) * (a[i * d + i] * a[j * d + j]).sqrt();
            assert!(err <= tol, "{what}: (LLᵀ − A)[{i},{j}] = {err:e} > {tol:e}");
        }
    }

    // mat_vec: componentwise, rigorous.
    let mut y_t = vec![T::ZERO; d];
    mat_vec(&a_t, d, &rhs_t, &mut y_t).unwrap();
    for i in 0..d {
        let exact: f64 = (0..d).map(|j| a[i * d + j] * rhs[j]).sum();
        let scale: f64 = (0..d).map(|j| (a[i * d + j] * rhs[j]).abs()).sum();
        let tol = ref_factor::<T>() * gamma_n::<T>(d) * scale;
        let err = (y_t[i].to_f64() - exact).abs();
        assert!(err <= tol, "{what}: mat_vec[{i}] error {err:e} > {tol:e}");
    }

    let (kappa, inv_ref) = condition(&a, d);
    let mut worst = Worst::default();

    // A x = b through the factor.
    let x_ref = gauss_jordan(&a, d, &rhs, 1);
    let mut x_t = rhs_t.clone();
    cholesky_solve_in_place(&l_t, d, &mut x_t).unwrap();
    let diff: Vec<f64> = to_f64(&x_t)
        .iter()
        .zip(&x_ref)
        .map(|(p, q)| p - q)
        .collect();
    let rel = vec_inf(&diff) / vec_inf(&x_ref);
    worst.solve = rel / ((d + 2) as f64 * e * kappa);
    assert!(
        rel <= c * (d + 2) as f64 * e * kappa,
        "{what}: solve error {rel:e}, κ = {kappa:e}"
    );

    // The inverse; exactly symmetric.
    let mut inv_t = vec![T::ZERO; d * d];
    spd_inverse(&a_t, d, &mut inv_t).unwrap();
    assert_eq!(check_symmetric(&inv_t, d), Ok(()), "{what}: inverse");
    let diff: Vec<f64> = to_f64(&inv_t)
        .iter()
        .zip(&inv_ref)
        .map(|(p, q)| p - q)
        .collect();
    let rel = vec_inf(&diff) / vec_inf(&inv_ref);
    worst.inverse = rel / ((d + 2) as f64 * e * kappa);
    assert!(
        rel <= c * (d + 2) as f64 * e * kappa,
        "{what}: inverse error {rel:e}, κ = {kappa:e}"
    );

    // Triangular solves and the triangular inverse against Gauss–Jordan on L (and Lᵀ).
    let (kappa_l, l_inv_ref) = condition(&l, d);
    let lt: Vec<f64> = (0..d * d).map(|k| l[(k % d) * d + k / d]).collect();
    for (transpose, reference) in [(false, &l), (true, &lt)] {
        let x_ref = gauss_jordan(reference, d, &rhs, 1);
        let mut x_t = rhs_t.clone();
        if transpose {
            solve_lower_transpose_in_place(&l_t, d, &mut x_t).unwrap();
        } else {
            solve_lower_in_place(&l_t, d, &mut x_t).unwrap();
        }
        let diff: Vec<f64> = to_f64(&x_t)
            .iter()
            .zip(&x_ref)
            .map(|(p, q)| p - q)
            .collect();
        let rel = vec_inf(&diff) / vec_inf(&x_ref);
        let ratio = rel / ((d + 2) as f64 * e * kappa_l);
        if transpose {
            worst.lower_t = ratio;
        } else {
            worst.lower = ratio;
        }
        assert!(
            rel <= c * (d + 2) as f64 * e * kappa_l,
            "{what}: triangular solve (transpose {transpose}) error {rel:e}, κ(L) = {kappa_l:e}"
        );
    }
    let mut w_t = l_t.clone();
    invert_lower_in_place(&mut w_t, d).unwrap();
    let w = to_f64(&w_t);
    for i in 0..d {
        for j in i + 1..d {
            assert_eq!(w[i * d + j], 0.0, "{what}: L⁻¹ upper triangle");
        }
    }
    let diff: Vec<f64> = w.iter().zip(&l_inv_ref).map(|(p, q)| p - q).collect();
    let rel = vec_inf(&diff) / vec_inf(&l_inv_ref);
    worst.lower_inv = rel / ((d + 2) as f64 * e * kappa_l);
    assert!(
        rel <= c * (d + 2) as f64 * e * kappa_l,
        "{what}: L⁻¹ error {rel:e}, κ(L) = {kappa_l:e}"
    );
    worst
}

#[test]
fn every_dimension() {
    let mut rng = Pcg64::seed_from_u64(0x11a1_9000);
    let (mut w32, mut w64) = (Worst::default(), Worst::default());
    let max = |a: &mut Worst, b: Worst| {
        a.solve = a.solve.max(b.solve);
        a.inverse = a.inverse.max(b.inverse);
        a.lower = a.lower.max(b.lower);
        a.lower_t = a.lower_t.max(b.lower_t);
        a.lower_inv = a.lower_inv.max(b.lower_inv);
    };
    for d in DIMS {
        for delta in DELTAS {
            let b = random_b(&mut rng, d);
            let a = spd_from(&b, d, delta);
            let rhs: Vec<f64> = (0..d)
                .map(|_| 2.0 * sgmcmc::rng::uniform_f64(&mut rng) - 1.0)
                .collect();
            let (kappa, _) = condition(&a, d);
            max(&mut w32, check_all::<f32>(&a, d, &rhs));
            max(&mut w64, check_all::<f64>(&a, d, &rhs));
            println!("d = {d:2}, δ = {delta}: κ∞ = {kappa:.3e}");
        }
    }
    println!("worst error/((d + 2)·ε·κ) f32: {w32:?}");
    println!("worst error/((d + 2)·ε·κ) f64: {w64:?}");
}

fn cfg(cases: u32) -> Config {
    Config {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0x11a1_9e5e_ed00_0001),
        failure_persistence: None,
        ..Config::default()
    }
}

/// (d, δ, B, b) with B uniform on [−1, 1]^{d×d} and b uniform on [−1, 1]^d.
fn spd_case() -> impl Strategy<Value = (usize, f64, Vec<f64>, Vec<f64>)> {
    (
        prop::sample::select(DIMS.to_vec()),
        prop::sample::select(DELTAS.to_vec()),
    )
        .prop_flat_map(|(d, delta)| {
            (
                Just(d),
                Just(delta),
                prop::collection::vec(-1.0f64..1.0, d * d),
                prop::collection::vec(-1.0f64..1.0, d),
            )
        })
}

proptest! {
    #![proptest_config(cfg(48))]

    #[test]
    fn random_spd_matches_reference((d, delta, b, rhs) in spd_case()) {
        let a = spd_from(&b, d, delta);
        check_all::<f32>(&a, d, &rhs);
        check_all::<f64>(&a, d, &rhs);
    }

    /// Breaking pivot k (A_kk lowered by its Schur complement + 1, so pivot k becomes ≈ −1 while
    /// the leading k × k block is untouched) gives `NotPositiveDefinite { pivot: k }`, from the
    /// factorisation, the inverse and the dense mass alike.
    #[test]
    fn broken_pivot_is_reported((d, delta, b, _rhs) in spd_case(), k_frac in 0.0f64..1.0) {
        let k = ((k_frac * d as f64) as usize).min(d - 1);
        let mut a = spd_from(&b, d, delta);
        let mut l = a.clone();
        cholesky_in_place(&mut l, d).unwrap();
        let schur = l[k * d + k] * l[k * d + k];
        a[k * d + k] -= schur + 1.0;
        let expect = Err(LinalgError::NotPositiveDefinite { pivot: k });
        let a32: Vec<f32> = to_t(&a);
        prop_assert_eq!(cholesky_in_place(&mut a.clone(), d), expect);
        prop_assert_eq!(cholesky_in_place(&mut a32.clone(), d), expect);
        prop_assert_eq!(spd_inverse(&a, d, &mut vec![0.0; d * d]), expect);
        let mut factor = vec![0.0f32; d * d];
        prop_assert_eq!(sgmcmc::kinetic::Mass::dense(&a32, &mut factor, d).map(|_| ()), expect);
    }
}

#[test]
fn errors_not_panics() {
    use LinalgError::*;
    // Indefinite, zero, negative, NaN and infinite pivots.
    let mut a = [1.0f64, 2.0, 2.0, 1.0];
    assert_eq!(
        cholesky_in_place(&mut a, 2),
        Err(NotPositiveDefinite { pivot: 1 })
    );
    let mut a = [0.0f64; 9];
    assert_eq!(
        cholesky_in_place(&mut a, 3),
        Err(NotPositiveDefinite { pivot: 0 })
    );
    let mut a = [1.0f32, 0.0, 0.0, -1.0];
    assert_eq!(
        cholesky_in_place(&mut a, 2),
        Err(NotPositiveDefinite { pivot: 1 })
    );
    let mut a = [1.0f64, 0.0, f64::NAN, 1.0];
    assert_eq!(
        cholesky_in_place(&mut a, 2),
        Err(NotPositiveDefinite { pivot: 1 })
    );
    let mut a = [f64::INFINITY, 0.0, 0.0, 1.0];
    assert_eq!(
        cholesky_in_place(&mut a, 2),
        Err(NotPositiveDefinite { pivot: 0 })
    );
    // Positive semi-definite (rank 1): the second pivot is exactly 0.
    let mut a = [1.0f64, 1.0, 1.0, 1.0];
    assert_eq!(
        cholesky_in_place(&mut a, 2),
        Err(NotPositiveDefinite { pivot: 1 })
    );

    // Lengths, including an overflowing d².
    let mismatch = |expected, found| Err(DimensionMismatch { expected, found });
    assert_eq!(cholesky_in_place(&mut [1.0f64; 3], 2), mismatch(4, 3));
    assert_eq!(
        cholesky_in_place(&mut [1.0f64; 3], usize::MAX),
        mismatch(usize::MAX, 3)
    );
    let l = [1.0f64, 0.0, 0.0, 1.0];
    assert_eq!(solve_lower_in_place(&l, 2, &mut [1.0; 3]), mismatch(2, 3));
    assert_eq!(
        solve_lower_transpose_in_place(&l, 2, &mut [1.0; 1]),
        mismatch(2, 1)
    );
    assert_eq!(
        cholesky_solve_in_place(&l[..3], 2, &mut [1.0; 2]),
        mismatch(4, 3)
    );
    assert_eq!(invert_lower_in_place(&mut [1.0f64; 5], 2), mismatch(4, 5));
    assert_eq!(spd_inverse(&l, 2, &mut [0.0; 3]), mismatch(4, 3));
    assert_eq!(mat_vec(&l, 2, &[1.0; 2], &mut [0.0; 1]), mismatch(2, 1));
    assert_eq!(mat_vec(&l, 2, &[1.0; 3], &mut [0.0; 2]), mismatch(2, 3));
    assert_eq!(check_symmetric(&l, 3), mismatch(9, 4));

    // Symmetry and finiteness.
    assert_eq!(
        check_symmetric(&[1.0f64, 2.0, 2.5, 1.0], 2),
        Err(NotSymmetric { row: 1, col: 0 })
    );
    assert_eq!(
        check_symmetric(&[1.0f64, f64::NAN, f64::NAN, 1.0], 2),
        Err(NonFinite { index: 1 })
    );
    assert_eq!(
        spd_inverse(&[1.0f64, 2.0, 2.5, 1.0], 2, &mut [0.0; 4]),
        Err(NotSymmetric { row: 1, col: 0 })
    );

    // d = 0: everything succeeds on empty slices.
    let mut empty: [f64; 0] = [];
    assert_eq!(cholesky_in_place(&mut empty, 0), Ok(()));
    assert_eq!(solve_lower_in_place(&[], 0, &mut empty), Ok(()));
    assert_eq!(solve_lower_transpose_in_place(&[], 0, &mut empty), Ok(()));
    assert_eq!(invert_lower_in_place(&mut empty, 0), Ok(()));
    assert_eq!(spd_inverse(&[], 0, &mut empty), Ok(()));
    assert_eq!(mat_vec(&[], 0, &[], &mut empty), Ok(()));
}
