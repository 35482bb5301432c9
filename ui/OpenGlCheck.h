#pragma once
// Whether this process can draw the map: the map view is a QOpenGLWidget, which needs a Qt
// platform that renders widgets through OpenGL (xcb, wayland…) and an OpenGL context on it.

#include <QString>

namespace nearscape::ui {

/// Empty when the running QGuiApplication's platform supports QOpenGLWidget and an OpenGL
/// context can be created; else what is missing and how to get it, as one sentence for the user.
QString missingOpenGl();

} // namespace nearscape::ui
