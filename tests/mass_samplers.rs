//! HMC, SGHMC and SGNHT with diagonal and dense masses: stationary moments, and the bias of Roychowdhury & Parthasarathy 2017 Alg. 2's printed thermostat.
//!
//! Fixed seeds; every tolerance is `Z` = 5 batch-means standard errors (`common::run_cov`),
//! estimated from the chain itself. Targets: the 10-d Gaussian with variances 0.1…10 of
//! tests/stationary.rs, and a 5-d Gaussian with unit variances and all correlations 0.9 (its
//! covariance entries are checked too).

use crate::common;

use common::{DenseGaussian, Gaussian, Z, assert_cov, run_cov};
use rand_pcg::Pcg64;
use sgmcmc::prelude::{
    Hmc, HmcParams, Integrator, MassBuffer, Model, Real, Sghmc, SghmcParams, Sgnht, SgnhtParams,
    ThermostatRule,
};

/// A diagonal M⁻¹ that only partly matches the 10-d target: m⁻¹ᵢ = √σᵢ², so the preconditioned
/// frequencies ω²ᵢ = m⁻¹ᵢ/σᵢ² = 1/σᵢ range over [0.32, 3.2] (not all 1, so a sampler that
/// ignored M⁻¹ somewhere would be visibly wrong).
fn diag_inv_mass(g: &Gaussian) -> Vec<f64> {
    g.var.iter().map(|v| v.sqrt()).collect()
}

/// A dense M⁻¹ = ½Σ + ½I for the correlated target: not Σ itself, so the preconditioned
/// Hessian M⁻¹Σ⁻¹ = ½I + ½Σ⁻¹ has eigenvalues 0.61 and 5.5 (ρ = 0.9, d = 5).
fn dense_inv_mass(t: &DenseGaussian) -> Vec<f64> {
    let d = t.dim();
    (0..d * d)
        .map(|k| 0.5 * t.cov[k] + if k / d == k % d { 0.5 } else { 0.0 })
        .collect()
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Hmc,
    Sghmc(Integrator),
    Sgnht(Integrator, ThermostatRule),
}

/// Runs `kind` with the given mass on `target` in the float type T and returns its batch-means
/// moments.
/// SDE samplers: h = 0.01, A = 1; Euler's stationary bias is about A·m⁻¹·h/2 ≤ 1.6 % of a
/// variance here (m⁻¹ ≤ 3.2 on the diagonal target, eigenvalues of M⁻¹ ≤ 2.8 on the dense one)
/// and splitting's O(h²); the batch-means SE of a variance is ≥ 2 % at these run lengths, so the
/// bias stays below one SE. HMC is exact; ε = 0.07, L = 10 (trajectory length 0.7) keeps ω·t
/// in [0.3, 2.2] for every preconditioned frequency ω here (ω ≤ 3.2), away from π, where a fixed
/// trajectory length would make HMC nearly periodic on θ².
fn sample<T: Real>(
    kind: Kind,
    target: &DenseGaussian,
    inv_mass: &[f64],
    seed: u64,
) -> common::CovMoments {
    let d = target.dim();
    let dense = inv_mass.len() == d * d && d > 1;
    let z = T::ZERO;
    let mut theta: Vec<T> = target.mean.iter().map(|&x| T::from_f64(x)).collect();
    let mut p = vec![z; d];
    let mut minv: Vec<T> = inv_mass.iter().map(|&x| T::from_f64(x)).collect();
    let mut factor = vec![z; MassBuffer::<T>::dense_work_len(d)];
    let mut eigen = vec![z; 2 * d * d + d];
    let f = T::from_f64;
    let mass = if dense {
        // With its eigendecomposition, so the splitting integrator can take it too.
        MassBuffer::dense_with_eigen(&mut minv, &mut factor, &mut eigen, d).unwrap()
    } else {
        MassBuffer::diagonal(&mut minv).unwrap()
    };
    let mut rng = Pcg64::new(seed as u128, 0xa55);
    let mut grad = |t: &[T], gr: &mut [T]| target.gradient(t, gr);
    // 10⁶ SDE steps after 10⁵ burn-in, 50 batches of 2·10⁴ (the slowest autocorrelation time here
    // is a few hundred steps).
    let (burn, batches, per) = (100_000, 50, 20_000);
    match kind {
        Kind::Hmc => {
            let mut model = Model::new(
                |t: &[T], gr: &mut [T]| target.gradient(t, gr),
                |t: &[T]| target.energy(t),
            );
            let mut work = vec![z; Hmc::<T>::workspace_len(d)];
            let prm = HmcParams::new(f(0.07)).with_leapfrog_steps(10);
            let mut smp = Hmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
            smp.set_mass(mass).unwrap();
            // 10⁵ proposals in 50 batches.
            run_cov(&mut smp, &mut model, &mut rng, target, 2_000, 50, 2_000).unwrap()
        }
        Kind::Sghmc(i) => {
            let mut work = vec![z; Sghmc::<T>::workspace_len(d)];
            let prm = SghmcParams::new(f(0.01))
                .with_friction(f(1.0))
                .with_integrator(i);
            let mut smp = Sghmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
            smp.set_mass(mass).unwrap();
            run_cov(&mut smp, &mut grad, &mut rng, target, burn, batches, per).unwrap()
        }
        Kind::Sgnht(i, rule) => {
            let mut work = vec![z; Sgnht::<T>::workspace_len(d)];
            let prm = SgnhtParams::new(f(0.01))
                .with_diffusion(f(1.0))
                .with_integrator(i)
                .with_thermostat_rule(rule);
            let mut xi = prm.initial_thermostat();
            let mut smp = Sgnht::resume(
                prm,
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work,
            )
            .unwrap();
            smp.set_mass(mass).unwrap();
            run_cov(&mut smp, &mut grad, &mut rng, target, burn, batches, per).unwrap()
        }
    }
}

const KINDS_DIAG: [Kind; 5] = [
    Kind::Hmc,
    Kind::Sghmc(Integrator::Euler),
    Kind::Sghmc(Integrator::Splitting),
    Kind::Sgnht(Integrator::Euler, ThermostatRule::Derived),
    Kind::Sgnht(Integrator::Splitting, ThermostatRule::Derived),
];

/// Dense masses (built with their eigendecomposition, so splitting runs the exact flow
/// V e^{−ctΛ} Vᵀ).
const KINDS_DENSE: [Kind; 5] = [
    Kind::Hmc,
    Kind::Sghmc(Integrator::Euler),
    Kind::Sghmc(Integrator::Splitting),
    Kind::Sgnht(Integrator::Euler, ThermostatRule::Derived),
    Kind::Sgnht(Integrator::Splitting, ThermostatRule::Derived),
];

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn diagonal_mass_on_anisotropic_target() {
    let g = Gaussian::anisotropic(10);
    let target = DenseGaussian::from_diagonal(&g);
    let minv = diag_inv_mass(&g);
    for (k, kind) in KINDS_DIAG.into_iter().enumerate() {
        let m = sample::<f64>(kind, &target, &minv, 100 + k as u64);
        assert_cov(&format!("{kind:?} diagonal M"), &m, &target);
    }
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn diagonal_and_dense_mass_on_correlated_target() {
    let target = DenseGaussian::equicorrelated(5, 0.9);
    // Diagonal mass on the correlated target (M⁻¹ = I·0.5 + diag(Σ)·0.5 = I: the identity
    // written as a diagonal buffer, which takes the general-mass code path) and the dense one.
    let diag = vec![1.0; 5];
    for (k, kind) in KINDS_DIAG.into_iter().enumerate() {
        let m = sample::<f64>(kind, &target, &diag, 200 + k as u64);
        assert_cov(&format!("{kind:?} diagonal M, ρ = 0.9"), &m, &target);
    }
    let dense = dense_inv_mass(&target);
    for (k, kind) in KINDS_DENSE.into_iter().enumerate() {
        let m = sample::<f64>(kind, &target, &dense, 300 + k as u64);
        assert_cov(&format!("{kind:?} dense M, ρ = 0.9"), &m, &target);
    }
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn dense_mass_on_anisotropic_target() {
    // A dense M⁻¹ on the diagonal 10-d target: M⁻¹ = diag(√σ²) plus a 0.2·√(m⁻¹ᵢ m⁻¹ⱼ)
    // off-diagonal coupling (SPD: it is D^½ (0.8 I + 0.2 11ᵀ) D^½).
    let g = Gaussian::anisotropic(10);
    let target = DenseGaussian::from_diagonal(&g);
    let dm = diag_inv_mass(&g);
    let d = 10;
    let minv: Vec<f64> = (0..d * d)
        .map(|k| {
            let (i, j) = (k / d, k % d);
            let c = if i == j { 1.0 } else { 0.2 };
            c * (dm[i] * dm[j]).sqrt()
        })
        .collect();
    for (k, kind) in KINDS_DENSE.into_iter().enumerate() {
        let m = sample::<f64>(kind, &target, &minv, 400 + k as u64);
        assert_cov(&format!("{kind:?} dense M, 10-d"), &m, &target);
    }
}

/// Roychowdhury & Parthasarathy 2017 Alg. 2 prints the thermostat update ξ ← ξ + ε(pᵀM⁻¹p/D − 1). On a standard Gaussian
/// target with M⁻¹ = diag(0.1, 0.1, 10, 10) it leaves the variances of θ off by many standard
/// errors, while the derived dξ = (|M⁻¹p|²/tr M⁻¹ − 1) dt keeps them at 1.
#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn printed_thermostat_is_biased_for_non_isotropic_mass() {
    let g = Gaussian::standard(4);
    let target = DenseGaussian::from_diagonal(&g);
    let minv = [0.1, 0.1, 10.0, 10.0];
    let mut worst = [0.0f64; 2];
    for (r, rule) in [ThermostatRule::Derived, ThermostatRule::Printed]
        .into_iter()
        .enumerate()
    {
        let d = 4;
        let mut theta = vec![0.0; d];
        let (mut p, mut work) = (vec![0.0; d], vec![0.0; 2 * d]);
        let mut mv = minv.to_vec();
        let mass = MassBuffer::diagonal(&mut mv).unwrap();
        let mut rng = Pcg64::new(77, 0xbad);
        let mut grad = |t: &[f64], o: &mut [f64]| target.gradient(t, o);
        // Splitting at h = 0.01: stationary bias O(h²) (m⁻¹h = 0.1 at most). The slowest
        // coordinate (m⁻¹ = 0.1: ω = 0.32, damping ≈ 0.1) decorrelates in ~2·10³ steps, so
        // batches of 4·10⁴ steps, 50 of them.
        let prm = SgnhtParams::new(0.01)
            .with_diffusion(1.0)
            .with_integrator(Integrator::Splitting)
            .with_thermostat_rule(rule);
        let mut xi = prm.initial_thermostat();
        let mut smp = Sgnht::resume(
            prm,
            &mut theta,
            &mut p,
            std::slice::from_mut(&mut xi),
            &mut work,
        )
        .unwrap();
        smp.set_mass(mass).unwrap();
        let m = run_cov(&mut smp, &mut grad, &mut rng, &target, 200_000, 50, 40_000).unwrap();
        let vars: Vec<String> = (0..d)
            .map(|i| format!("{:.3} ± {:.3}", m.cov[i * d + i], m.cov_se[i * d + i]))
            .collect();
        println!("{rule:?}: Var θᵢ = {}", vars.join(", "));
        for i in 0..d {
            let k = i * d + i;
            worst[r] = worst[r].max((m.cov[k] - 1.0).abs() / m.cov_se[k]);
        }
        if rule == ThermostatRule::Derived {
            assert_cov(
                "SGNHT derived thermostat, M⁻¹ = diag(0.1, 0.1, 10, 10)",
                &m,
                &target,
            );
        }
    }
    println!(
        "largest |Var θᵢ − 1| in SEs: derived {:.1}, printed {:.1}",
        worst[0], worst[1]
    );
    // The printed rule must miss some variance by more than the Z-SE tolerance the derived rule
    // meets.
    assert!(
        worst[1] > Z,
        "printed thermostat within {Z} SE ({:.1}): no bias measured",
        worst[1]
    );
}

/// The f32 path: HMC and SGNHT-Euler with the dense mass and SGHMC-splitting with a diagonal
/// one on the correlated target (same step sizes and tolerances as above; f32 rounding of θ is
/// ~10⁻⁷ relative, far below the Monte Carlo error).
#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn f32_masses_on_correlated_target() {
    let target = DenseGaussian::equicorrelated(5, 0.9);
    let dense = dense_inv_mass(&target);
    for (k, kind) in KINDS_DENSE.into_iter().enumerate() {
        let m = sample::<f32>(kind, &target, &dense, 800 + k as u64);
        assert_cov(&format!("{kind:?} dense M, f32"), &m, &target);
    }
    let m = sample::<f32>(Kind::Sghmc(Integrator::Splitting), &target, &[1.0; 5], 810);
    assert_cov("SGHMC splitting diagonal M, f32", &m, &target);
}

/// The dense friction flow p ← exp(−t M⁻¹) p from the Jacobi eigendecomposition: it is a
/// semigroup with the right generator — flow(t) then flow(−t) returns p (V orthogonal, to 10⁻¹²;
/// t = 0.05 keeps the conditioning e^{t(λ_max − λ_min)} of the round trip near 3),
/// and (flow(δ)p − p)/δ matches −M⁻¹p to O(δ) (δ = 10⁻⁶: 10⁻⁵ relative) — before and after
/// `set_inverse_mass` recomputes it (d = 7, a random SPD M⁻¹ = BBᵀ + I).
#[test]
fn dense_friction_flow_is_exp_of_minus_t_inverse_mass() {
    let d = 7;
    let mut rng = Pcg64::new(42, 1);
    let mut spd = || {
        let b: Vec<f64> = (0..d * d)
            .map(|_| sgmcmc::rng::standard_normal_f64(&mut rng))
            .collect();
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                a[i * d + j] = (0..d).map(|k| b[i * d + k] * b[j * d + k]).sum::<f64>()
                    + if i == j { 1.0 } else { 0.0 };
            }
        }
        // Exact symmetry (the sums above are symmetric up to rounding order).
        for i in 0..d {
            for j in 0..i {
                a[j * d + i] = a[i * d + j];
            }
        }
        a
    };
    let (a1, a2) = (spd(), spd());
    let (mut prec, mut fac, mut eig) = (
        a1.clone(),
        vec![0.0; MassBuffer::<f64>::dense_work_len(d)],
        vec![0.0; 2 * d * d + d],
    );
    let mut buf = MassBuffer::dense_with_eigen(&mut prec, &mut fac, &mut eig, d).unwrap();
    let p0: Vec<f64> = (0..d).map(|i| (i as f64 - 3.0) * 0.7 + 0.1).collect();
    let mut work = vec![0.0; d];
    for a in [a1, a2] {
        buf.set_inverse_mass(&a).unwrap();
        let mass = buf.mass();
        assert!(mass.has_friction_flow());
        let mut p = p0.clone();
        mass.friction_flow(&mut p, 0.05, &mut work);
        mass.friction_flow(&mut p, -0.05, &mut work);
        for (x, y) in p.iter().zip(&p0) {
            assert!((x - y).abs() < 1e-12, "round trip {x} vs {y}");
        }
        let delta = 1e-6;
        let mut p = p0.clone();
        mass.friction_flow(&mut p, delta, &mut work);
        let mut ap = vec![0.0; d];
        mass.kinetic_gradient(&p0, &mut ap);
        let scale = ap.iter().map(|x| x.abs()).fold(0.0, f64::max);
        for i in 0..d {
            let deriv = (p[i] - p0[i]) / delta;
            assert!(
                (deriv + ap[i]).abs() < 1e-5 * scale,
                "derivative {deriv} vs {}",
                -ap[i]
            );
        }
    }
}
