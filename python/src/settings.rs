//! A sampler's name and keyword settings, read into the Rust API's parameter types with the Rust API's defaults.
//!
//! Only the settings a caller passes are changed: everything else is what the Rust
//! constructor (`SgnhtParams::new(h)` and so on) sets, so the two APIs cannot drift apart.
//! [`defaults`] reads them back for the docstrings' tests.

use crate::errors::{param_error, setting_error};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};
use sgmcmc::prelude::*;
use sgmcmc::sampler::SgNphmcParams;

/// The samplers by their Python names.
pub const SAMPLERS: [&str; 9] = [
    "sgld", "psgld", "sghmc", "sgnht", "msgnht", "sgmgt", "sgmgt_d", "hmc", "sgnphmc",
];

/// A sampler's settings: one of the six stochastic-gradient samplers ([`AnyParams`]), or one of
/// the two that need the potential U as well.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Any(AnyParams<f64>),
    Hmc(HmcParams<f64>),
    SgNphmc(SgNphmcParams<f64>),
}

impl Kind {
    /// Whether its steps need U (HMC, SG-NPHMC).
    pub fn needs_energy(&self) -> bool {
        !matches!(self, Kind::Any(_))
    }

    /// Whether a step needs the diagonal of ∇²Ũ (pSGLD with its Γ correction).
    pub fn needs_hessian_diagonal(&self) -> bool {
        matches!(self, Kind::Any(AnyParams::Psgld(p)) if p.correction())
    }
}

/// The keyword settings each sampler takes (besides `step_size`).
fn allowed(sampler: &str) -> &'static [&'static str] {
    match sampler {
        "sgld" => &["temperature"],
        "psgld" => &["temperature", "decay", "offset", "correction"],
        "sghmc" => &["temperature", "friction", "noise_estimate", "integrator"],
        "sgnht" | "msgnht" => &["temperature", "diffusion", "integrator", "thermostat_rule"],
        "sgmgt" | "sgmgt_d" => &[
            "temperature",
            "kinetic_exponent",
            "softening",
            "sigma_p",
            "gamma",
            "sigma_theta",
            "sigma_xi",
            "noise_estimate",
            "resample_momentum_steps",
            "resample_thermostat_steps",
            "integrator",
        ],
        "hmc" => &["temperature", "leapfrog_steps"],
        "sgnphmc" => &[
            "temperature",
            "leapfrog_steps",
            "thermostat_mass",
            "energy_noise",
            "gradient_noise",
        ],
        _ => &[],
    }
}

/// The settings as read from a dict, each taken at most once.
struct Settings<'a, 'py> {
    dict: Option<&'a Bound<'py, PyDict>>,
}

impl<'py> Settings<'_, 'py> {
    fn get<T: for<'a> FromPyObject<'a, 'py>>(&self, key: &str) -> PyResult<Option<T>> {
        let Some(dict) = self.dict else {
            return Ok(None);
        };
        match dict.get_item(key)? {
            None => Ok(None),
            Some(v) if v.is_none() => Ok(None),
            Some(v) => v.extract::<T>().map(Some).map_err(|_| {
                // An integer refused by a setting that takes integers (it takes 0) is out of
                // the setting's range (a negative count, say), not of the wrong type.
                let integer = v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>();
                let takes_integers = 0u8
                    .into_pyobject(v.py())
                    .is_ok_and(|zero| zero.extract::<T>().is_ok());
                if integer && takes_integers {
                    setting_error(
                        key,
                        format!("setting `{key}` must be an integer ≥ 0 that fits, not {v}"),
                    )
                } else {
                    PyTypeError::new_err(format!(
                        "setting `{key}` has the wrong type ({})",
                        v.get_type()
                            .name()
                            .map_or_else(|_| "?".to_string(), |n| n.to_string())
                    ))
                }
            }),
        }
    }

    fn integrator(&self) -> PyResult<Option<Integrator>> {
        Ok(match self.get::<String>("integrator")?.as_deref() {
            None => None,
            Some("euler") => Some(Integrator::Euler),
            Some("splitting") => Some(Integrator::Splitting),
            Some(other) => {
                return Err(setting_error(
                    "integrator",
                    format!("integrator must be \"euler\" or \"splitting\", not {other:?}"),
                ));
            }
        })
    }
}

/// Reads `sampler` and its settings; errors name the sampler or the setting.
pub fn parse(sampler: &str, dict: Option<&Bound<'_, PyDict>>) -> PyResult<Kind> {
    let sampler = sampler.to_ascii_lowercase().replace('-', "_");
    if !SAMPLERS.contains(&sampler.as_str()) {
        return Err(PyValueError::new_err(format!(
            "unknown sampler {sampler:?}; one of {}",
            SAMPLERS.join(", ")
        )));
    }
    if let Some(d) = dict {
        for key in d.keys() {
            let key: String = key.extract()?;
            if key != "step_size" && !allowed(&sampler).contains(&key.as_str()) {
                return Err(PyTypeError::new_err(format!(
                    "{sampler} takes no setting `{key}`; its settings: step_size, {}",
                    allowed(&sampler).join(", ")
                )));
            }
        }
    }
    let s = Settings { dict };
    let h: f64 = s
        .get("step_size")?
        .ok_or_else(|| setting_error("step_size", format!("{sampler} needs a step_size")))?;
    let t: Option<f64> = s.get("temperature")?;
    let kind = match sampler.as_str() {
        "sgld" => {
            let mut p = SgldParams::new(h);
            if let Some(t) = t {
                p = p.with_temperature(t);
            }
            Kind::Any(AnyParams::Sgld(p))
        }
        "psgld" => {
            let mut p = PsgldParams::new(h);
            if let Some(t) = t {
                p = p.with_temperature(t);
            }
            if let Some(v) = s.get("decay")? {
                p = p.with_decay(v);
            }
            if let Some(v) = s.get("offset")? {
                p = p.with_offset(v);
            }
            if let Some(v) = s.get("correction")? {
                p = p.with_correction(v);
            }
            Kind::Any(AnyParams::Psgld(p))
        }
        "sghmc" => {
            let mut p = SghmcParams::new(h);
            if let Some(t) = t {
                p = p.with_temperature(t);
            }
            if let Some(v) = s.get("friction")? {
                p = p.with_friction(v);
            }
            if let Some(v) = s.get("noise_estimate")? {
                p = p.with_noise_estimate(v);
            }
            if let Some(v) = s.integrator()? {
                p = p.with_integrator(v);
            }
            Kind::Any(AnyParams::Sghmc(p))
        }
        "sgnht" | "msgnht" => {
            let mut p = SgnhtParams::new(h);
            if let Some(t) = t {
                p = p.with_temperature(t);
            }
            if let Some(v) = s.get("diffusion")? {
                p = p.with_diffusion(v);
            }
            if let Some(v) = s.integrator()? {
                p = p.with_integrator(v);
            }
            match s.get::<String>("thermostat_rule")?.as_deref() {
                None => {}
                Some("derived") => p = p.with_thermostat_rule(ThermostatRule::Derived),
                Some("printed") => p = p.with_thermostat_rule(ThermostatRule::Printed),
                Some(other) => {
                    return Err(setting_error(
                        "thermostat_rule",
                        format!(
                            "thermostat_rule must be \"derived\" or \"printed\", not {other:?}"
                        ),
                    ));
                }
            }
            if sampler == "sgnht" {
                Kind::Any(AnyParams::Sgnht(p))
            } else {
                Kind::Any(AnyParams::MSgnht(p))
            }
        }
        "sgmgt" | "sgmgt_d" => {
            let mut p = if sampler == "sgmgt" {
                SgmgtParams::new(h)
            } else {
                SgmgtParams::sgmgt_d(h)
            };
            if let Some(t) = t {
                p = p.with_temperature(t);
            }
            let a: Option<f64> = s.get("kinetic_exponent")?;
            let c: Option<f64> = s.get("softening")?;
            if a.is_some() || c.is_some() {
                let k = p.kinetic();
                let kinetic = MonomialGamma::softened(a.unwrap_or(k.a()), c.unwrap_or(k.c()));
                kinetic.validate().map_err(param_error)?;
                p = p.with_kinetic(kinetic);
            }
            if let Some(v) = s.get("sigma_p")? {
                p = p.with_sigma_p(v);
            }
            if let Some(v) = s.get("gamma")? {
                p = p.with_gamma(v);
            }
            if let Some(v) = s.get("sigma_theta")? {
                p = p.with_sigma_theta(v);
            }
            if let Some(v) = s.get("sigma_xi")? {
                p = p.with_sigma_xi(v);
            }
            if let Some(v) = s.get("noise_estimate")? {
                p = p.with_noise_estimate(v);
            }
            let (mut rm, mut rt) = p.resampling_steps();
            if let Some(v) = s.get("resample_momentum_steps")? {
                rm = v;
            }
            if let Some(v) = s.get("resample_thermostat_steps")? {
                rt = v;
            }
            p = p.with_resampling_steps(rm, rt);
            if let Some(v) = s.integrator()? {
                p = p.with_integrator(v);
            }
            Kind::Any(AnyParams::Sgmgt(p))
        }
        "hmc" => {
            let mut p = HmcParams::new(h);
            if let Some(t) = t {
                p = p.with_temperature(t);
            }
            if let Some(v) = s.get("leapfrog_steps")? {
                p = p.with_leapfrog_steps(v);
            }
            Kind::Hmc(p)
        }
        _ => {
            let mut p = SgNphmcParams::new(h);
            if let Some(t) = t {
                p = p.with_temperature(t);
            }
            if let Some(v) = s.get("leapfrog_steps")? {
                p = p.with_leapfrog_steps(v);
            }
            if let Some(v) = s.get("thermostat_mass")? {
                p = p.with_thermostat_mass(v);
            }
            if let Some(v) = s.get("energy_noise")? {
                p = p.with_energy_noise(v);
            }
            if let Some(v) = s.get("gradient_noise")? {
                p = p.with_gradient_noise(v);
            }
            Kind::SgNphmc(p)
        }
    };
    validate(&kind)?;
    Ok(kind)
}

/// The settings' own checks (the Rust `validate`), before any buffer is built.
fn validate(kind: &Kind) -> PyResult<()> {
    let r = match kind {
        Kind::Any(AnyParams::Sgld(p)) => p.validate(),
        Kind::Any(AnyParams::Psgld(p)) => p.validate(),
        Kind::Any(AnyParams::Sghmc(p)) => p.validate(),
        Kind::Any(AnyParams::Sgnht(p)) | Kind::Any(AnyParams::MSgnht(p)) => p.validate(),
        Kind::Any(AnyParams::Sgmgt(p)) => p.validate(),
        Kind::Hmc(p) => p.validate(),
        Kind::SgNphmc(p) => p.validate(),
    };
    r.map_err(param_error)
}

/// The settings of `kind` as a dict (the defaults, for a kind built from a step size alone).
pub fn to_dict<'py>(py: Python<'py>, kind: &Kind) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let integrator = |i: Integrator| match i {
        Integrator::Euler => "euler",
        Integrator::Splitting => "splitting",
    };
    match kind {
        Kind::Any(AnyParams::Sgld(p)) => {
            d.set_item("temperature", p.temperature())?;
        }
        Kind::Any(AnyParams::Psgld(p)) => {
            d.set_item("temperature", p.temperature())?;
            d.set_item("decay", p.decay())?;
            d.set_item("offset", p.offset())?;
            d.set_item("correction", p.correction())?;
        }
        Kind::Any(AnyParams::Sghmc(p)) => {
            d.set_item("step_size", p.step_size())?;
            d.set_item("temperature", p.temperature())?;
            d.set_item("friction", p.friction())?;
            d.set_item("noise_estimate", p.noise_estimate())?;
            d.set_item("integrator", integrator(p.integrator()))?;
        }
        Kind::Any(AnyParams::Sgnht(p)) | Kind::Any(AnyParams::MSgnht(p)) => {
            d.set_item("step_size", p.step_size())?;
            d.set_item("temperature", p.temperature())?;
            d.set_item("diffusion", p.diffusion())?;
            d.set_item("integrator", integrator(p.integrator()))?;
            let rule = match p.thermostat_rule() {
                ThermostatRule::Derived => "derived",
                ThermostatRule::Printed => "printed",
            };
            d.set_item("thermostat_rule", rule)?;
        }
        Kind::Any(AnyParams::Sgmgt(p)) => {
            d.set_item("step_size", p.step_size())?;
            d.set_item("temperature", p.temperature())?;
            d.set_item("kinetic_exponent", p.kinetic().a())?;
            d.set_item("softening", p.kinetic().c())?;
            d.set_item("sigma_p", p.sigma_p())?;
            d.set_item("gamma", p.gamma())?;
            d.set_item("sigma_theta", p.sigma_theta())?;
            d.set_item("sigma_xi", p.sigma_xi())?;
            d.set_item("noise_estimate", p.noise_estimate())?;
            let (rm, rt) = p.resampling_steps();
            d.set_item("resample_momentum_steps", rm)?;
            d.set_item("resample_thermostat_steps", rt)?;
            d.set_item("integrator", integrator(p.integrator()))?;
        }
        Kind::Hmc(p) => {
            d.set_item("step_size", p.step_size())?;
            d.set_item("temperature", p.temperature())?;
            d.set_item("leapfrog_steps", p.steps())?;
        }
        Kind::SgNphmc(p) => {
            d.set_item("step_size", p.step_size())?;
            d.set_item("temperature", p.temperature())?;
            d.set_item("leapfrog_steps", p.steps())?;
            d.set_item("thermostat_mass", p.thermostat_mass())?;
            d.set_item("energy_noise", p.energy_noise())?;
            d.set_item("gradient_noise", p.gradient_noise())?;
        }
    }
    Ok(d)
}

/// The default settings of `sampler` (every setting but the step size, which has none).
#[pyfunction]
pub fn defaults<'py>(py: Python<'py>, sampler: &str) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("step_size", 0.01)?;
    let kind = parse(sampler, Some(&d))?;
    let out = to_dict(py, &kind)?;
    out.del_item("step_size").ok();
    Ok(out)
}

/// Whether [`sgmcmc::adapt::Calibrated`] wraps this sampler.
pub fn calibratable(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Any(
            AnyParams::Sghmc(_) | AnyParams::Sgnht(_) | AnyParams::MSgnht(_) | AnyParams::Sgmgt(_)
        )
    )
}

/// [`CalibratedParams`] from a dict of `shape` ("dense", "diagonal"), `correction` ("friction",
/// "subtract"), `weight`, `raise_friction` and `refresh`, each defaulting to the Rust API's.
pub fn calibration(dict: &Bound<'_, PyDict>) -> PyResult<CalibratedParams<f64>> {
    const KEYS: [&str; 5] = ["shape", "correction", "weight", "raise_friction", "refresh"];
    for key in dict.keys() {
        let key: String = key.extract()?;
        if !KEYS.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "calibration takes no setting `{key}`; its settings: {}",
                KEYS.join(", ")
            )));
        }
    }
    let s = Settings { dict: Some(dict) };
    let mut p = CalibratedParams::new();
    match s.get::<String>("shape")?.as_deref() {
        None => {}
        Some("dense") => p = p.with_shape(NoiseShape::Dense),
        Some("diagonal") => p = p.with_shape(NoiseShape::Diagonal),
        Some(other) => {
            return Err(setting_error(
                "shape",
                format!("shape must be \"dense\" or \"diagonal\", not {other:?}"),
            ));
        }
    }
    match s.get::<String>("correction")?.as_deref() {
        None => {}
        Some("friction") => p = p.with_correction(Correction::Friction),
        Some("subtract") => p = p.with_correction(Correction::Subtract),
        Some(other) => {
            return Err(setting_error(
                "correction",
                format!("correction must be \"friction\" or \"subtract\", not {other:?}"),
            ));
        }
    }
    if let Some(w) = s.get::<f64>("weight")? {
        if !(w.is_finite() && w > 0.0 && w <= 1.0) {
            return Err(setting_error(
                sgmcmc::Param::NoiseWeight.name(),
                format!("noise-estimate weight λ must lie in (0, 1], not {w}"),
            ));
        }
        p = p.with_weight(w);
    }
    if let Some(v) = s.get::<bool>("raise_friction")? {
        p = p.with_raise_friction(v);
    }
    if let Some(v) = s.get::<u32>("refresh")? {
        p = p.with_refresh(v);
    }
    Ok(p)
}

/// A step-size schedule from a dict: `{"kind": "polynomial", "a", "b", "gamma"}` (h_t =
/// a(b + t)^−γ) or `{"kind": "cyclical", "h0", "cycle", "exploration", "noise_off"}`, with
/// whether its exploration stages run at T = 0 (cSG-MCMC, the default for a cyclical one).
pub fn schedule(dict: &Bound<'_, PyDict>) -> PyResult<(StepSchedule<f64>, bool)> {
    let s = Settings { dict: Some(dict) };
    let need = |key: &str| -> PyResult<f64> {
        s.get::<f64>(key)?
            .ok_or_else(|| setting_error("schedule", format!("the schedule needs `{key}`")))
    };
    let kind: String = s.get("kind")?.unwrap_or_default();
    let (schedule, noise_off) = match kind.as_str() {
        "polynomial" => (
            StepSchedule::polynomial(need("a")?, need("b")?, need("gamma")?),
            false,
        ),
        "cyclical" => {
            let cycle: u64 = s
                .get("cycle")?
                .ok_or_else(|| setting_error("schedule", "the schedule needs `cycle`".into()))?;
            (
                StepSchedule::cyclical(need("h0")?, cycle, need("exploration")?),
                s.get::<bool>("noise_off")?.unwrap_or(true),
            )
        }
        other => {
            return Err(setting_error(
                "schedule",
                format!("schedule kind must be \"polynomial\" or \"cyclical\", not {other:?}"),
            ));
        }
    };
    Ok((schedule.map_err(param_error)?, noise_off))
}

/// Whether [`sgmcmc::adapt::Mcem`] wraps this sampler.
pub fn mcem_capable(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Hmc(_) | Kind::SgNphmc(_) | Kind::Any(AnyParams::Sghmc(_) | AnyParams::Sgnht(_))
    )
}

/// [`McemParams`] from a dict: `e_steps` (LP_S, default 10), `m_step_offset` (k₀),
/// `m_step_exponent` (α), `shrinkage` (λ), `precision_bounds` ((m_min, m_max)),
/// `sample_count` (a fixed S_count; default the adaptive one), `bias_correction`, each
/// defaulting to the Rust API's; and `shape`, the learned mass's ("diagonal", the default, or
/// "dense").
pub fn mcem(
    dict: &Bound<'_, PyDict>,
) -> PyResult<(sgmcmc::adapt::McemParams<f64>, sgmcmc::kinetic::MassShape)> {
    const KEYS: [&str; 8] = [
        "shape",
        "e_steps",
        "m_step_offset",
        "m_step_exponent",
        "shrinkage",
        "precision_bounds",
        "sample_count",
        "bias_correction",
    ];
    for key in dict.keys() {
        let key: String = key.extract()?;
        if !KEYS.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "mcem takes no setting `{key}`; its settings: {}",
                KEYS.join(", ")
            )));
        }
    }
    let s = Settings { dict: Some(dict) };
    let mut p = sgmcmc::adapt::McemParams::new(s.get::<u32>("e_steps")?.unwrap_or(10));
    let (k0, alpha) = p.m_step_schedule();
    let (k0_new, alpha_new) = (s.get("m_step_offset")?, s.get("m_step_exponent")?);
    if k0_new.is_some() || alpha_new.is_some() {
        p = p.with_m_step_schedule(k0_new.unwrap_or(k0), alpha_new.unwrap_or(alpha));
    }
    if let Some(v) = s.get("shrinkage")? {
        p = p.with_shrinkage(v);
    }
    if let Some((lo, hi)) = s.get::<(f64, f64)>("precision_bounds")? {
        p = p.with_precision_bounds(lo, hi);
    }
    if let Some(n) = s.get::<u64>("sample_count")? {
        p = p.with_sample_size(sgmcmc::adapt::SampleSize::Fixed(n));
    }
    if let Some(v) = s.get("bias_correction")? {
        p = p.with_bias_correction(v);
    }
    p.validate().map_err(param_error)?;
    let shape = match s.get::<String>("shape")?.as_deref() {
        None | Some("diagonal") => sgmcmc::kinetic::MassShape::Diagonal,
        Some("dense") => sgmcmc::kinetic::MassShape::Dense,
        Some(other) => {
            return Err(crate::errors::setting_error(
                "shape",
                format!("mcem's shape is \"diagonal\" or \"dense\", not {other:?}"),
            ));
        }
    };
    Ok((p, shape))
}
