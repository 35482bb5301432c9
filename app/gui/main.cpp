// nearscape: the desktop explorer.
#include "StandardOutput.h"
#include "UiMain.h"
#include "VersionText.h"
#include "nearscape/core/BlasKernels.h"

#include <QGuiApplication>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  nearscape::restartWithMatchingBlasKernels(argv);
  nearscape::app::installCheckedStandardOutput();
  // --help's text is printed by Qt, which then exits: the check of standard output runs at exit.
  std::atexit([] {
    if (!nearscape::app::standardOutputWritten("nearscape"))
      std::_Exit(1);
  });
  // --version before Qt starts: it needs no display, and names the commit and the backends.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "-v") == 0) {
      std::puts(nearscape::app::versionText("nearscape").c_str());
      return 0;
    }
  // --check-display: whether a window can open here, asked before anything is written
  // (nearscape.show): Qt's platform plugin starts, or Qt prints its reason and aborts.
  if (argc == 2 && std::strcmp(argv[1], "--check-display") == 0) {
    QGuiApplication app(argc, argv);
    std::printf("display: %s\n", qPrintable(QGuiApplication::platformName()));
    return 0;
  }
  return nearscape::ui::runGui(argc, argv);
}
