//! The marginal densities of a Normal–Gamma posterior, shared by the `normal_gamma` and `normal_wishart` models.
//!
//! With μ | λ ~ N(μ_N, (κ_N λ)⁻¹) and λ ~ Gam(α_N, β_N), μ is Student-t with 2α_N degrees of
//! freedom, location μ_N and squared scale β_N/(α_N κ_N), and λ is Gam(α_N, β_N) (Murphy 2007,
//! §8; Bernardo & Smith 1994, App. A).

/// The four parameters of a Normal–Gamma posterior.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NormalGammaPosterior {
    pub(crate) mu_n: f64,
    pub(crate) kappa_n: f64,
    pub(crate) alpha_n: f64,
    pub(crate) beta_n: f64,
}

impl NormalGammaPosterior {
    /// The marginal density of μ: Student-t with 2α_N degrees of freedom, location μ_N and
    /// squared scale β_N/(α_N κ_N).
    pub(crate) fn mean_density(&self, mu: f64) -> f64 {
        let nu = 2.0 * self.alpha_n;
        let scale2 = self.beta_n / (self.alpha_n * self.kappa_n);
        let z2 = (mu - self.mu_n).powi(2) / scale2;
        let log_c = libm::lgamma((nu + 1.0) / 2.0)
            - libm::lgamma(nu / 2.0)
            - 0.5 * (nu * std::f64::consts::PI * scale2).ln();
        (log_c - (nu + 1.0) / 2.0 * (z2 / nu).ln_1p()).exp()
    }

    /// The marginal density of the precision λ: Gam(α_N, rate β_N) (0 for λ ≤ 0).
    pub(crate) fn precision_density(&self, lambda: f64) -> f64 {
        if lambda <= 0.0 {
            return 0.0;
        }
        (self.alpha_n * self.beta_n.ln() - libm::lgamma(self.alpha_n)
            + (self.alpha_n - 1.0) * lambda.ln()
            - self.beta_n * lambda)
            .exp()
    }
}
