//! Benchmark models with (stochastic) gradients.

pub mod bnn;
mod conjugate;
pub mod double_well;
pub mod gaussian_mean;
pub mod lda;
mod linear_regression;
pub mod logistic_regression;
pub mod mixture_logistic;
pub mod multi_well;
pub mod normal_gamma;
pub mod normal_wishart;

pub use gaussian_mean::{GaussianMean, MinibatchSampler};
pub use linear_regression::LinearRegression;
pub use logistic_regression::LogisticRegression;
pub use normal_gamma::NormalGamma;
pub use normal_wishart::NormalWishart;
