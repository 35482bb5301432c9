// nearscape-bench: named suites; each prints a table and can write JSON. Engine only, no Qt.
#include "BridgeSuite.h"
#include "DevicesSuite.h"
#include "DuplicatesSuite.h"
#include "ExactSuite.h"
#include "ExploreSuite.h"
#include "IndexSuite.h"
#include "LayoutSuite.h"

#include "nearscape/Nearscape.h"

int main(int argc, char** argv) {
  nearscape::restartWithMatchingBlasKernels(argv);
  CLI::App app{"Nearscape benchmarks: our engine against a peer measured in the same run",
               "nearscape-bench"};
  app.require_subcommand(1);
  int exitCode = 0;
  nearscape::bench::addExactSuite(app, exitCode);
  nearscape::bench::addTopkSuite(app, exitCode);
  nearscape::bench::addLayoutSuite(app, exitCode);
  nearscape::bench::addExploreSuite(app, exitCode);
  nearscape::bench::addMstSuite(app, exitCode);
  nearscape::bench::addNnDescentSuite(app, exitCode);
  nearscape::bench::addIndexSuite(app, exitCode);
  nearscape::bench::addDuplicatesSuite(app, exitCode);
  nearscape::bench::addBridgeSuite(app, exitCode);
  nearscape::bench::addDevicesSuite(app, exitCode);
  CLI11_PARSE(app, argc, argv);
  return exitCode;
}
