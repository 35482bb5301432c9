// A stand-in for a plugin of another build: the right entry points, another interface version —
// NEARSCAPE_TEST_PLUGIN_ABI: 0 (none this program ever had) or the version before this one's,
// whose factory was the single GpuBackend's. tst_plugin points NEARSCAPE_CUDA_PLUGIN at it to
// see the loader refuse it before it asks for a factory.
#include "gpu/Plugin.h"

extern "C" __attribute__((visibility("default"))) int nearscape_gpu_plugin_abi() {
  return NEARSCAPE_TEST_PLUGIN_ABI;
}
extern "C" __attribute__((visibility("default"))) void* nearscape_gpu_backend_v1() {
  return nullptr;
}
