// nearscape-cli: the Nearscape engine without a GUI, for servers and scripts.
#include "Commands.h"
#include "CommonOptions.h"
#include "Ranks.h"

#include "StandardOutput.h"
#include "VersionText.h"
#include "nearscape/core/BlasKernels.h"
#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
  // Before anything, MPI's start included: a restart must find the process as it began.
  nearscape::restartWithMatchingBlasKernels(argv);
  nearscape::app::installCheckedStandardOutput();
  // Under mpirun: this process is one rank of the job (knn, layout and path build the graph
  // together; rank 0 alone writes and prints).
  std::unique_ptr<nearscape::Ranks> ranks;
  try {
    ranks = nearscape::cli::joinRanks(argc, argv);
  } catch (const nearscape::Error& e) {
    std::cerr << "nearscape-cli: " << e.what() << '\n';
    return nearscape::cli::kExitFailure;
  }
  nearscape::cli::setCommandRanks(ranks.get());
  if (ranks && ranks->size() > 1) { // the other commands would each do all the work, N times
    for (int a = 1; a < argc; ++a) {
      const std::string_view word = argv[a];
      if (word.starts_with("-"))
        continue;
      if (word != "knn" && word != "layout" && word != "path") {
        std::cerr << "nearscape-cli: under mpirun only knn, layout and path run (" << word
                  << " runs as one process)\n";
        return nearscape::cli::kExitBadInput;
      }
      break;
    }
  }
  CLI::App app{"Nearscape: kNN graphs, ANN indexes, maps and min-max paths for embeddings",
               "nearscape-cli"};
  // A callback: the backends are looked for only when --version is asked.
  app.set_version_flag("--version", [] { return nearscape::app::versionText("nearscape-cli"); });
  app.require_subcommand(1);
  int exitCode = nearscape::cli::kExitOk;
  nearscape::cli::addInfoCommand(app, exitCode);
  nearscape::cli::addKnnCommand(app, exitCode);
  nearscape::cli::addPathCommand(app, exitCode);
  nearscape::cli::addLayoutCommand(app, exitCode);
  nearscape::cli::addSweepCommand(app, exitCode);
  nearscape::cli::addFindCommand(app, exitCode);
  nearscape::cli::addFacetsCommand(app, exitCode);
  nearscape::cli::addCacheCommand(app, exitCode);
  nearscape::cli::addOutliersCommand(app, exitCode);
  nearscape::cli::addNeighboursCommand(app, exitCode);
  nearscape::cli::addCompareCommand(app, exitCode);
  nearscape::cli::addDuplicatesCommand(app, exitCode);
  nearscape::cli::addLabelsCommand(app, exitCode);
  nearscape::cli::addSelfTestCommand(app, exitCode);
  nearscape::cli::installCancelHandlers();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e); // --help's text, or the error
    exitCode = rc == 0 ? nearscape::cli::kExitOk : nearscape::cli::kExitBadInput;
  }
  // What was printed may not have reached a full disk: an exit 0 would hide the loss.
  return nearscape::app::exitCheckingStandardOutput(exitCode, "nearscape-cli");
}
