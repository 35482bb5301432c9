#include "CommonOptions.h"

#include <csignal>
#include <iostream>

namespace nearscape::cli {

void CommonOptions::addTo(CLI::App& command) {
  command.add_flag("--json", json, "Print one JSON object on stdout (results and timings)");
  command.add_option("--backend", backend, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  command.add_option("--threads", threads, "CPU threads (0 = all)")->check(CLI::NonNegativeNumber);
  command.add_option("--seed", seed, "Seed for randomized steps")->capture_default_str();
  command.add_option("--memory-budget", memoryBudget,
                     "Working-memory budget, e.g. 2G (forces tiles and shards beyond it)");
}

Context CommonOptions::context() const {
  Context c;
  c.backend = parseBackend(backend).value_or(Backend::Auto);
  c.threads = threads;
  c.seed = seed;
  if (!memoryBudget.empty())
    c.memoryBudget = parseByteSize(memoryBudget);
  return c;
}

JobControl& commandJob() {
  static JobControl job;
  return job;
}

namespace {
extern "C" void onSignal(int) { commandJob().requestStop(); }
} // namespace

void installCancelHandlers() {
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
}

Metric chooseMetric(const std::string& option, const Dataset& data) {
  if (option.empty())
    return data.metric.value_or(Metric::L2);
  const auto parsed = parseMetric(option);
  if (!parsed)
    throw InvalidArgument("unknown metric '" + option + "' (l2, ip or cos)");
  return *parsed;
}

int runGuarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Cancelled&) {
    std::cerr << "nearscape-cli: cancelled; no output was written\n";
    return kExitFailure;
  } catch (const FormatError& e) {
    std::cerr << "nearscape-cli: bad input: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const InvalidArgument& e) {
    std::cerr << "nearscape-cli: bad input: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const IoError& e) {
    std::cerr << "nearscape-cli: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "nearscape-cli: error: " << e.what() << '\n';
    return kExitFailure;
  }
}

} // namespace nearscape::cli
