// The "script" mode of fpexplore_libtorch: load a TorchScript file and run its forward.
//
// Kept in its own translation unit: the TorchScript headers are heavy, and main.cpp need not
// be recompiled for them. Every tensor of the result (a tensor, or tuples/lists of them,
// flattened in order) is returned.
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

void flatten(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten(e, out);
  } else if (!v.isNone()) {
    throw std::runtime_error("the script returned a " + v.tagKind() +
                             "; only tensors, tuples and lists of them are written");
  }
}

}  // namespace

std::vector<at::Tensor> fpx_run_script(const std::string& path,
                                       const std::vector<at::Tensor>& inputs) {
  c10::NoGradGuard no_grad;
  auto module = torch::jit::load(path, c10::Device(c10::kCPU));
  module.eval();
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  std::vector<at::Tensor> out;
  flatten(module.forward(args), out);
  return out;
}
