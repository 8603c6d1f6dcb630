"""What the lesson states: every claim as stated before measuring, with the template of the
numbers a run measures for it (then "not checked" where a part it needs is missing, naming it),
and the parts each needs."""

from dataclasses import replace

from ...result.spec import ClaimSpec, declare_texts

_TEXTS = {
    "std_ddof": (
        "torch.std is unbiased (divides by N-1), np.std divides by N: torch's normalized "
        "values are sqrt((N-1)/N) times numpy's"
    ),
    "std_fix": ("torch.std(correction=0) fixes it: torch then agrees with numpy to within 1 ULP"),
    "std_djl_population": (
        "DJL's std idiom is the population std: its normalized values agree with numpy's "
        "(divided by N) to within 1 ULP and differ from the unbiased ones (N-1, torch's "
        "default)"
    ),
    "article_names_gone": (
        "the articles' NDArrays.sum/mean/std and ai.djl.random.RandomGenerator do not exist "
        "in DJL 0.36's api jar",
        ": {gone} missing (of {names}); what exists is {here} (no std: hence the idiom above)",
    ),
    "decode_tf_default_differs": (
        "TensorFlow's decode_jpeg with its default (fast) IDCT differs from PIL on the sample "
        "JPEGs; dct_method='INTEGER_ACCURATE' gives PIL's bits"
    ),
    "decode_imageio_equals_pil": (
        "Java ImageIO (DJL's BufferedImageFactory) and PIL decode every sample PNG and JPEG "
        "to the same bits"
    ),
    "antialias_matters": (
        "downscaling without antialias (TensorFlow's default) errs by many levels against the "
        "antialiased resize; antialias=True brings TensorFlow within a level"
    ),
    "resize_square": (
        "DJL Resize(size) is square, torchvision Resize(size) keeps the aspect ratio",
        ": DJL Resize({size}) gives {size}x{size}, torchvision Resize({size}) {oh}x{ow}; "
        "DJL's ResizeShort({size}) gives torchvision's shape",
    ),
    "resize_is_torch_interpolate": (
        "DJL's resize is libtorch's interpolate: on float32 input it equals torch's to within "
        "float32 rounding (< 1e-3 levels)",
        ": interpolate({interp}{antialias}), max |diff| {gap:.2g} levels, at every size and scale",
    ),
    "resize_uint8_truncates": (
        "on uint8 input DJL casts the float result back by truncation: its output is the "
        "floor of its own float32 resize (wherever that lies in [0, 256))"
    ),
    "resize_fix_matches_torchvision_tensor": (
        "the fix (resize float32, round, clamp) reproduces torchvision's uint8-tensor Resize: "
        "bilinear bit for bit, bicubic to within 1 level",
        ": {interp}, {closeness}",
    ),
    "rounding_halves_error": (
        "truncation only rounds down: its errors lie in (-1, 0] level (up to float32 noise); "
        "rounding keeps every in-range pixel within 0.5 level of the exact resize"
    ),
    "crop_offset": (
        "DJL floors the centre-crop offset, torchvision rounds it half to even",
        ": on a {h}x{w} input DJL crops at (top, left) = {floor}, torchvision at {rounded}: "
        "{shift}{uncropped}",
    ),
    "crop_fix": ("cropping at torchvision's offset in DJL gives torchvision's crop bit for bit"),
    "to_tensor_convert_image_dtype": (
        "tf.image.convert_image_dtype multiplies by 1/255",
        ": {n_bad} of the 256 levels come out 1 ULP away from x/255",
    ),
    "to_tensor_tf_fix": ("tf.cast(x, float32) / 255 equals torchvision's ToTensor bit for bit"),
    "to_tensor_bit_equal": (
        "DJL's ToTensor, torchvision's ToTensor and numpy's x/255 are bit-identical and "
        "correctly rounded"
    ),
    "normalize_folded_differs": (
        "folding Normalize into x * (1/s) - m/s (as when it is merged into a layer) is not "
        "bit-equal to (x - m) / s"
    ),
    "normalize_bit_equal": (
        "DJL's Normalize, torchvision's Normalize and numpy float32 give the same bits (each "
        "is one float32 subtraction and one division)"
    ),
    "normalize_tf_bit_equal": ("TensorFlow's (x - m) / s gives DJL's Normalize bits too"),
    "pipeline_first_divergence": (
        "DJL's pipeline as usually written first diverges from torchvision's at the resize "
        "(Resize(int) is square)"
    ),
    "pipeline_fixed": (
        "with ResizeShort, round-and-clamp and torchvision's crop offset, DJL's pipeline has "
        "torchvision's shapes at every stage",
        " and first differs (if at all) at the resize, where PIL's resampler and libtorch's "
        "differ (here by up to {gap:g} level{plural})",
    ),
    "resize_uint8_wraps": (
        "the interpolation overshoots, and DJL's uint8 cast wraps the values outside (-1, 256)",
        ": {wrapped} values of DJL's float {interp} resize fall outside (-1, 256), and its "
        "uint8 cast wraps them (trunc modulo 256) instead of clamping: errors of "
        "{err_min:.0f} to {err_max:.0f} levels against the exact resize; the fix clamps them "
        "to 0 or 255",
    ),
}
_TV = ("torch", "torchvision")
#: what aliasing needs to fold; a smooth gradient has none
DETAIL = "an image with fine detail"
#: what each claim needs beyond numpy and PIL, where it is not (torch, torchvision, DJL)
_NEEDS: dict[str, tuple[str, ...]] = {
    "std_ddof": ("torch",),
    "std_fix": ("torch",),
    "std_djl_population": ("djl",),
    "article_names_gone": ("djl",),
    "decode_tf_default_differs": ("tensorflow",),
    "decode_imageio_equals_pil": ("djl",),
    "antialias_matters": (*_TV, "tensorflow", DETAIL),
    "to_tensor_convert_image_dtype": (*_TV, "tensorflow"),
    "to_tensor_tf_fix": (*_TV, "tensorflow"),
    "normalize_folded_differs": _TV,
    "normalize_tf_bit_equal": (*_TV, "tensorflow", "djl"),
}
CLAIMS = declare_texts(_TEXTS, (*_TV, "djl"), _NEEDS, test="tests/test_djl_normalization.py")
CLAIMS["resize_uint8_wraps"] = replace(CLAIMS["resize_uint8_wraps"], occasional=True)
OBSERVED = ClaimSpec(
    "resize_bit_equal",
    "DJL's float32 resize vs this torch's interpolate, bit for bit",
    ("torch", "djl"),
)
