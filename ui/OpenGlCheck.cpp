#include "OpenGlCheck.h"

#include <QGuiApplication>
#include <QOpenGLContext>
#include <QOpenGLWidget>

namespace nearscape::ui {
namespace {

// Set by the probe's message handler: the only public sign of the platform's missing capability
// is the warning QOpenGLWidget's constructor prints (its test is in Qt's private API).
bool g_unsupportedWarned = false;
QtMessageHandler g_previousHandler = nullptr;

void noteUnsupported(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (type == QtWarningMsg && message.contains(QLatin1String("QOpenGLWidget is not supported")))
    g_unsupportedWarned = true; // said in the caller's own words instead
  else if (g_previousHandler)
    g_previousHandler(type, context, message);
}

bool platformRendersOpenGlWidgets() {
  g_unsupportedWarned = false;
  g_previousHandler = qInstallMessageHandler(noteUnsupported);
  {
    QOpenGLWidget probe; // never shown: no window, no context
  }
  qInstallMessageHandler(g_previousHandler);
  return !g_unsupportedWarned;
}

} // namespace

QString missingOpenGl() {
  const QString platform = QGuiApplication::platformName();
  const QString remedy = QStringLiteral(
      "run it on a desktop with OpenGL, or under a virtual display: xvfb-run -a nearscape …");
  if (!platformRendersOpenGlWidgets())
    return QStringLiteral("the map needs OpenGL, which the Qt platform '%1' does not offer to "
                          "widgets (QT_QPA_PLATFORM=%1); %2")
        .arg(platform, remedy);
  QOpenGLContext context;
  if (!context.create())
    return QStringLiteral("the map needs OpenGL, and no OpenGL context could be created on the "
                          "Qt platform '%1' (no OpenGL driver for this display?); %2")
        .arg(platform, remedy);
  return {};
}

} // namespace nearscape::ui
