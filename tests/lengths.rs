//! `Lengths`: every sampler and wrapper accepts exactly the buffer lengths it gives, and refuses one entry less.

use sgmcmc::adapt::{Mcem, McemParams};
use sgmcmc::kinetic::MassShape;
use sgmcmc::prelude::*;

/// The workspace one entry short must be refused as a workspace length mismatch.
fn short(len: usize) -> usize {
    len - 1
}

fn is_workspace_mismatch(err: Error) -> bool {
    matches!(
        err,
        Error::Layout(LayoutError::LengthMismatch {
            buffer: Buffer::Workspace,
            ..
        })
    )
}

#[test]
fn every_sampler_takes_the_lengths_it_is_given() {
    for n in [1usize, 3, 7] {
        let len = Lengths::sgld(n);
        assert_eq!((len.position, len.momentum, len.thermostat), (n, 0, 0));
        let mut theta = vec![0.0f64; len.position];
        for work_len in [len.work, short(len.work)] {
            let mut work = vec![0.0; work_len];
            let built = Sgld::new(SgldParams::new(0.01), &mut theta, &mut work);
            assert_eq!(built.is_ok(), work_len == len.work, "SGLD, n = {n}");
        }

        let len = Lengths::sghmc(n);
        let (mut theta, mut p) = (vec![0.0f64; len.position], vec![0.0; len.momentum]);
        let mut work = vec![0.0; len.work];
        assert!(Sghmc::new(SghmcParams::new(0.01), &mut theta, &mut p, &mut work).is_ok());
        let mut work = vec![0.0; short(len.work)];
        let err = Sghmc::new(SghmcParams::new(0.01), &mut theta, &mut p, &mut work).unwrap_err();
        assert!(is_workspace_mismatch(err), "SGHMC, n = {n}: {err:?}");

        let len = Lengths::sgnht(n);
        assert_eq!(len.thermostat, 1);
        let (mut theta, mut p) = (vec![0.0f64; len.position], vec![0.0; len.momentum]);
        let mut xi = vec![1.0; len.thermostat];
        let mut work = vec![0.0; len.work];
        let params = SgnhtParams::new(0.01);
        assert!(Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work).is_ok());
        let mut work = vec![0.0; short(len.work)];
        let err = Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap_err();
        assert!(is_workspace_mismatch(err), "SGNHT, n = {n}: {err:?}");

        let len = Lengths::msgnht(n);
        let (mut theta, mut p) = (vec![0.0f64; len.position], vec![0.0; len.momentum]);
        let mut xi = vec![1.0; len.thermostat];
        let mut work = vec![0.0; len.work];
        assert!(MSgnht::new(params, &mut theta, &mut p, &mut xi, &mut work).is_ok());
        let mut work = vec![0.0; short(len.work)];
        let err = MSgnht::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap_err();
        assert!(is_workspace_mismatch(err), "mSGNHT, n = {n}: {err:?}");

        let len = Lengths::sgmgt(n);
        let (mut theta, mut p) = (vec![0.0f64; len.position], vec![0.0; len.momentum]);
        let mut xi = vec![0.0; len.thermostat];
        let mut work = vec![0.0; len.work];
        let params = SgmgtParams::new(0.01);
        assert!(Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work).is_ok());
        let mut work = vec![0.0; short(len.work)];
        let err = Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap_err();
        assert!(is_workspace_mismatch(err), "SGMGT, n = {n}: {err:?}");

        let len = Lengths::hmc(n);
        let (mut theta, mut p) = (vec![0.0f64; len.position], vec![0.0; len.momentum]);
        let mut work = vec![0.0; len.work];
        assert!(Hmc::new(HmcParams::new(0.1), &mut theta, &mut p, &mut work).is_ok());
        let mut work = vec![0.0; short(len.work)];
        let err = Hmc::new(HmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap_err();
        assert!(is_workspace_mismatch(err), "HMC, n = {n}: {err:?}");

        let len = Lengths::sg_nphmc(n);
        let (mut theta, mut p) = (vec![0.0f64; len.position], vec![0.0; len.momentum]);
        let mut work = vec![0.0; len.work];
        let params = SgNphmcParams::new(0.1);
        assert!(SgNphmc::new(params, &mut theta, &mut p, &mut work).is_ok());
        let mut work = vec![0.0; short(len.work)];
        let err = SgNphmc::new(params, &mut theta, &mut p, &mut work).unwrap_err();
        assert!(is_workspace_mismatch(err), "SG-NPHMC, n = {n}: {err:?}");
    }
}

#[test]
fn the_wrappers_take_the_lengths_they_are_given() {
    for n in [1usize, 3, 7] {
        for shape in [NoiseShape::Diagonal, NoiseShape::Dense] {
            let len = Lengths::sghmc(n).calibrated(shape);
            assert_eq!(len.noise_estimate, shape.len(n));
            for scratch_len in [len.calibrated_work, short(len.calibrated_work)] {
                let (mut theta, mut p) = (vec![0.0f64; n], vec![0.0; n]);
                let mut work = vec![0.0; len.work];
                let sghmc = Sghmc::new(SghmcParams::new(0.01), &mut theta, &mut p, &mut work);
                let (mut estimate, mut scratch) =
                    (vec![0.0; len.noise_estimate], vec![0.0; scratch_len]);
                let params = CalibratedParams::new().with_shape(shape);
                let built = Calibrated::new(sghmc.unwrap(), params, &mut estimate, &mut scratch);
                match built {
                    Ok(_) => assert_eq!(scratch_len, len.calibrated_work, "{shape:?}, n = {n}"),
                    Err(err) => assert!(
                        scratch_len < len.calibrated_work && is_workspace_mismatch(err),
                        "{shape:?}, n = {n}: {err:?}"
                    ),
                }
            }
        }
        for shape in [MassShape::Diagonal, MassShape::Dense] {
            let len = Lengths::hmc(n).mcem(shape);
            assert_eq!(Lengths::hmc(n).mcem(MassShape::Identity), Lengths::hmc(n));
            for mcem_len in [len.mcem_work, short(len.mcem_work)] {
                let mut inv_mass = vec![0.0f64; len.inverse_mass];
                for i in 0..n {
                    inv_mass[if shape == MassShape::Dense {
                        i * n + i
                    } else {
                        i
                    }] = 1.0;
                }
                let mut mass_work = vec![0.0; len.mass_work];
                let mass = match shape {
                    MassShape::Dense => MassBuffer::dense(&mut inv_mass, &mut mass_work, n),
                    _ => MassBuffer::diagonal(&mut inv_mass),
                };
                let (mut theta, mut p) = (vec![0.0f64; n], vec![0.0; n]);
                let mut work = vec![0.0; len.work];
                let mut hmc = Hmc::new(HmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
                hmc.set_mass(mass.unwrap()).unwrap();
                let mut mcem_work = vec![0.0; mcem_len];
                let built = Mcem::new(hmc, McemParams::new(10), &mut mcem_work);
                match built {
                    Ok(_) => assert_eq!(mcem_len, len.mcem_work, "{shape:?}, n = {n}"),
                    Err(err) => assert!(
                        mcem_len < len.mcem_work && is_workspace_mismatch(err),
                        "{shape:?}, n = {n}: {err:?}"
                    ),
                }
            }
        }
    }
}
