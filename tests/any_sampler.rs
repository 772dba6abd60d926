//! `AnySampler`: each of its six kinds draws the chain of the sampler it wraps bit for bit, and forwards errors, step sizes and checkpoints.

use rand_pcg::Pcg64;
use sgmcmc::prelude::*;

const N: usize = 3;

/// ∇U of N((1, −1, 2), diag(1, 2, 0.5)).
fn gradient(t: &[f64], g: &mut [f64]) {
    let (mu, var) = ([1.0, -1.0, 2.0], [1.0, 2.0, 0.5]);
    for i in 0..N {
        g[i] = (t[i] - mu[i]) / var[i];
    }
}

fn kinds() -> [AnyParams<f64>; 6] {
    [
        AnyParams::Sgld(SgldParams::new(0.01)),
        AnyParams::Psgld(PsgldParams::new(0.01)),
        AnyParams::Sghmc(SghmcParams::new(0.05).with_integrator(Integrator::Euler)),
        AnyParams::Sgnht(SgnhtParams::new(0.05).with_diffusion(2.0)),
        AnyParams::MSgnht(SgnhtParams::new(0.05)),
        AnyParams::Sgmgt(SgmgtParams::sgmgt_d(0.02)),
    ]
}

/// θ, p and ξ after 200 steps of a concrete sampler built from the same settings and buffers.
fn concrete(params: AnyParams<f64>) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let len = params.lengths(N);
    let (mut theta, mut p) = (vec![0.5; N], vec![0.0; len.momentum]);
    let (mut xi, mut work) = (vec![0.0; len.thermostat], vec![0.0; len.work]);
    let mut rng = Pcg64::new(11, 13);
    let mut model = gradient;
    let xi_out = match params {
        AnyParams::Sgld(q) => {
            let mut s = Sgld::new(q, &mut theta, &mut work).unwrap();
            s.run(&mut model, &mut rng, 200, &mut ()).unwrap();
            vec![]
        }
        AnyParams::Psgld(q) => {
            let mut s = Psgld::new(q, &mut theta, &mut work).unwrap();
            s.run(&mut model, &mut rng, 200, &mut ()).unwrap();
            vec![]
        }
        AnyParams::Sghmc(q) => {
            let mut s = Sghmc::new(q, &mut theta, &mut p, &mut work).unwrap();
            s.run(&mut model, &mut rng, 200, &mut ()).unwrap();
            vec![]
        }
        AnyParams::Sgnht(q) => {
            let mut s = Sgnht::new(q, &mut theta, &mut p, &mut xi, &mut work).unwrap();
            s.run(&mut model, &mut rng, 200, &mut ()).unwrap();
            vec![s.thermostat()]
        }
        AnyParams::MSgnht(q) => {
            let mut s = MSgnht::new(q, &mut theta, &mut p, &mut xi, &mut work).unwrap();
            s.run(&mut model, &mut rng, 200, &mut ()).unwrap();
            s.thermostat().to_vec()
        }
        AnyParams::Sgmgt(q) => {
            let mut s = Sgmgt::new(q, &mut theta, &mut p, &mut xi, &mut work).unwrap();
            s.run(&mut model, &mut rng, 200, &mut ()).unwrap();
            s.thermostat().to_vec()
        }
    };
    (theta, p, xi_out)
}

#[test]
fn each_kind_draws_its_samplers_chain_bit_for_bit() {
    for params in kinds() {
        let len = params.lengths(N);
        let (mut theta, mut p) = (vec![0.5; N], vec![0.0; len.momentum]);
        let (mut xi, mut work) = (vec![0.0; len.thermostat], vec![0.0; len.work]);
        let mut rng = Pcg64::new(11, 13);
        let mut any = AnySampler::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
        any.run(&mut gradient, &mut rng, 200, &mut ()).unwrap();
        let xi_any = any.thermostat().to_vec();
        let (theta_ref, p_ref, xi_ref) = concrete(params);
        assert_eq!(theta, theta_ref, "{params:?}: θ");
        assert_eq!(p, p_ref, "{params:?}: p");
        assert_eq!(xi_any, xi_ref, "{params:?}: ξ");
    }
}

#[test]
fn errors_step_sizes_and_checkpoints_are_the_samplers() {
    for params in kinds() {
        let len = params.lengths(N);
        // One entry short of the workspace: the wrapped constructor's own error.
        let (mut theta, mut p) = (vec![0.5; N], vec![0.0; len.momentum]);
        let (mut xi, mut work) = (vec![0.0; len.thermostat], vec![0.0; len.work - 1]);
        let err = AnySampler::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Layout(LayoutError::LengthMismatch {
                    buffer: Buffer::Workspace,
                    ..
                })
            ),
            "{params:?}: {err:?}"
        );

        let mut work = vec![0.0; len.work];
        let mut any = AnySampler::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
        assert_eq!(
            any.set_step_size(-1.0),
            Err(ParamError::OutOfRange(Param::StepSize))
        );
        any.set_step_size(0.01).unwrap();
        assert_eq!(any.step_size(), 0.01);

        // A checkpoint taken after 50 steps and restored after 50 more repeats those 50.
        let mut rng = Pcg64::new(3, 4);
        any.run(&mut gradient, &mut rng, 50, &mut ()).unwrap();
        let mut saved = vec![0.0; any.checkpoint_len()];
        let state = any.save(&mut saved).unwrap();
        let rng_then = rng.clone();
        any.run(&mut gradient, &mut rng, 50, &mut ()).unwrap();
        let after = any.position().to_vec();
        any.restore(&state, &saved).unwrap();
        let mut rng = rng_then;
        any.run(&mut gradient, &mut rng, 50, &mut ()).unwrap();
        assert_eq!(any.position(), &after[..], "{params:?}");
    }
}
