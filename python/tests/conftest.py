"""Shared helpers of the package's tests: the batch-means standard error of the Rust tests."""

import numpy as np


def batch_means_se(x, batches=50):
    """The standard error of the mean of each column of ``x`` (chains, draws, dim) by batch
    means: each chain is cut into ``batches`` consecutive batches whose means are nearly
    independent when a batch is much longer than the autocorrelation time; the SE is their sd
    over √(number of batches), pooled over chains (as `tests/` of the Rust crate do)."""
    chains, draws, dim = x.shape
    size = draws // batches
    means = x[:, : size * batches, :].reshape(chains * batches, size, dim).mean(axis=1)
    return means.std(axis=0, ddof=1) / np.sqrt(chains * batches)
