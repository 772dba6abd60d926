/* smoke.c - links libsgmcmc_ffi.a through include/sgmcmc.h and samples a 5-d Gaussian with
 * SGNHT (f32 and f64) and mSGNHT (f32 and f64), both integrators, at temperature T = 1 (the
 * posterior; every call here passes T = 1 but the ones checking SGMCMC_ERR_BAD_TEMPERATURE). Exits 0 when every posterior
 * mean is within 5 Monte Carlo standard errors (batch means) of the truth, the standard errors
 * are small (so a chain that is merely noisy cannot pass) and the mean kinetic temperature is
 * near 1; exits 1 otherwise. Built with -std=c99 -Wall -Wextra -Werror -pedantic by
 * ffi/tests/c_smoke.rs. */
#include "sgmcmc.h"

#include <math.h>
#include <stdio.h>

#define N 5
#define STEPS 200000L
#define BATCHES 50L
#define BURN_IN 2000L

static const double MU[N] = {1.0, -2.0, 0.5, 3.0, -1.0};
static const double SD[N] = {1.0, 0.5, 2.0, 1.0, 1.5};

static void grad_f32(const float* theta, float* grad, size_t n, void* ctx) {
    size_t i;
    long* calls = (long*)ctx;
    ++*calls;
    for (i = 0; i < n; ++i) {
        grad[i] = (float)((theta[i] - MU[i]) / (SD[i] * SD[i]));
    }
}

static void grad_f64(const double* theta, double* grad, size_t n, void* ctx) {
    size_t i;
    long* calls = (long*)ctx;
    ++*calls;
    for (i = 0; i < n; ++i) {
        grad[i] = (theta[i] - MU[i]) / (SD[i] * SD[i]);
    }
}

/* Accumulates per-batch means of theta and the kinetic temperature; judges at the end. */
typedef struct {
    double batch[BATCHES][N];
    double temperature;
} acc;

static int judge(const char* name, const acc* a, long calls, long expected_calls) {
    int ok = 1;
    int i;
    long b;
    double temperature = a->temperature / (double)STEPS;
    printf("%-22s", name);
    for (i = 0; i < N; ++i) {
        double mean = 0.0, var = 0.0, se;
        for (b = 0; b < BATCHES; ++b) mean += a->batch[b][i] / BATCHES;
        for (b = 0; b < BATCHES; ++b) {
            double d = a->batch[b][i] - mean;
            var += d * d / (BATCHES - 1);
        }
        se = sqrt(var / BATCHES);
        printf(" %+.3f(%.3f)", mean - MU[i], se);
        if (!(fabs(mean - MU[i]) < 5.0 * se && se < 0.1 * SD[i] + 0.05)) ok = 0;
    }
    printf("  T=%.3f calls=%ld", temperature, calls);
    if (!(fabs(temperature - 1.0) < 0.1)) ok = 0;
    if (calls != expected_calls) ok = 0;
    printf("  %s\n", ok ? "ok" : "FAIL");
    return ok;
}

static acc results;

static int run_f32(int msgnht, int integrator, uint64_t seed) {
    float theta[N] = {0}, p[N] = {0}, work[3 * N]; /* workspace: contents ignored; 3n for mSGNHT (SGNHT uses 2n) */
    float xi[N] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f}; /* xi_0 = A = 1 */
    const float h = 0.05f, temperature = 1.0f, a = 1.0f;
    sgmcmc_rng rng;
    sgmcmc_stats stats;
    long t, calls = 0;
    int i;
    sgmcmc_rng_seed(&rng, seed);
    results = (acc){{{0}}, 0.0};
    for (t = -BURN_IN; t < STEPS; ++t) {
        int32_t rc = msgnht ? sgmcmc_msgnht_f32(h, temperature, a, integrator, grad_f32, &calls, theta, p, xi,
                                                work, N, 1, &rng, &stats)
                            : sgmcmc_sgnht_f32(h, temperature, a, integrator, grad_f32, &calls, theta, p, xi,
                                               work, N, 1, &rng, &stats);
        if (rc != SGMCMC_OK || stats.steps != 1) {
            printf("f32 step %ld: status %d\n", t, (int)rc);
            return 0;
        }
        if (t < 0) continue;
        for (i = 0; i < N; ++i) results.batch[t / (STEPS / BATCHES)][i] += theta[i] / (double)(STEPS / BATCHES);
        results.temperature += stats.kinetic_temperature;
    }
    return judge(msgnht ? (integrator ? "msgnht_f32 splitting" : "msgnht_f32 euler")
                        : (integrator ? "sgnht_f32 splitting" : "sgnht_f32 euler"),
                 &results, calls, STEPS + BURN_IN);
}

static int run_f64(int msgnht, int integrator, uint64_t seed) {
    double theta[N] = {0}, p[N] = {0}, work[3 * N];
    double xi[N] = {1.0, 1.0, 1.0, 1.0, 1.0};
    const double h = 0.05, temperature = 1.0, a = 1.0;
    const long chunk = 10; /* several steps per call: the chain continues across calls */
    sgmcmc_rng rng;
    sgmcmc_stats stats;
    long t, calls = 0;
    int i;
    sgmcmc_rng_seed(&rng, seed);
    results = (acc){{{0}}, 0.0};
    for (t = -BURN_IN; t < STEPS; t += chunk) {
        int32_t rc = msgnht ? sgmcmc_msgnht_f64(h, temperature, a, integrator, grad_f64, &calls, theta, p, xi,
                                                work, N, (uint64_t)chunk, &rng, &stats)
                            : sgmcmc_sgnht_f64(h, temperature, a, integrator, grad_f64, &calls, theta, p, xi,
                                               work, N, (uint64_t)chunk, &rng, &stats);
        if (rc != SGMCMC_OK || stats.steps != (uint64_t)chunk) {
            printf("f64 step %ld: status %d\n", t, (int)rc);
            return 0;
        }
        if (t < 0) continue;
        for (i = 0; i < N; ++i) results.batch[t / (STEPS / BATCHES)][i] += theta[i] / (double)(STEPS / BATCHES) * (double)chunk;
        results.temperature += stats.kinetic_temperature * (double)chunk;
    }
    return judge(msgnht ? (integrator ? "msgnht_f64 splitting" : "msgnht_f64 euler")
                        : (integrator ? "sgnht_f64 splitting" : "sgnht_f64 euler"),
                 &results, calls, STEPS + BURN_IN);
}

/* Every other entry point once, so each declaration is linked and called: status, steps
 * completed, finite state. The SGMGT parameter structs' field order is checked through the
 * codes of deliberately bad fields. */
static int other_entry_points(void) {
    int ok = 1;
    long calls = 0;
    float t32[N] = {0}, p32[N] = {0}, x32[N] = {0}, w32[3 * N];
    double t64[N] = {0}, p64[N] = {0}, x64[N] = {0}, w64[3 * N];
    uint64_t count32 = 0, count64 = 0;
    sgmcmc_rng rng;
    sgmcmc_stats st;
    sgmcmc_sgmgt_params_f32 q32 = {0.02f, 1.0f, 1.0f, 0.0f, 0.0f, 2.0f, 5.0f, 100, 100, SGMCMC_SPLITTING, 0.0f, 1.0f};
    sgmcmc_sgmgt_params_f64 q64 = {0.02, 1.0, 1.0, 0.01, 0.1, 1.0, 5.0, 100, 100, SGMCMC_EULER, 1.0, 1.0};
    sgmcmc_sgmgt_params_f64 bad;
    int i;
    sgmcmc_rng_seed(&rng, 99);
#define EXPECT(call, code, n_steps)                                                          \
    do {                                                                                       \
        int32_t rc_ = (call);                                                                  \
        if (rc_ != (code) || st.steps != (uint64_t)(n_steps)) {                                \
            printf("%s: status %d, %lu steps\n", #call, (int)rc_, (unsigned long)st.steps);   \
            ok = 0;                                                                            \
        }                                                                                      \
    } while (0)
    EXPECT(sgmcmc_sgld_f32(0.02f, 1.0f, grad_f32, &calls, t32, w32, N, 1000, &rng, &st), SGMCMC_OK, 1000);
    EXPECT(sgmcmc_sgld_f64(0.02, 1.0, grad_f64, &calls, t64, w64, N, 1000, &rng, &st), SGMCMC_OK, 1000);
    EXPECT(sgmcmc_sghmc_f32(0.05f, 1.0f, 1.0f, 0.0f, SGMCMC_SPLITTING, grad_f32, &calls, t32, p32, w32, N, 1000, &rng, &st), SGMCMC_OK, 1000);
    EXPECT(sgmcmc_sghmc_f64(0.05, 1.0, 1.0, 0.5, SGMCMC_EULER, grad_f64, &calls, t64, p64, w64, N, 1000, &rng, &st), SGMCMC_OK, 1000);
    EXPECT(sgmcmc_sgmgt_f32(q32, grad_f32, &calls, t32, p32, x32, w32, N, 1000, &count32, &rng, &st), SGMCMC_OK, 1000);
    EXPECT(sgmcmc_sgmgt_f64(q64, grad_f64, &calls, t64, p64, x64, w64, N, 1000, &count64, &rng, &st), SGMCMC_OK, 1000);
    EXPECT(sgmcmc_sgmgt_f64(q64, grad_f64, &calls, t64, p64, x64, w64, N, 10, NULL, &rng, &st), SGMCMC_OK, 10);
    if (count32 != 1000 || count64 != 1000 || calls != 6010) ok = 0;
    /* pSGLD: V in the caller's buffer, a 5n workspace; the decay and offset codes. */
    {
        float v32[N] = {0}, pw32[5 * N];
        double v64[N] = {0}, pw64[5 * N];
        EXPECT(sgmcmc_psgld_f32(0.01f, 1.0f, 0.99f, 1e-5f, grad_f32, &calls, t32, v32, pw32, N, 500, &rng, &st), SGMCMC_OK, 500);
        EXPECT(sgmcmc_psgld_f64(0.01, 1.0, 0.99, 1e-5, grad_f64, &calls, t64, v64, pw64, N, 500, &rng, &st), SGMCMC_OK, 500);
        EXPECT(sgmcmc_psgld_f64(0.01, -1.0, 0.99, 1e-5, grad_f64, &calls, t64, v64, pw64, N, 1, &rng, &st), SGMCMC_ERR_BAD_TEMPERATURE, 0);
        EXPECT(sgmcmc_psgld_f64(0.01, 1.0, 1.0, 1e-5, grad_f64, &calls, t64, v64, pw64, N, 1, &rng, &st), SGMCMC_ERR_BAD_DECAY, 0);
        EXPECT(sgmcmc_psgld_f64(0.01, 1.0, 0.99, 0.0, grad_f64, &calls, t64, v64, pw64, N, 1, &rng, &st), SGMCMC_ERR_BAD_OFFSET, 0);
        for (i = 0; i < N; ++i) {
            if (!isfinite(t32[i]) || !isfinite(t64[i]) || !(v32[i] > 0.0f) || !(v64[i] > 0.0)) ok = 0;
        }
        if (calls != 7010) ok = 0;
    }
    for (i = 0; i < N; ++i) {
        if (!isfinite(t32[i]) || !isfinite(t64[i]) || !isfinite(x32[i]) || !isfinite(x64[i])) ok = 0;
    }
    bad = q64; bad.a = 3.0;
    EXPECT(sgmcmc_sgmgt_f64(bad, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_MONOMIAL_EXPONENT, 0);
    bad = q64; bad.c = 0.0;
    EXPECT(sgmcmc_sgmgt_f64(bad, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_SOFTENING, 0);
    bad = q64; bad.sigma_xi = -1.0;
    EXPECT(sgmcmc_sgmgt_f64(bad, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_THERMOSTAT_DIFFUSION, 0);
    bad = q64; bad.noise_estimate = 60.0; /* 2 sigma_theta B-hat = 1.2 >= 1 */
    EXPECT(sgmcmc_sgmgt_f64(bad, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_NOISE_ESTIMATE, 0);
    bad = q64; bad.temperature = -1.0; /* the last field */
    EXPECT(sgmcmc_sgmgt_f64(bad, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_TEMPERATURE, 0);
    bad = q64; bad.integrator = 5;
    EXPECT(sgmcmc_sgmgt_f64(bad, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_INTEGRATOR, 0);
    /* Per-coordinate noise estimates: 2 * 0.01 * b < 1 for all but the refused 60. */
    {
        double b64[N];
        float b32[N];
        for (i = 0; i < N; ++i) { b64[i] = 0.5 * (i + 1); b32[i] = 0.0f; }
        EXPECT(sgmcmc_sgmgt_noise_estimates_f64(q64, b64, grad_f64, &calls, t64, p64, x64, w64, N, 10, &count64, &rng, &st), SGMCMC_OK, 10);
        EXPECT(sgmcmc_sgmgt_noise_estimates_f32(q32, b32, grad_f32, &calls, t32, p32, x32, w32, N, 10, &count32, &rng, &st), SGMCMC_OK, 10);
        b64[N - 1] = 60.0;
        EXPECT(sgmcmc_sgmgt_noise_estimates_f64(q64, b64, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_NOISE_ESTIMATE, 0);
        EXPECT(sgmcmc_sgmgt_noise_estimates_f64(q64, NULL, grad_f64, &calls, t64, p64, x64, w64, N, 1, NULL, &rng, &st), SGMCMC_ERR_NULL, 0);
        if (count32 != 1010 || count64 != 1010) ok = 0;
    }
    q32.resample_thermostat = 0; q32.c = -1.0f;
    EXPECT(sgmcmc_sgmgt_f32(q32, grad_f32, &calls, t32, p32, x32, w32, N, 1, NULL, &rng, &st), SGMCMC_ERR_BAD_SOFTENING, 0);
#undef EXPECT
    printf("other entry points: %s\n", ok ? "ok" : "FAIL");
    return ok;
}

int main(void) {
    int ok = 1, integrator;
    float theta[N] = {0}, p[N] = {0}, xi = 1.0f, work[2 * N];
    sgmcmc_rng rng = {0, 0};
    sgmcmc_stats stats;
    long calls = 0;

    /* A few error paths through the C declarations. */
    if (sgmcmc_sgnht_f32(0.1f, 1.0f, 1.0f, SGMCMC_EULER, grad_f32, &calls, theta, p, &xi, work,
                         N, 1, &rng, NULL) != SGMCMC_ERR_RNG_UNSEEDED) ok = 0;
    sgmcmc_rng_seed(&rng, 1);
    if (sgmcmc_sgnht_f32(0.1f, 1.0f, 1.0f, SGMCMC_EULER, grad_f32, &calls, NULL, p, &xi, work,
                         N, 1, &rng, NULL) != SGMCMC_ERR_NULL) ok = 0;
    if (sgmcmc_sgnht_f32(0.1f, 1.0f, 1.0f, SGMCMC_EULER, grad_f32, &calls, theta, p, &xi, work,
                         0, 1, &rng, NULL) != SGMCMC_ERR_LENGTH) ok = 0;
    if (sgmcmc_sgnht_f32(-0.1f, 1.0f, 1.0f, SGMCMC_EULER, grad_f32, &calls, theta, p, &xi, work,
                         N, 1, &rng, NULL) != SGMCMC_ERR_BAD_STEP_SIZE) ok = 0;
    if (sgmcmc_sgnht_f32(0.1f, 1.0f, 1.0f, 7, grad_f32, &calls, theta, p, &xi, work, N, 1,
                         &rng, NULL) != SGMCMC_ERR_BAD_INTEGRATOR) ok = 0;
    /* The temperature is the argument after h: a negative one is refused, and checked before
     * the diffusion (A = -1 here too). */
    if (sgmcmc_sgnht_f32(0.1f, -1.0f, -1.0f, SGMCMC_EULER, grad_f32, &calls, theta, p, &xi, work,
                         N, 1, &rng, NULL) != SGMCMC_ERR_BAD_TEMPERATURE) ok = 0;
    /* Overlapping arguments write nothing, not even the stats. */
    stats.steps = 42;
    if (sgmcmc_sgnht_f32(0.1f, 1.0f, 1.0f, SGMCMC_EULER, grad_f32, &calls, theta, p, &xi, theta, N, 1,
                         &rng, &stats) != SGMCMC_ERR_OVERLAP || stats.steps != 42) ok = 0;
    if (sgmcmc_sgnht_f32(0.1f, 1.0f, 1.0f, SGMCMC_EULER, grad_f32, &calls, theta, p,
                         (float*)&stats.thermostat, work, N, 1, &rng, &stats) != SGMCMC_ERR_OVERLAP
        || stats.steps != 42) ok = 0;
    if (calls != 0) ok = 0;
    printf("error codes: %s\n", ok ? "ok" : "FAIL");
    ok &= other_entry_points();

    for (integrator = SGMCMC_EULER; integrator <= SGMCMC_SPLITTING; ++integrator) {
        ok &= run_f32(0, integrator, 11u + (uint64_t)integrator);
        ok &= run_f32(1, integrator, 21u + (uint64_t)integrator);
        ok &= run_f64(0, integrator, 31u + (uint64_t)integrator);
        ok &= run_f64(1, integrator, 41u + (uint64_t)integrator);
    }
    printf("%s\n", ok ? "smoke: all ok" : "smoke: FAILED");
    return ok ? 0 : 1;
}
