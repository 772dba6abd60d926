/*
 * sgmcmc.h - C ABI of the sgmcmc stochastic-gradient MCMC kernel (crate sgmcmc-ffi).
 *
 * C99 (also valid C++). Link the static library libsgmcmc_ffi.a or the shared library
 * libsgmcmc_ffi.so (.dylib, .dll; hosted targets), both built by
 * `cargo build -p sgmcmc-ffi --release`, see ffi/README.md.
 *
 * Conventions
 * -----------
 * - The caller owns all memory. Nothing is allocated; nothing is kept between calls. A chain is
 *   the caller's buffers (theta, p, xi), its generator (sgmcmc_rng) and, for SGMGT, its step
 *   counter. Each step function builds the sampler over the buffers, runs `steps` steps and
 *   returns, so calling it k times with m steps continues the same chain as one call with k*m
 *   steps, bit for bit (SGMGT: when the step counter is passed).
 * - Lengths: every array argument holds `n` elements of the function's float type, except
 *   `work` (2n elements; 3n for mSGNHT and SGMGT, 5n for pSGLD) and SGNHT's `xi` (ONE element). `n` must
 *   be >= 1.
 * - All pointer arguments must be pairwise disjoint: the arrays, the generator, the stats
 *   struct, SGNHT's `xi`, SGMGT's step counter and noise estimates (every pair is checked:
 *   SGMCMC_ERR_OVERLAP). Nothing else may access them during a call.
 * - `work` is the workspace, one array of 2n (3n) elements: its contents on entry are ignored (it
 *   need not be initialised) and on return are unspecified. theta, p and xi must be finite on
 *   entry.
 * - Temperature: every sampler draws from the tempered posterior exp(-U(theta)/T) at its
 *   temperature T (finite, >= 0): the argument `temperature` right after `h` in every
 *   positional step function, the last field `temperature` of sgmcmc_sgmgt_params_f32/_f64.
 *   The injected noise is scaled by sqrt(T) and the thermostats' targets by T (see each
 *   function and docs/temperature.md); T = 1 is the untempered posterior, bit for bit the
 *   chain of the versions without the argument; T < 1 is a "cold" posterior; T = 0 turns the
 *   injected noise off (SGLD becomes gradient descent). A negative or non-finite T returns
 *   SGMCMC_ERR_BAD_TEMPERATURE with nothing changed.
 * - Every function returns SGMCMC_OK (0) or a negative SGMCMC_ERR_* code. Checks run in this
 *   order: pointers (null or misaligned), n, overlaps — a call failing one of these reads and
 *   writes nothing, not even `stats` — then parameters (first bad one in declaration order:
 *   h, temperature, then the sampler's own; but SGMGT checks temperature and then
 *   noise_estimate right after sigma_xi, since the bound on noise_estimate depends on T),
 *   the generator state,
 *   the initial state's finiteness, each before the state is touched. Errors during stepping
 *   (non-finite gradient or state) stop the call with the failed step undone: theta, p, xi
 *   (and the step counter) are exactly as after the last completed step, and `stats->steps`
 *   says how many steps completed.
 * - ABI change: every step function takes the temperature (a `temperature` argument right after
 *   `h`; a `temperature` field at the end of sgmcmc_sgmgt_params_f32/_f64, where a caller's
 *   designated or positional initialiser that omits it leaves it 0, i.e. T = 0: set it to 1 for
 *   the previous behaviour). Callers must update their calls and recompile.
 * - ABI change: mSGNHT and SGMGT take a `work` array of 3n elements (it was 2n): the third n
 *   holds the thermostats' backup that undoes a step whose result is not finite.
 * - ABI change: earlier versions of this header declared two workspace arrays, `grad` and
 *   `scratch` of n elements each, where the step functions now take one `work` array of 2n
 *   elements (the core samplers need one contiguous workspace). Callers built against the old
 *   declarations must be updated and recompiled.
 * - No function panics, aborts, or calls back into anything but `grad_fn`. The functions are
 *   reentrant and thread-safe for distinct chains (no global state).
 */
#ifndef SGMCMC_H
#define SGMCMC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes -------------------------------------------------------------------------- */

/** Success. */
#define SGMCMC_OK 0
/** A required pointer is null or not aligned for its type. */
#define SGMCMC_ERR_NULL (-1)
/** n is 0, or a buffer of the documented length would exceed PTRDIFF_MAX bytes. */
#define SGMCMC_ERR_LENGTH (-2)
/** Two pointer arguments overlap (arrays, generator, stats, xi, step counter, estimates). */
#define SGMCMC_ERR_OVERLAP (-3)
/** The generator state is all zero (never seeded): seed it with sgmcmc_rng_seed. */
#define SGMCMC_ERR_RNG_UNSEEDED (-4)
/** theta, p or xi holds a NaN or +-inf on entry; nothing was done. */
#define SGMCMC_ERR_NON_FINITE_INPUT (-5)
/** grad_fn wrote a NaN or +-inf. That step was not taken: theta, p, xi are exactly as after the
 *  last completed step. */
#define SGMCMC_ERR_NON_FINITE_GRADIENT (-6)
/** A step produced a NaN or +-inf in theta, p or xi (the chain diverged: reduce h). The step
 *  was undone: the state is bit-for-bit that after the last completed step. */
#define SGMCMC_ERR_NON_FINITE_STATE (-7)
/** Step size h not finite or not > 0. */
#define SGMCMC_ERR_BAD_STEP_SIZE (-10)
/** Friction A (SGHMC) or diffusion A / D (SGNHT, mSGNHT) not finite or < 0. */
#define SGMCMC_ERR_BAD_FRICTION (-11)
/** SGHMC noise estimate B-hat not finite, < 0, or > A*T; SGMGT's B-hat (or a B-hat_i) not
 *  finite, < 0, or with 2 sigma_theta B-hat >= T (B-hat_i: >= min(1, T)). */
#define SGMCMC_ERR_BAD_NOISE_ESTIMATE (-12)
/** integrator is neither SGMCMC_EULER nor SGMCMC_SPLITTING. */
#define SGMCMC_ERR_BAD_INTEGRATOR (-13)
/** SGMGT monomial exponent a is neither 1 nor 2. */
#define SGMCMC_ERR_BAD_MONOMIAL_EXPONENT (-14)
/** SGMGT softening c not finite, not > 0, or (a = 1) below 1.3e-6 (float) / 6.4e-23 (double). */
#define SGMCMC_ERR_BAD_SOFTENING (-15)
/** SGMGT friction rescaling gamma not finite or < 0. */
#define SGMCMC_ERR_BAD_FRICTION_SCALE (-16)
/** SGMGT momentum diffusion sigma_p not finite or < 0. */
#define SGMCMC_ERR_BAD_MOMENTUM_DIFFUSION (-17)
/** SGMGT theta diffusion sigma_theta not finite or < 0. */
#define SGMCMC_ERR_BAD_THETA_DIFFUSION (-18)
/** SGMGT thermostat diffusion sigma_xi not finite or < 0. */
#define SGMCMC_ERR_BAD_THERMOSTAT_DIFFUSION (-19)
/** Any other rejected parameter (reserved; not produced by the current version). */
#define SGMCMC_ERR_BAD_PARAMETER (-20)
/** pSGLD's decay alpha is not finite or not in [0, 1). */
#define SGMCMC_ERR_BAD_DECAY (-21)
/** pSGLD's offset lambda is not finite or not > 0. */
#define SGMCMC_ERR_BAD_OFFSET (-22)
/** The temperature T is not finite or < 0. */
#define SGMCMC_ERR_BAD_TEMPERATURE (-23)

/* ---- integrators ---------------------------------------------------------------------------- */

/** First-order Euler scheme. */
#define SGMCMC_EULER 0
/** Second-order symmetric splitting scheme (A-B-O-B-A; A-O-B-O-A for SGMGT). */
#define SGMCMC_SPLITTING 1

/* ---- generator ------------------------------------------------------------------------------ */

/**
 * State of a xoroshiro128++ generator (Blackman & Vigna 2019). Owned by the caller; one per
 * chain (or per thread). The f64 samplers draw 64-bit outputs; the f32 samplers draw the upper
 * 32 bits of one output. The all-zero state is invalid (SGMCMC_ERR_RNG_UNSEEDED). A state may be
 * saved and restored by copying the struct.
 */
typedef struct sgmcmc_rng {
    uint64_t s0; /**< first state word */
    uint64_t s1; /**< second state word */
} sgmcmc_rng;

/**
 * Seeds `rng`: s0 and s1 are two successive SplitMix64 outputs starting from `seed` (never both
 * zero). Every seed, including 0, is valid. A null `rng` is ignored.
 */
void sgmcmc_rng_seed(sgmcmc_rng* rng, uint64_t seed);

/** The next 64-bit output of `rng` (for the caller's own draws). Returns 0 for a null `rng`. */
uint64_t sgmcmc_rng_next_u64(sgmcmc_rng* rng);

/* ---- model callback ------------------------------------------------------------------------- */

/**
 * Stochastic gradient of the potential U(theta) = -log p(theta | data) + const: writes
 * grad[0..n) = (minibatch estimate of) dU/dtheta at theta[0..n). `ctx` is the caller's pointer,
 * passed through unchanged. Must not call back into the same chain. A NaN or +-inf written to
 * `grad` ends the call with SGMCMC_ERR_NON_FINITE_GRADIENT (the state is not changed).
 */
typedef void (*sgmcmc_gradient_f32)(const float* theta, float* grad, size_t n, void* ctx);
/** The double twin of sgmcmc_gradient_f32. */
typedef void (*sgmcmc_gradient_f64)(const double* theta, double* grad, size_t n, void* ctx);

/* ---- statistics ----------------------------------------------------------------------------- */

/**
 * Optional out-parameter of every step function (pass NULL to skip). Set to {NaN, NaN, 0} once
 * the call's pointers, n and overlaps have passed their checks (before that nothing is
 * written); on return it describes the last step completed in the call, also after an error.
 */
typedef struct sgmcmc_stats {
    /** Last step's kinetic temperature p.p/n (SGMGT: (1/n) sum p_i dK/dp_i); its long-run mean
     *  is 1 at equilibrium. NaN for SGLD or when no step completed. */
    double kinetic_temperature;
    /** Last step's thermostat: xi (SGNHT) or the mean of the xi_i (mSGNHT, SGMGT, before that
     *  step's resampling). NaN for SGLD, SGHMC, or when no step completed. */
    double thermostat;
    /** Number of steps completed in this call (== steps on success). */
    uint64_t steps;
} sgmcmc_stats;

/* ---- SGLD ----------------------------------------------------------------------------------- */

/**
 * SGLD (Welling & Teh 2011) with constant step h > 0 at temperature T >= 0: `steps` times
 * theta <- theta - h grad U(theta) + sqrt(2hT) N(0, I)
 * (T = 1: the posterior; T = 0: gradient descent).
 * Buffers: theta (n, in/out), work (2n, workspace).
 */
int32_t sgmcmc_sgld_f32(float h, float temperature, sgmcmc_gradient_f32 grad_fn, void* ctx,
                        float* theta, float* work, size_t n, uint64_t steps, sgmcmc_rng* rng,
                        sgmcmc_stats* stats);
/** The double twin of sgmcmc_sgld_f32. */
int32_t sgmcmc_sgld_f64(double h, double temperature, sgmcmc_gradient_f64 grad_fn, void* ctx,
                        double* theta, double* work, size_t n, uint64_t steps, sgmcmc_rng* rng,
                        sgmcmc_stats* stats);

/* ---- pSGLD --------------------------------------------------------------------------------- */

/**
 * Preconditioned SGLD (Li, Chen, Carlson & Carin 2016) with constant step h > 0, temperature
 * T >= 0, decay 0 <= alpha < 1 (0.99 is the paper's) and offset lambda > 0 (1e-5), without the
 * Gamma correction: `steps` times
 * V <- alpha V + (1 - alpha) g*g, G = 1/(lambda + sqrt(V)), theta <- theta - h G g + sqrt(2hTG) N(0, I)
 * with g the gradient, all per coordinate (T = 0: RMSprop).
 * Buffers: theta (n, in/out), square_mean (n, in/out: V, finite and >= 0 on entry -- zeros for
 * a new chain -- and kept by the caller between calls, like theta; a negative or non-finite
 * entry returns SGMCMC_ERR_NON_FINITE_INPUT), work (5n, workspace). Checks: as every function,
 * with square_mean where the others have p; T, alpha, then lambda after h.
 */
int32_t sgmcmc_psgld_f32(float h, float temperature, float decay, float offset,
                         sgmcmc_gradient_f32 grad_fn, void* ctx, float* theta,
                         float* square_mean, float* work, size_t n, uint64_t steps,
                         sgmcmc_rng* rng, sgmcmc_stats* stats);
/** The double twin of sgmcmc_psgld_f32. */
int32_t sgmcmc_psgld_f64(double h, double temperature, double decay, double offset,
                         sgmcmc_gradient_f64 grad_fn, void* ctx, double* theta,
                         double* square_mean, double* work, size_t n, uint64_t steps,
                         sgmcmc_rng* rng, sgmcmc_stats* stats);

/* ---- SGHMC ---------------------------------------------------------------------------------- */

/**
 * SGHMC (Chen et al. 2014): step h > 0, temperature T >= 0, friction A >= 0, gradient-noise
 * estimate 0 <= B-hat <= A*T (injected noise sqrt(2(A*T - B-hat)h): the friction balances the
 * diffusion A*T; the minibatch noise B-hat is not scaled); integrator SGMCMC_EULER or
 * SGMCMC_SPLITTING. Buffers: theta, p (n each, in/out; p = 0 is a fine start), work (2n).
 */
int32_t sgmcmc_sghmc_f32(float h, float temperature, float friction, float noise_estimate,
                         int32_t integrator, sgmcmc_gradient_f32 grad_fn, void* ctx,
                         float* theta, float* p, float* work, size_t n, uint64_t steps,
                         sgmcmc_rng* rng, sgmcmc_stats* stats);
/** The double twin of sgmcmc_sghmc_f32. */
int32_t sgmcmc_sghmc_f64(double h, double temperature, double friction, double noise_estimate,
                         int32_t integrator, sgmcmc_gradient_f64 grad_fn, void* ctx,
                         double* theta, double* p, double* work, size_t n, uint64_t steps,
                         sgmcmc_rng* rng, sgmcmc_stats* stats);

/* ---- SGNHT ---------------------------------------------------------------------------------- */

/**
 * SGNHT (Ding et al. 2014), one scalar thermostat: step h > 0, temperature T >= 0, diffusion
 * A >= 0 (injected noise sqrt(2ATh); the thermostat moves by (p.p/n - T) h, so it holds the
 * kinetic temperature at T). `xi` points to ONE value, the thermostat (in/out; Ding et al.
 * start at xi = A); it persists between calls in the caller's variable, also after an error.
 * Buffers: theta, p (n each), work (2n).
 */
int32_t sgmcmc_sgnht_f32(float h, float temperature, float diffusion, int32_t integrator,
                         sgmcmc_gradient_f32 grad_fn, void* ctx, float* theta, float* p,
                         float* xi, float* work, size_t n, uint64_t steps, sgmcmc_rng* rng,
                         sgmcmc_stats* stats);
/** The double twin of sgmcmc_sgnht_f32. */
int32_t sgmcmc_sgnht_f64(double h, double temperature, double diffusion, int32_t integrator,
                         sgmcmc_gradient_f64 grad_fn, void* ctx, double* theta, double* p,
                         double* xi, double* work, size_t n, uint64_t steps, sgmcmc_rng* rng,
                         sgmcmc_stats* stats);

/* ---- mSGNHT --------------------------------------------------------------------------------- */

/**
 * mSGNHT (Li et al. 2016), one thermostat per coordinate: step h > 0, temperature T >= 0,
 * diffusion D >= 0 (injected noise sqrt(2DTh); xi_i moves by (p_i^2 - T) h).
 * Buffers: theta, p, xi (n each, in/out; start with xi_i = D; the chain continues from the
 * caller's xi) and work (3n).
 */
int32_t sgmcmc_msgnht_f32(float h, float temperature, float diffusion, int32_t integrator,
                          sgmcmc_gradient_f32 grad_fn, void* ctx, float* theta, float* p,
                          float* xi, float* work, size_t n, uint64_t steps, sgmcmc_rng* rng,
                          sgmcmc_stats* stats);
/** The double twin of sgmcmc_msgnht_f32. */
int32_t sgmcmc_msgnht_f64(double h, double temperature, double diffusion, int32_t integrator,
                          sgmcmc_gradient_f64 grad_fn, void* ctx, double* theta, double* p,
                          double* xi, double* work, size_t n, uint64_t steps, sgmcmc_rng* rng,
                          sgmcmc_stats* stats);

/* ---- SGMGT ---------------------------------------------------------------------------------- */

/**
 * Parameters of SGMGT / SGMGT-D (Zhang et al. 2017) with the softened monomial-gamma kinetics
 * K_c of their eq. 12, passed by value. The core's defaults are sigma_p = 1, gamma = 1,
 * sigma_theta = sigma_xi = 0 (SGMGT; > 0 both for SGMGT-D), resampling every 100 steps,
 * splitting, temperature 1. At temperature T the diffusions inject sqrt(2 sigma T h) (sigma_p
 * on p, sigma_xi on xi), the thermostats target T (xi_i moves by gamma((dK/dp_i)^2 - T
 * d2K/dp_i^2)), p and xi are redrawn from exp(-K/T) and exp(-xi^2/(2T)), and theta's
 * first-order term injects sqrt(2 sigma_theta (T - sigma_theta B-hat) h) and moves with
 * (1 - 2 sigma_theta B-hat / T) dK/dp. The redraw from exp(-K/T) is exact for a = 1 at every T
 * (Gamma variables); for a = 2 it is a rejection sampler whose acceptance falls at small T
 * (docs/temperature.md).
 */
typedef struct sgmcmc_sgmgt_params_f32 {
    float h;                      /**< step size, > 0 */
    float sigma_p;                /**< diffusion on p, >= 0 */
    float gamma;                  /**< friction rescaling, >= 0 (0 freezes xi) */
    float sigma_theta;            /**< first-order Langevin diffusion on theta, >= 0 */
    float sigma_xi;               /**< first-order Langevin diffusion on xi, >= 0 */
    float a;                      /**< monomial exponent: 1 or 2 */
    float c;                      /**< softening, > 0; at a = 1, >= 1.3e-6 */
    uint32_t resample_momentum;   /**< T_p: redraw p from exp(-K) every T_p chain steps; 0 = never */
    uint32_t resample_thermostat; /**< T_xi: redraw xi from N(0, 1) every T_xi chain steps; 0 = never */
    int32_t integrator;           /**< SGMCMC_EULER or SGMCMC_SPLITTING */
    float noise_estimate;         /**< gradient-noise estimate B-hat >= 0 for the theta term
                                       (2 sigma_theta B-hat < T); 0 = Zhang et al. eq. 13 as printed */
    float temperature;            /**< temperature T >= 0 (1: the posterior); last, so the fields
                                       before it keep their offsets. Set it: 0 is T = 0 */
} sgmcmc_sgmgt_params_f32;

/** The double twin of sgmcmc_sgmgt_params_f32 (same field order). */
typedef struct sgmcmc_sgmgt_params_f64 {
    double h;                     /**< step size, > 0 */
    double sigma_p;               /**< diffusion on p, >= 0 */
    double gamma;                 /**< friction rescaling, >= 0 */
    double sigma_theta;           /**< first-order Langevin diffusion on theta, >= 0 */
    double sigma_xi;              /**< first-order Langevin diffusion on xi, >= 0 */
    double a;                     /**< monomial exponent: 1 or 2 */
    double c;                     /**< softening, > 0; at a = 1, >= 6.4e-23 */
    uint32_t resample_momentum;   /**< T_p; 0 = never */
    uint32_t resample_thermostat; /**< T_xi; 0 = never */
    int32_t integrator;           /**< SGMCMC_EULER or SGMCMC_SPLITTING */
    double noise_estimate;        /**< B-hat >= 0, 2 sigma_theta B-hat < T; 0 = eq. 13 as printed */
    double temperature;           /**< temperature T >= 0 (1: the posterior) */
} sgmcmc_sgmgt_params_f64;

/**
 * SGMGT / SGMGT-D. Buffers: theta, p, xi (n each, in/out; xi = 0 is the natural start), work
 * (3n). `step_count` is the chain's step counter (in/out): read at the start, incremented
 * after every completed step; p is redrawn right after the steps at which it becomes a
 * multiple of T_p, then xi at multiples of T_xi (statistics are taken before the redraw). Pass
 * the same counter to every call of a chain so that the resampling periods run across calls;
 * with NULL, the count restarts at 0 in every call (periods count from each call's start, and
 * calls of fewer than T steps never resample).
 */
int32_t sgmcmc_sgmgt_f32(sgmcmc_sgmgt_params_f32 params, sgmcmc_gradient_f32 grad_fn, void* ctx,
                         float* theta, float* p, float* xi, float* work, size_t n,
                         uint64_t steps, uint64_t* step_count, sgmcmc_rng* rng,
                         sgmcmc_stats* stats);
/** The double twin of sgmcmc_sgmgt_f32. */
int32_t sgmcmc_sgmgt_f64(sgmcmc_sgmgt_params_f64 params, sgmcmc_gradient_f64 grad_fn, void* ctx,
                         double* theta, double* p, double* xi, double* work, size_t n,
                         uint64_t steps, uint64_t* step_count, sgmcmc_rng* rng,
                         sgmcmc_stats* stats);

/**
 * SGMGT / SGMGT-D with per-coordinate gradient-noise estimates for the first-order theta term
 * (Sgmgt::set_noise_estimates in the Rust core): `noise_estimates` holds n values B-hat_i >= 0
 * with 2 sigma_theta B-hat_i < 1 and < T (both bounds: the core's per-coordinate check is 1
 * whatever T, the tempered dynamics need T) and replaces params.noise_estimate coordinate by
 * coordinate (theta_i injects sqrt(2 sigma_theta h (T - sigma_theta B-hat_i)) and moves with
 * (1 - 2 sigma_theta B-hat_i / T) dK/dp_i). Use it when the minibatch noise differs between
 * coordinates. The array is only read; it is a pointer like the others (NULL or misaligned:
 * SGMCMC_ERR_NULL; overlapping any other argument: SGMCMC_ERR_OVERLAP). Its values are checked
 * last, after the initial state: a bad one returns SGMCMC_ERR_BAD_NOISE_ESTIMATE before any
 * step. Otherwise as sgmcmc_sgmgt_f32.
 */
int32_t sgmcmc_sgmgt_noise_estimates_f32(sgmcmc_sgmgt_params_f32 params,
                                         const float* noise_estimates,
                                         sgmcmc_gradient_f32 grad_fn, void* ctx, float* theta,
                                         float* p, float* xi, float* work, size_t n,
                                         uint64_t steps, uint64_t* step_count, sgmcmc_rng* rng,
                                         sgmcmc_stats* stats);
/** The double twin of sgmcmc_sgmgt_noise_estimates_f32. */
int32_t sgmcmc_sgmgt_noise_estimates_f64(sgmcmc_sgmgt_params_f64 params,
                                         const double* noise_estimates,
                                         sgmcmc_gradient_f64 grad_fn, void* ctx, double* theta,
                                         double* p, double* xi, double* work, size_t n,
                                         uint64_t steps, uint64_t* step_count, sgmcmc_rng* rng,
                                         sgmcmc_stats* stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGMCMC_H */
