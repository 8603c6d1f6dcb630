// fpexplore_libtorch: the C++ side of the LibTorch vs PyTorch lesson.
//
// It links libtorch_cpu and libc10 from the installed torch wheel, so every torch op here runs
// the very kernels Python's torch runs. Inputs and outputs are .npy files (float32, C order).
//
//   fpexplore_libtorch info           one JSON object: versions, threads, MKL/oneDNN, CPU path
//   fpexplore_libtorch run JOBFILE    the info line, then one job a line, one JSON line per job:
//       <op> threads=<n> mkldnn=<0|1> out=<file.npy> [in=<a.npy>,<b.npy>,...] [seed=<s>] [n=<n>]
//   fpexplore_libtorch script MODEL.pt OUTPREFIX THREADS [a.npy,b.npy,...]
//       load a TorchScript file (script.cpp), run forward on the inputs once, write every
//       tensor of its result as OUTPREFIX<i>.npy; print the info line, then one JSON line
//
// ops: mm(a, b) · grad(x): gradient of (x @ x.T).sum() by autograd · mlp(x, w1, b1, w2, b2):
// linear, relu, linear · sum(x) · randn(seed, n) and rand(seed, n) after torch::manual_seed ·
// loop_sum(x) and loop_sum_fastmath(x): a hand-written float loop, compiled without and with
// -ffast-math (loops.cpp).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/generated/variable_factories.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" float fpx_loop_sum_plain(const float* x, std::int64_t n);
extern "C" float fpx_loop_sum_fastmath(const float* x, std::int64_t n);
std::vector<at::Tensor> fpx_run_script(const std::string& path,
                                       const std::vector<at::Tensor>& inputs);

namespace {

// ------------------------------------------------------------------------------------ .npy
at::Tensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  char magic[6];
  f.read(magic, 6);
  if (std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  unsigned char ver[2];
  f.read(reinterpret_cast<char*>(ver), 2);
  std::uint32_t header_len = 0;
  if (ver[0] == 1) {
    unsigned char b[2];
    f.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    f.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  }
  std::string header(header_len, ' ');
  f.read(header.data(), header_len);
  if (header.find("'descr': '<f4'") == std::string::npos)
    throw std::runtime_error(path + ": only little-endian float32 ('<f4') is accepted");
  if (header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": only C-ordered arrays are accepted");
  auto open = header.find('(', header.find("'shape'"));
  auto close = header.find(')', open);
  std::vector<std::int64_t> shape;
  std::stringstream dims(header.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(dims, item, ',')) {
    if (item.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(item));
  }
  auto t = at::empty(shape, at::kFloat);
  f.read(reinterpret_cast<char*>(t.data_ptr<float>()), t.numel() * sizeof(float));
  if (!f) throw std::runtime_error(path + ": truncated data");
  return t;
}

void write_npy(const std::string& path, const at::Tensor& value) {
  auto t = value.detach().to(at::kFloat).contiguous();
  std::string shape = "(";
  for (auto d : t.sizes()) shape += std::to_string(d) + ", ";
  if (t.dim() > 1) shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f.write("\x93NUMPY\x01\x00", 8);
  unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                          static_cast<unsigned char>(header.size() >> 8)};
  f.write(reinterpret_cast<char*>(len), 2);
  f.write(header.data(), header.size());
  f.write(reinterpret_cast<const char*>(t.data_ptr<float>()), t.numel() * sizeof(float));
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {  // control characters as \u00XX
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// ------------------------------------------------------------------------------------ ops
at::Tensor run_op(const std::string& op, const std::vector<at::Tensor>& in, std::int64_t seed,
                  std::int64_t n) {
  auto need = [&](std::size_t k) {
    if (in.size() != k)
      throw std::runtime_error(op + " takes " + std::to_string(k) + " inputs, got " +
                               std::to_string(in.size()));
  };
  if (op == "mm") {
    need(2);
    return torch::mm(in[0], in[1]);
  }
  if (op == "grad") {  // the seed's example: autograd of mm(x, x.t()).sum()
    need(1);
    auto x = in[0].clone().set_requires_grad(true);
    auto y = torch::mm(x, x.t()).sum();
    y.backward();
    return x.grad();
  }
  if (op == "mlp") {  // linear -> relu -> linear, as torch.nn.functional does it
    need(5);
    torch::NoGradGuard no_grad;
    auto h = torch::relu(torch::linear(in[0], in[1], in[2]));
    return torch::linear(h, in[3], in[4]);
  }
  if (op == "sum") {
    need(1);
    return in[0].sum();
  }
  if (op == "randn" || op == "rand") {
    need(0);
    torch::manual_seed(static_cast<std::uint64_t>(seed));
    return op == "randn" ? torch::randn({n}) : torch::rand({n});
  }
  if (op == "loop_sum" || op == "loop_sum_fastmath") {
    need(1);
    auto x = in[0].contiguous();
    float s = op == "loop_sum" ? fpx_loop_sum_plain(x.data_ptr<float>(), x.numel())
                               : fpx_loop_sum_fastmath(x.data_ptr<float>(), x.numel());
    return at::full({}, s, at::kFloat);
  }
  throw std::runtime_error("unknown op '" + op + "'");
}

std::map<std::string, std::string> parse_job(const std::string& line, std::string& op) {
  std::stringstream words(line);
  words >> op;
  std::map<std::string, std::string> kv;
  std::string w;
  while (words >> w) {
    auto eq = w.find('=');
    if (eq == std::string::npos) throw std::runtime_error("bad job field '" + w + "'");
    kv[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return kv;
}

// the compiler's name and version ("gcc 12.2.0"), for the program's report
#if defined(__clang__)
#define FPX_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define FPX_COMPILER "gcc " __VERSION__
#else
#define FPX_COMPILER __VERSION__
#endif

int info() {
  std::cout << "{\"torch_version\": " << quote(TORCH_VERSION)
            << ", \"threads\": " << at::get_num_threads()
            << ", \"interop_threads\": " << at::get_num_interop_threads()
            << ", \"mkl\": " << (at::hasMKL() ? "true" : "false")
            << ", \"mkldnn\": " << (at::hasMKLDNN() ? "true" : "false")
            << ", \"mkldnn_enabled\": "
            << (at::globalContext().userEnabledMkldnn() ? "true" : "false")
            << ", \"cpu_capability\": " << quote(at::get_cpu_capability())
            << ", \"parallel_info\": " << quote(at::get_parallel_info())
            << ", \"compiler\": " << quote(FPX_COMPILER) << ", \"cxx11_abi\": " << _GLIBCXX_USE_CXX11_ABI
            << "}" << std::endl;
  return 0;
}


int run_jobs(const std::string& jobfile) {
  std::ifstream f(jobfile);
  if (!f) throw std::runtime_error("cannot open " + jobfile);
  std::string line;
  const bool mkldnn_default = at::globalContext().userEnabledMkldnn();
  info();  // the first line: what runs the jobs (threads as they were before any job)
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string op;
    auto kv = parse_job(line, op);
    at::set_num_threads(std::stoi(kv.count("threads") ? kv["threads"] : "1"));
    at::globalContext().setUserEnabledMkldnn(kv.count("mkldnn") ? kv["mkldnn"] == "1"
                                                                 : mkldnn_default);
    std::vector<at::Tensor> in;
    if (kv.count("in") && !kv["in"].empty()) {
      std::stringstream names(kv["in"]);
      std::string name;
      while (std::getline(names, name, ',')) in.push_back(read_npy(name));
    }
    auto t0 = std::chrono::steady_clock::now();
    auto out = run_op(op, in, kv.count("seed") ? std::stoll(kv["seed"]) : 0,
                      kv.count("n") ? std::stoll(kv["n"]) : 0);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    write_npy(kv.at("out"), out);
    std::cout << "{\"op\": " << quote(op) << ", \"threads\": " << at::get_num_threads()
              << ", \"mkldnn\": " << (at::globalContext().userEnabledMkldnn() ? "true" : "false")
              << ", \"ms\": " << ms << ", \"out\": " << quote(kv.at("out")) << "}" << std::endl;
  }
  return 0;
}

int run_script(const std::string& model, const std::string& prefix, int threads,
               const std::string& inputs) {
  at::set_num_threads(threads);
  info();
  std::vector<at::Tensor> in;
  std::stringstream names(inputs);
  std::string name;
  while (std::getline(names, name, ',')) {
    if (!name.empty()) in.push_back(read_npy(name));
  }
  auto t0 = std::chrono::steady_clock::now();
  auto out = fpx_run_script(model, in);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].scalar_type() != at::kFloat)
      throw std::runtime_error("output " + std::to_string(i) + " is not float32");
    write_npy(prefix + std::to_string(i) + ".npy", out[i]);
  }
  std::cout << "{\"op\": \"script\", \"outputs\": " << out.size()
            << ", \"threads\": " << at::get_num_threads() << ", \"ms\": " << ms << "}"
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "info") return info();
    if (cmd == "run" && argc == 3) return run_jobs(argv[2]);
    if (cmd == "script" && (argc == 5 || argc == 6))
      return run_script(argv[2], argv[3], std::stoi(argv[4]), argc == 6 ? argv[5] : "");
    std::cerr << "usage: fpexplore_libtorch info | run JOBFILE | script MODEL.pt OUTPREFIX "
                 "THREADS [IN.npy,...]"
              << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "fpexplore_libtorch: " << e.what() << std::endl;
    return 1;
  }
}
