//! `gaussian-mean`: placeholder.
