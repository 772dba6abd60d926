//! `normal-gamma`: placeholder.
