#pragma once
/// @file BlasKernels.h
/// The host BLAS's kernels matched to the CPU, for programs to call first thing in main().

namespace nearscape {

/// Debian 12's OpenBLAS (0.3.21) picks its kernels from the CPU's reported model. Where that
/// model is one it does not know — a virtual machine's generic "Intel Xeon Processor", a newer
/// CPU — it falls back to older kernels (Prescott's SSE3 for Intel), several times slower than
/// the CPU allows (docs/benchmarks.md, session 15).
/// When the process's OpenBLAS runs kernels other than those it picks for CPUs it knows
/// (Haswell, Zen, SkylakeX, Cooperlake, SapphireRapids) while the CPU has AVX-512 or AVX2 with
/// FMA, and OPENBLAS_CORETYPE is not set, the program starts itself again (execv of
/// /proc/self/exe, the same arguments; not when the dynamic loader was run by name) with
/// OPENBLAS_CORETYPE naming the matching kernels (SkylakeX or Haswell), which OpenBLAS reads
/// only as it loads. Setting OPENBLAS_CORETYPE keeps any choice and skips the restart. Returns
/// when no restart is needed or it fails. Linux only; elsewhere it does nothing.
void restartWithMatchingBlasKernels(char** argv);

/// The kernels the process's OpenBLAS runs ("SkylakeX", "Haswell", "Prescott", …).
const char* blasKernelsName();

} // namespace nearscape
