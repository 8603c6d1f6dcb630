"""What each section of the lesson states: its claims (``key: text``, the text as stated
before anything is measured), the template of the numbers a run measures for each, the
declared claims (`ClaimSpec`, keyed within their section) and the text that explains it."""

from dataclasses import replace

from ...result.spec import ClaimSpec, declare_texts

#: the Grappler optimizer whose rewrite turns x / const into x * (1 / const) (ConstantFolding's
#: division-to-reciprocal rule); switching it off restores eager's division (graph mode)
REWRITE_SWITCH = "constant_folding"

SOFTMAX_CLAIMS = {
    "seed_example": "the op on [1, 2, 3] in float32 is within 2 ULP of the exact value in both "
    "frameworks, on every CPU path",
    "naive_overflows": "the textbook formula overflows on large logits; the frameworks do not",
    "defaults_error": "each framework's error on large logits in the chosen dtype",
    "fix_agrees": "computing in float64 and rounding the result makes the two agree bit for bit",
}

CROSS_ENTROPY_CLAIMS = {
    "keras_epsilon": "Keras clips probabilities at its epsilon, capping the loss",
    "from_logits_agrees": "from logits, torch and Keras agree within a few ULP",
}

SOFTMAX_TEXT = (
    "softmax and log_softmax: both frameworks subtract the row maximum before exp, so large "
    "logits do not overflow (the textbook formula does). Their kernels round differently, "
    "most visibly in float16 and bfloat16. Computing in float64 and rounding the result to the "
    "input format makes both correctly rounded (within a hair of half an ULP: for float16 and "
    "bfloat16 the frameworks' casts round to float32 first, two roundings) and bit-identical."
)

CROSS_ENTROPY_TEXT = (
    "Cross-entropy: torch's F.cross_entropy takes logits (log_softmax inside). Keras's "
    "SparseCategoricalCrossentropy takes probabilities by default and clips them to "
    "[epsilon, 1 - epsilon] with epsilon = 1e-7, so a confident wrong prediction costs at most "
    "-log(1e-7) ≈ 16.1. Pass from_logits=True and both agree within a few ULP of the exact loss."
)

GELU_CLAIMS = {
    "keras_defaults": "keras.activations.gelu is exact by default, keras.ops.gelu approximates",
    "gelu_one": "gelu(1) differs between the erf and the tanh forms",
    "tanh_is_a_formula_gap": "the tanh form is a different formula, not rounding",
    "fix_agrees": "approximate=False makes Keras agree with torch within a rounding bound",
}

GELU_TEXT = (
    "GELU is x·Φ(x). torch's F.gelu computes it with erf unless approximate='tanh'; "
    "keras.activations.gelu (the 'gelu' activation of Keras layers) is exact by default, but "
    "keras.ops.gelu defaults to the tanh approximation 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))). "
    "That is a different function, off by up to about 5e-4, not a rounding difference: "
    "keras.ops.gelu(x, approximate=False) agrees with torch within a few ULP of the maximum."
)

LAYER_NORM_CLAIMS = {
    "default_epsilons": "torch's LayerNorm eps and Keras's LayerNormalization epsilon differ",
    "defaults_disagree": "with small variances the defaults give different outputs",
    "fix_agrees": "epsilon matched, both are within the layer's rounding bound",
}

LAYER_NORM_TEXT = (
    "LayerNorm: (x - mean) / sqrt(var + eps) · gamma + beta over the last axis. torch's "
    "default eps is 1e-5, Keras's epsilon 1e-3: when a row's variance is near 1e-3 the two "
    "defaults are different functions. Set epsilon explicitly and both agree within the "
    "float32 rounding bound. BatchNorm has the same epsilon gap plus opposite momentum "
    "conventions: see the train/eval lesson (notebook 03)."
)

CONV_CLAIMS = {
    "stride1_same": "stride 1, odd kernel: 'same' agrees",
    "even_kernel_extra": "even kernel: the extra padding goes right and bottom in both",
    "torch_refuses_stride2": "torch refuses padding='same' with stride > 1",
    "stride2_grid": "stride 2: symmetric padding shifts the sampling grid",
    "fix_agrees": "padding explicitly like TensorFlow makes them agree",
}

CONV_TEXT = (
    "conv2d padding='same': TensorFlow pads max((ceil(n/s) - 1)·s + k - n, 0) pixels per axis, "
    "the odd one after (right, bottom). At stride 1 torch's padding='same' does the same; at "
    "stride 2 torch refuses 'same', and the usual port padding=k//2 pads symmetrically, which "
    "on an even-sized image starts the sampling grid one pixel earlier: every output is a "
    "different window. Pad explicitly with F.pad as TensorFlow does and the two agree within "
    "the rounding bound of the exact convolution."
)

ADAM_CLAIMS = {
    "beta_rounding": "Keras computes beta powers in float32",
    "default_epsilons": "torch's and Keras's default epsilons differ",
    "placement": "Keras adds epsilon-hat to √v; torch adds eps to √v̂",
    "fix_one_step": "for one step a rescaled epsilon makes them agree",
    "fix_many_steps": "over many steps epsilon-hat must follow the step count",
}

ADAM_TEXT = (
    "Adam: torch updates w -= lr·m̂/(√v̂ + eps) with eps = 1e-8 (Algorithm 1 of the paper). "
    "Keras folds both bias corrections into the step size and adds its epsilon = 1e-7 to √v "
    "(the paper's epsilon-hat): lr·√(1-β2^t)/(1-β1^t)·m/(√v + ε̂). The two agree exactly when "
    "ε̂ = eps·√(1-β2^t), which changes every step; with either default the update of a weight "
    "whose gradient is near epsilon differs."
)

AUTOGRAD_CLAIMS = {
    "seed_192": "the gradient of (x**2)**3 at 2 is exactly 192 in both",
    "chain_drift": "gradients through a long chain drift from the exact derivative",
    "fix_agrees": "in float64, rounded once, both give the same correctly rounded gradient",
}

AUTOGRAD_TEXT = (
    "Autograd: for z = (x**2)**3 both torch's autograd and TensorFlow's GradientTape give the "
    "exact 6·x⁵ = 192 at x = 2 (every step is exact in float32); the frequently quoted 24.0 is "
    "simply wrong. Through a long chain each step rounds, and the gradient drifts from the "
    "exact derivative (mpmath, forward mode) roughly in proportion to the length, differently "
    "in each framework because their sin kernels round differently. Computing in float64 and "
    "rounding once makes both give the correctly rounded gradient."
)

LSTM_CLAIMS = {
    "gate_order": "transposed weights and summed biases make Keras's LSTM torch's",
    "one_bias_wrong": "dropping the second bias is a mapping bug",
    "recurrent_activation": "the recurrent activation must be sigmoid in both",
    "gradients_rounding": "input gradients agree with the exact ones up to rounding",
    "growth": "how the difference grows with sequence length",
}

LSTM_TEXT = (
    "LSTM: torch stores weight_ih (4H, in), weight_hh (4H, H) and two biases, gates in the "
    "order i, f, g, o; Keras stores kernel (in, 4H), recurrent_kernel (H, 4H) and one bias, "
    "gates i, f, c, o — the same order (g is c). Transpose, add the biases, keep sigmoid as "
    "the recurrent activation, and the two compute the same function: their outputs and "
    "input gradients stay within float32 rounding of an mpmath LSTM (hidden size 4, "
    "certified at 64 and 160 bits) at every step up to the sequence length."
)

GRAPH_CLAIMS = {
    "division_rewritten": "default tf.function turns x / 3.0 into a multiply by 1 / 3.0",
    "rewrite_off_is_eager": "tf.function with Grappler's rewrite off gives eager's bits",
    "xla": "every mode stays within a few ULP of the exact log-sum-exp at every seed",
    "torch_vs_tf": "torch eager stays within a few ULP",
    "fix_agrees": "in float64, rounded once, every mode gives the same bits",
    "torch_compile": "torch.compile stays within a few ULP of the exact value",
}

GRAPH_TEXT = (
    "Graph vs eager: tf.function traces the Python function into a graph, and Grappler "
    "rewrites that graph before it runs. One rewrite changes bits: a division by a constant "
    "becomes a multiplication by its rounded reciprocal, so tf.function(lambda x: x / 3.0) "
    "differs from eager's correctly rounded division wherever the two roundings part (the "
    "division_rewritten claim counts those elements at each seed). "
    f"tf.config.optimizer.set_experimental_options({{'{REWRITE_SWITCH}': False}}) turns that "
    "rewrite off, and the traced graph then gives eager's bits (the arithmetic optimizer "
    "alone is not the switch). jit_compile=True hands the graph to XLA, which fuses "
    "operations and generates its own loops (its own exp, its own summation order): whether "
    "its bits match eager's depends on the input, its accuracy does not. Every verdict here "
    "is taken over several seeds. torch.compile (inductor) does the same for torch; it "
    "compiles C++ on first use, which takes tens of seconds, so it runs only with "
    "torch_compile=True."
)

REDUCE_SUM_CLAIMS = {
    "torch_threads": "torch.sum depends on the thread count; the emulator reproduces it",
    "tf_threads": "tf.reduce_sum matches the Eigen emulator at its thread count",
    "fix_agrees": "accumulating in float64 gives one result everywhere",
}

REDUCE_SUM_TEXT = (
    "reduce_sum: both frameworks split a large sum into per-thread chunks and add the partial "
    "sums, so the bits depend on the intra-op thread count (torch.set_num_threads, which can "
    "change at any time; TensorFlow's pool, fixed when it starts). The summation lesson "
    "(notebook 01) rebuilds both orders bit for bit in fpexplore.orders; here they are checked "
    "against the live frameworks. Accumulating in float64 and rounding once removes the "
    "dependence."
)

CONTROL_FLOW_CLAIMS = {
    "if_without_tape": "a Python `if` on an eager tensor runs without a GradientTape",
    "control_flow_gradients_agree": "taped, tf.function/tf.cond and torch gradients agree",
}

CONTROL_FLOW_TEXT = (
    "Control flow: in eager mode a Python `if` on a tensor is ordinary Python, so it runs with "
    "or without a GradientTape; the tape only records the operations of the branch taken, which "
    "is all a gradient needs. Under tf.function autograph rewrites the `if` into tf.cond, whose "
    "gradient is the taken branch's too, so every way gives the same (exact) gradient as torch."
)

HIGHER_ORDER_CLAIMS = {
    "higher_order_accurate": "2nd and 3rd derivatives in both stay close to the exact ones",
}

HIGHER_ORDER_TEXT = (
    "Higher-order derivatives: torch differentiates its own gradient graph (create_graph=True), "
    "TensorFlow nests tapes. Both apply the same derivative rules; the results differ only in "
    "the last bits where their elementary-function kernels round differently, and both stay "
    "within a few hundred float32 roundings of the exact derivative (mpmath), scaled by its "
    "size (derivatives have zeros, where a relative error says nothing)."
)

TOLERANCE_CLAIMS = {
    "tolerances_differ": "default pinv/rank cut-offs differ between the libraries in float32",
    "float64_all_agree": "in float64 all keep the 1e-6 singular value",
}

TOLERANCE_TEXT = (
    "Near-singular tolerances: numpy's matrix_rank and torch's matrix_rank/pinv cut singular "
    "values below max(m, n)·eps·σ_max; TensorFlow's pinv uses 10·max(m, n)·eps, ten times "
    "more, and its matrix_rank the smaller one. On diag(1, 1e-5, 1e-6) in float32 that "
    "difference decides whether 1e-6 is a singular value or noise."
)


# ----------------------------------------------------------------------------- the numbers
#: each claim's template of the numbers a run measures (`ClaimSpec.numbers`)
GELU_NUMBERS = {
    "keras_defaults": (
        ": keras.activations.gelu defaults to approximate={act_default}, keras.ops.gelu to "
        "approximate={ops_default}; torch's F.gelu is exact (erf) unless approximate='tanh'"
    ),
    "gelu_one": (
        ": gelu(1): torch {torch_one:.8g}, keras.activations {activations_one:.8g}, "
        "keras.ops {ops_one:.8g} (exact erf form {erf_form:.8g}, tanh "
        "form {tanh_form:.8g})"
    ),
    "tanh_is_a_formula_gap": (
        ": the tanh form differs from the erf form by up to {gap:.3g} on [-6, 6], far more "
        "than rounding ({bound:.3g} = 8 u max|gelu|): keras.ops.gelu's default is off by "
        "{ops_erf:.3g} from the erf truth but within "
        "{ops_tanh:.3g} of the tanh one, like torch's approximate='tanh' "
        "({torch_tanh:.3g})"
    ),
    "fix_agrees": (
        ": the one-line fix keras.ops.gelu(x, approximate=False) is within {bound:.3g} (8 u "
        "max|gelu|) of the erf truth, as torch's F.gelu ({torch_erf:.3g}) "
        "and keras.activations.gelu ({activations_erf:.3g}) are; "
        "{bits}"
    ),
}
ADAM_NUMBERS = {
    "beta_rounding": (
        ": Keras rounds beta_1 = 0.9 and beta_2 = 0.999 to float32 before taking powers: with "
        "torch's double 0.999 the first step size would differ by {shift:.2g} relative (this "
        "lesson gives both the float32 values)"
    ),
    "default_epsilons": (
        ": default epsilons: torch Adam eps={eps_t:g}, Keras Adam epsilon={eps_k:g}"
    ),
    "placement": (
        ": with its defaults Keras's weights differ from torch's Adam by up to "
        "{err1_keras_max:.3g} ULP after one step and {err_keras_max:.3g} after {n}, on "
        "weights whose gradients are near epsilon; Keras is within {own_ulp:.3g} ULP of its "
        "own formula (epsilon-hat added to √v after folding the bias corrections into the "
        "step size), inside one ULP per step plus what its float32 β^t can cost"
    ),
    "fix_one_step": (
        ": one step: Keras epsilon = {eps_t:g}·√(1-β2) = {eps_hat:.4g} makes "
        "the two agree with torch's exact Adam: torch within 2 ULP ({err1_torch_max:.3g}), "
        "Keras within 2 ULP plus its float32 β^t's {beta_cost:.3g} "
        "({err1_keras_fixed_max:.3g})"
    ),
    "fix_many_steps": (
        ": {n} steps: no constant epsilon does it (epsilon-hat = eps·√(1-β2^t) changes with "
        "t); setting opt.epsilon to it before each step does: torch within {bound:g} ULP (one "
        "per step) of torch's exact Adam ({err_torch_max:.3g}), Keras within that plus its "
        "float32 β^t's {beta_cost:.3g} ({err_keras_fixed_max:.3g})"
    ),
}
AUTOGRAD_NUMBERS = {
    "seed_192": (
        ": z = (x**2)**3 at x = 2: torch gives {g_torch:g}, TensorFlow {g_tf:g}; the exact "
        "derivative is 6·x⁵ = {exact}. The often-quoted {seed_claim:g} is wrong."
    ),
    "chain_drift": (
        ": through a {length}-step chain y ← y + {c}·sin(y + φ_k) the float32 gradients drift "
        "from the exact derivative: at L = {length} torch is off by {err_torch_1:.3g} ULP, "
        "TensorFlow by {err_tf_1:.3g} (at L = 1: {err_torch_0:.3g} and {err_tf_0:.3g}); both "
        "stay within a relative error of 8·L·u, first-order growth"
    ),
    "fix_agrees": (
        ": the one-line fix (run the chain in float64, round the gradient once) makes both "
        "within {round_once_bound:g} ULP of the exact derivative at every length (torch "
        "{err_torch_wide_max:.3g}, TensorFlow {err_tf_wide_max:.3g}) and identical bit for "
        "bit"
    ),
}
CONTROL_FLOW_NUMBERS = {
    "if_without_tape": (
        ": a Python `if` on an eager tensor runs without any GradientTape: at {len_xs} points "
        "on both sides of 0 it returns the branch's value bit for bit"
    ),
    "control_flow_gradients_agree": (
        ": the gradient through that `if` is the same, bit for bit and exact (2x or -2), "
        "taped eagerly, under tf.function (autograph's tf.cond), with an explicit tf.cond and "
        "in torch, at all {len_xs} points"
    ),
}
HIGHER_ORDER_NUMBERS = {
    "higher_order_accurate": (
        ": second and third derivatives of {functions} at {x_size} float32 points, "
        "nested autograd in torch and nested tapes in TensorFlow: both stay within "
        "{bound_u:.0f} u of the exact (mpmath) derivative, scaled by its largest "
        "magnitude (torch {torch_u:.3g} u, TensorFlow {tf_u:.3g} u)"
    ),
}
TOLERANCE_NUMBERS = {
    "tolerances_differ": (
        ": on diag{diag} in float32 the default cut-offs differ: TensorFlow's pinv drops the "
        "1e-6 singular value (rcond 10·3·eps = {rcond:.3g}; pinv[2,2] = "
        "{f32_tf_pinv_2_2:g}) while its own matrix_rank counts it (rank {f32_tf_rank}); numpy "
        "and torch keep it (pinv[2,2] {f32_numpy_pinv_2_2:.7g} and {f32_torch_pinv_2_2:.7g}; "
        "measured cut-offs relative to σ_max: numpy {f32_numpy_pinv_cutoff:.3g}, torch "
        "{f32_torch_pinv_cutoff:.3g}, TensorFlow {f32_tf_pinv_cutoff:.3g})"
    ),
    "float64_all_agree": (": in float64 every library counts rank 3 and keeps 1e6 in pinv"),
}
CONV_NUMBERS = {
    "stride1_same": (
        ": stride 1, 3×3 kernel: padding='same' is one pixel on every side in both; both are "
        "within the float32 bound n·u·Σ|x·w| of the exact convolution "
        "({bits})"
    ),
    "even_kernel_extra": (
        ": stride 1, 4×4 kernel: 3 pixels of padding per axis; torch puts the extra one "
        "{extra_torch}, TensorFlow {extra_tensorflow} (right and bottom)"
    ),
    "torch_refuses_stride2": (": torch refuses padding='same' with stride 2: {refused!r}"),
    "stride2_grid": (
        ": stride 2 on a {size}×{size} image: TensorFlow pads {p2} (before, after); torch's "
        "symmetric padding=1 {grid}; TensorFlow is within the "
        "rounding bound of the exact convolution on its grid"
    ),
    "fix_agrees": (
        ": the one-line fix F.pad(x, {pad}) then padding=0 puts torch on "
        "TensorFlow's grid: both within the rounding bound of the same exact "
        "convolution{bits}"
    ),
}
GRAPH_NUMBERS = {
    "division_rewritten": (
        ": default tf.function rewrites x / 3.0 into x * (1 / 3.0): at every seed its bits "
        "are those of the multiply by the rounded reciprocal, eager's those of the correctly "
        "rounded division (they differ in {differ} elements)"
    ),
    "rewrite_off_is_eager": (
        ": with Grappler's rewrite off "
        "(tf.config.optimizer.set_experimental_options({{'{rewrite_switch}': False}})), "
        "tf.function gives eager's bits for x / 3.0 and for the log-sum-exp at every seed "
        "({seeds})"
    ),
    "xla": (
        ": eager, tf.function (either way) and XLA are all within {bound_ulp:g} ULP of the "
        "exact log-sum-exp at every seed (worst over the seeds {worst:.3g}; the table shows the "
        "first seed's); XLA fuses exp and sum into its "
        "own loop and gives eager's bits at seeds {xla_seeds} of {seeds}"
    ),
    "torch_vs_tf": (
        ": torch eager is within {bound_ulp:g} ULP too ({err_torch_eager:.3g}); {bits}"
    ),
    "fix_agrees": (
        ": computing in float64 and rounding once gives the same bits eagerly, under XLA and "
        "in torch, within {bound:g} ULP of the exact value"
    ),
    "torch_compile": (
        ": torch.compile (inductor) generates its own fused loop: "
        "{bits}; within {bound_ulp:g} ULP of the exact value "
        "({err_torch_compile:.3g})"
    ),
}
LSTM_NUMBERS = {
    "gate_order": (
        ": torch's gate order i, f, g, o is Keras's i, f, c, o under another name: "
        "transposing the matrices and summing the two biases is the whole transfer; then "
        "Keras's h is within {worst_keras:.3g} of the exact cell at every one of {length} "
        "steps (torch: {worst_torch:.3g}), inside 2^-16"
    ),
    "one_bias_wrong": (
        ": forgetting torch's second bias b_hh puts Keras's h off by up to "
        "{worst_keras_one_bias:.3g}: a mapping bug, not rounding"
    ),
    "recurrent_activation": (
        ": Keras's LSTM uses recurrent_activation='{rec_default}' by default, as torch does; "
        "'hard_sigmoid' (Keras 2's old default) moves h by up to {worst_keras_hard:.3g}"
    ),
    "gradients_rounding": (
        ": the gradients d sum(h_L)/dx_t of both frameworks are within "
        "{worst:.3g} of the exact ones (relative to the largest), "
        "inside 2^-12 for every t: rounding, not a bug"
    ),
    "growth": (
        ": the torch–Keras difference in h grows from {diff_h_0:.3g} at step 1 to "
        "{diff_h_max:.3g} (largest, at step {at_step}) and stays within 2^-15 up "
        "to step {length}: the cell forgets old rounding errors as it forgets old inputs; "
        "{same} of {length} steps are bit-identical"
    ),
}
LAYER_NORM_NUMBERS = {
    "default_epsilons": (
        ": the default epsilons differ: torch LayerNorm eps={ln_eps:g}, Keras "
        "LayerNormalization epsilon={k_eps:g}"
    ),
    "defaults_disagree": (
        ": with a row variance near {var:.2g}, Keras's epsilon changes the output by up to "
        "{rel:.3g} ({err_keras_max:.3g} ULP): {outside} of {values} "
        "values lie outside the rounding bound of torch's reference, while Keras is within "
        "{own_max:.3g} ULP of its own (epsilon={k_eps:g}) reference"
    ),
    "fix_agrees": (
        ": the one-line fix LayerNormalization(epsilon={ln_eps:g}) brings Keras within "
        "{err_keras_fixed_max:.3g} ULP of the reference, torch within {err_torch_max:.3g} ULP; "
        "both inside the float32 rounding bound of the layer, element by element (up to "
        "{b_max:.3g} ULP)"
    ),
}
REDUCE_SUM_NUMBERS = {
    "torch_threads": (
        ": torch.sum of {size} float32 values at {threads} threads: "
        "{distinct_torch} distinct result(s) (torch splits sums of 32768 elements or more "
        "across threads); the summation lesson's emulator reproduces every one bit for bit"
    ),
    "tf_threads": (
        ": TensorFlow's sum here matches the Eigen emulator at {matched} "
        "thread(s); emulated at {threads} intra-op threads it gives "
        "{distinct_tf} distinct result(s)"
    ),
    "fix_agrees": (
        ": the one-line fix, accumulating in float64 and rounding once, gives one result for "
        "every thread count and both frameworks, within {round_once_bound:g} ULP of the exact "
        "sum (measured {e_wide:.3g})"
    ),
}
SOFTMAX_NUMBERS = {
    "seed_example": (
        ": {op}([1, 2, 3]): torch {torch_ulp:.3g} ULP, TensorFlow {tf_ulp:.3g} ULP (at most "
        "{seed_bound:g})"
    ),
    "naive_overflows": (
        ": the textbook exp(x) / sum(exp(x)) overflows on logits near 1000 (float32 exp "
        "overflows above {exp_max:.4g}); both frameworks subtract the "
        "maximum first and stay finite"
    ),
    "defaults_error": (
        ": on {size} logits near 1000 in {dtype}: torch is off by up to "
        "{torch_ulp:.3g} ULP and TensorFlow by up to {tf_ulp:.3g} ULP "
        "of the exact {op}; {differ} of {size} elements differ in their "
        "bits; computing in float64, {rounded}, is at least as accurate as either"
    ),
    "fix_agrees": (
        ": the one-line fix (compute in float64, {rounded}) makes both within "
        "{round_once_bound:g} ULP of the exact {op} (measured "
        "{torch_wide:.3g} and {tf_wide:.3g}) and identical "
        "bit for bit"
    ),
}
CROSS_ENTROPY_NUMBERS = {
    "keras_epsilon": (
        ": Keras's backend epsilon is {eps:g}: a loss computed from probabilities never "
        "exceeds -log({eps:g}) = {cap:.6g} (give or take the rounding of the renormalized "
        "probabilities); here {capped} of {n} samples have an exact loss above it (up "
        "to {exact_max:.4g}) and Keras returns at most {keras_max:.6g}"
    ),
    "from_logits_agrees": (
        ": from logits both are within {bound:g} ULP of the exact loss plus {bound:g} u of "
        "the largest logit (the size of the numbers subtracted in log-sum-exp minus the "
        "target logit): torch {torch_ulp:.3g} ULP at most, Keras "
        "{keras_ulp:.3g}; the one-line fix is from_logits=True"
    ),
}


def _declared(texts: dict[str, str], numbers: dict[str, str]) -> dict[str, ClaimSpec]:
    """A section's claims: each needs both frameworks, and is decided by the lesson's tests."""
    return declare_texts(
        {k: (t, numbers.get(k, "")) for k, t in texts.items()},
        ("torch", "tensorflow"),
        test="tests/test_tf_vs_torch.py",
    )


SOFTMAX = _declared(SOFTMAX_CLAIMS, SOFTMAX_NUMBERS)
CROSS_ENTROPY = _declared(CROSS_ENTROPY_CLAIMS, CROSS_ENTROPY_NUMBERS)
GELU = _declared(GELU_CLAIMS, GELU_NUMBERS)
LAYER_NORM = _declared(LAYER_NORM_CLAIMS, LAYER_NORM_NUMBERS)
CONV = _declared(CONV_CLAIMS, CONV_NUMBERS)
ADAM = _declared(ADAM_CLAIMS, ADAM_NUMBERS)
AUTOGRAD = _declared(AUTOGRAD_CLAIMS, AUTOGRAD_NUMBERS)
LSTM = _declared(LSTM_CLAIMS, LSTM_NUMBERS)
GRAPH = _declared(GRAPH_CLAIMS, GRAPH_NUMBERS)
# stated only in a run that asks for torch.compile (torch_compile=True)
GRAPH["torch_compile"] = replace(GRAPH["torch_compile"], occasional=True)
REDUCE_SUM = _declared(REDUCE_SUM_CLAIMS, REDUCE_SUM_NUMBERS)
CONTROL_FLOW = _declared(CONTROL_FLOW_CLAIMS, CONTROL_FLOW_NUMBERS)
HIGHER_ORDER = _declared(HIGHER_ORDER_CLAIMS, HIGHER_ORDER_NUMBERS)
TOLERANCE = _declared(TOLERANCE_CLAIMS, TOLERANCE_NUMBERS)
