"""What each section of the lesson states: its claims (``key: text``, the text as stated
before anything is measured) and the text that explains it."""

from .graph import REWRITE_SWITCH

SOFTMAX_CLAIMS = {
    "seed_example": "softmax([1, 2, 3]) in float32 is within 2 ULP in both frameworks, on "
    "every CPU path",
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
