#include "UiMain.h"

#include "CommandLine.h"
#include "MainWindow.h"
#include "OpenGlCheck.h"

#include <QApplication>
#include <QSurfaceFormat>

#include <cstdio>
#include <optional>
#include <variant>

namespace nearscape::ui {

void setDefaultSurfaceFormat() {
  QSurfaceFormat format;
  format.setRenderableType(QSurfaceFormat::OpenGL);
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setSwapBehavior(QSurfaceFormat::DoubleBuffer);
  format.setRedBufferSize(8);
  format.setGreenBufferSize(8);
  format.setBlueBufferSize(8);
  format.setAlphaBufferSize(8);
  format.setDepthBufferSize(24);
  format.setStencilBufferSize(0);
  format.setSamples(0);
  QSurfaceFormat::setDefaultFormat(format);
}

int runGui(int argc, char** argv) {
  const QString sessionFile = QString::fromStdString(takeSessionArgument(argc, argv));
  // Help and version need no window: without this, a terminal with no display (ssh, a server)
  // would abort in QApplication before the text is printed.
  const bool windowless = needsNoDisplay(argc, argv);
  if (windowless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  if (const QString missing = windowless ? QString() : missingOpenGl(); !missing.isEmpty()) {
    std::fprintf(stderr, "nearscape: %s\n", qPrintable(missing)); // the map would crash
    return 1;
  }
  QApplication::setOrganizationName(QStringLiteral("Nearscape")); // QSettings: ~/.config/Nearscape/
  QApplication::setApplicationName(QStringLiteral("Nearscape"));
  QApplication::setApplicationVersion(QString::fromLatin1(engineVersion()));

  const auto parsed = parseCommandLine(app, sessionFile);
  if (const int* status = std::get_if<int>(&parsed))
    return *status; // wrong, or answered without a window (--sweep-plot)
  const CommandLine& line = std::get<CommandLine>(parsed);
  MainWindow window(line.context);
  if (const std::optional<int> refused = applyCommandLine(line, window))
    return *refused;
  return app.exec();
}

} // namespace nearscape::ui
