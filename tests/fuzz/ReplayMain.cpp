// The replay program of a sanitizer build with tests (g++ or clang, no libFuzzer): every fuzz
// target linked in, registered by name (FuzzCommon.h). ctest runs
//   fuzz_replay TARGET PATH...
// over tests/fuzz/regressions/TARGET/: each file (or each file of a folder) goes once through
// the target, as libFuzzer would run it. A crash or sanitizer report fails the test.
#include "FuzzCommon.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <vector>

namespace nearscape::fuzz {
namespace {
std::map<std::string, TargetFunction>& targets() {
  static std::map<std::string, TargetFunction> all;
  return all;
}
} // namespace

bool registerTarget(const char* name, TargetFunction function) {
  targets()[name] = function;
  return true;
}

} // namespace nearscape::fuzz

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  auto& all = nearscape::fuzz::targets();
  if (argc < 2 || !all.count(argv[1])) {
    std::cerr << "usage: fuzz_replay TARGET PATH...\ntargets:";
    for (const auto& [name, f] : all)
      std::cerr << ' ' << name;
    std::cerr << '\n';
    return 2;
  }
  const auto target = all[argv[1]];
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const auto& entry : fs::directory_iterator(argv[i]))
        if (entry.is_regular_file())
          files.push_back(entry.path());
    } else {
      files.push_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << file << ": cannot read\n";
      return 2;
    }
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    std::cout << "replaying " << file.filename().string() << " (" << bytes.size() << " bytes)"
              << std::endl;
    target(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << files.size() << " inputs replayed through " << argv[1] << ", none failed\n";
  return 0;
}
