#include "BenchUtil.h"

#include "nearscape/io/AtomicFile.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>

namespace nearscape::bench {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void logLevelFromEnvironment(Context& context) {
  if (const char* level = std::getenv("NEARSCAPE_LOG"))
    context.logLevel = parseLogLevel(level).value_or(context.logLevel);
}

nlohmann::json runPeer(const std::string& command) {
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    throw Error("cannot start peer: " + command);
  std::string output, last;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), int(buffer.size()), pipe)) {
    output += buffer.data();
    std::string line = buffer.data();
    if (!line.empty() && line.back() == '\n')
      line.pop_back();
    if (!line.empty())
      last = line;
  }
  const int status = ::pclose(pipe);
  if (status != 0)
    throw Error("peer failed (" + command + "):\n" + output);
  try {
    return nlohmann::json::parse(last);
  } catch (const std::exception&) {
    throw Error("peer printed no JSON (" + command + "):\n" + output);
  }
}

std::string writeTemporaryNpy(const MatrixView<float>& m, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "nearscape-bench";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  writeNpy(path, m);
  return path.string();
}

void printTable(const std::string& title, const std::vector<Row>& rows) {
  std::cout << "\n" << title << "\n";
  std::cout << std::left << std::setw(44) << "work" << std::right << std::setw(12) << "ours (s)"
            << std::setw(16) << "peer" << std::setw(12) << "peer (s)" << std::setw(10) << "ratio"
            << "  note\n";
  for (const Row& r : rows) {
    std::cout << std::left << std::setw(44) << r.work << std::right << std::setw(12)
              << std::setprecision(4) << r.ours << std::setw(16) << r.peer << std::setw(12);
    if (r.theirs > 0)
      std::cout << r.theirs << std::setw(10) << std::setprecision(3) << r.ours / r.theirs;
    else
      std::cout << "-" << std::setw(10) << "-";
    std::cout << "  " << r.note << "\n";
  }
}

void writeJsonOutput(const std::string& path, const nlohmann::json& j,
                     const std::vector<std::string>& inputs) {
  OutputSet outputs;
  for (const std::string& input : inputs)
    outputs.addInput(input);
  outputs.addOutput(path);
  const std::string text = j.dump(2) + '\n';
  writeFileAtomically(path, [&](std::FILE* f) {
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size())
      throw IoError(path + ": write failed");
  });
  outputs.commit();
}

} // namespace nearscape::bench
