// A stand-in for a plugin of another build: the right entry points, another interface version.
// tst_plugin points NEARSCAPE_CUDA_PLUGIN at it to see the loader refuse it.
extern "C" __attribute__((visibility("default"))) int nearscape_gpu_plugin_abi() {
  return 0;
}
extern "C" __attribute__((visibility("default"))) void* nearscape_gpu_backend_v1() {
  return nullptr;
}
