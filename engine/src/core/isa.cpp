// Which field kernels run (field_kernels.hpp): chosen once per process from what the CPU
// supports, so that one binary built for a generic x86-64 target is fast on every server.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/field_kernels.hpp"

namespace xlp {

namespace {

const FieldKernels* kernels_of(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return &kScalarKernels;
#if defined(__x86_64__)
    case Isa::kSse: return &kSseKernels;
    case Isa::kAvx2: return &kAvx2Kernels;
    case Isa::kAvx512: return &kAvx512Kernels;
#endif
    default: return nullptr;
  }
}

bool cpu_runs(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
#if defined(__x86_64__)
    case Isa::kSse: return true;  // part of x86-64
    // libgcc's checks include the operating system's support (XCR0) for the registers.
    case Isa::kAvx2: return __builtin_cpu_supports("avx2");
    case Isa::kAvx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
    default: return false;
  }
}

constexpr Isa kAll[] = {Isa::kScalar, Isa::kSse, Isa::kAvx2, Isa::kAvx512};

std::string runnable_names() {
  std::string names;
  for (Isa isa : kAll)
    if (supported_isas() >> int(isa) & 1) names += std::string(names.empty() ? "" : ", ") + kernels_of(isa)->name;
  return names;
}

const FieldKernels* from_environment() {
  const char* value = std::getenv("XLATPERF_ISA");
  if (value && *value) return &kernels_named(value);
  const FieldKernels* best = &kScalarKernels;
  for (Isa isa : kAll)
    if (supported_isas() >> int(isa) & 1) best = kernels_of(isa);
  return best;
}

const FieldKernels* chosen = nullptr;

}  // namespace

uint32_t supported_isas() {
  uint32_t mask = 0;
  for (Isa isa : kAll)
    if (kernels_of(isa) && cpu_runs(isa)) mask |= 1u << int(isa);
  return mask;
}

const FieldKernels& kernels_for(Isa isa) {
  if (!(supported_isas() >> int(isa) & 1))
    throw std::invalid_argument(std::string("instruction set ") + std::to_string(int(isa)) +
                                ": this CPU runs only " + runnable_names());
  return *kernels_of(isa);
}

const FieldKernels& kernels_named(const char* name) {
  for (Isa isa : kAll)
    if (supported_isas() >> int(isa) & 1 && std::string(name) == kernels_of(isa)->name) return *kernels_of(isa);
  throw std::invalid_argument(std::string("XLATPERF_ISA = \"") + name + "\": must be one of " + runnable_names() +
                              " (the instruction sets this CPU runs)");
}

const FieldKernels& field_kernels() {
  if (chosen) return *chosen;
  // Once per process; a bad value throws on every call (the trial that needs it fails).
  static const FieldKernels* const from_env = from_environment();
  return *from_env;
}

const FieldKernels* use_kernels(const FieldKernels* k) {
  const FieldKernels* previous = chosen;
  chosen = k;
  return previous;
}

}  // namespace xlp
