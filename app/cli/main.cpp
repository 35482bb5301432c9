// nearscape-cli: the Nearscape engine without a GUI, for servers and scripts.
#include "Commands.h"
#include "CommonOptions.h"
#include "VersionText.h"

int main(int argc, char** argv) {
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
  nearscape::cli::addCacheCommand(app, exitCode);
  nearscape::cli::addOutliersCommand(app, exitCode);
  nearscape::cli::addCompareCommand(app, exitCode);
  nearscape::cli::addDuplicatesCommand(app, exitCode);
  nearscape::cli::addSelfTestCommand(app, exitCode);
  nearscape::cli::installCancelHandlers();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : nearscape::cli::kExitBadInput;
  }
  return exitCode;
}
