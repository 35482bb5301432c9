#include "Preferences.h"

#include "nearscape/gpu/Devices.h"

#include <QSettings>

#include <algorithm>

namespace nearscape::ui {

Preferences Preferences::load() {
  const QSettings settings;
  Preferences p;
  p.shownNeighbours =
      std::clamp(settings.value("explore/shownNeighbours", p.shownNeighbours).toInt(), 1, 1000);
  p.graphK = std::clamp(settings.value("explore/graphK", p.graphK).toInt(), 2, 200);
  p.graphMethod =
      parseGraphMethod(settings.value("explore/graphMethod", "auto").toString().toStdString())
          .value_or(GraphMethod::Auto);
  p.backend = parseBackend(settings.value("engine/backend", "auto").toString().toStdString())
                  .value_or(Backend::Auto);
  p.devices = settings.value("engine/devices", QString()).toString().trimmed();
  p.cacheGigabytes =
      std::clamp(settings.value("cache/gigabytes", p.cacheGigabytes).toDouble(), 0.0, 100000.0);
  return p;
}

void Preferences::save() const {
  QSettings settings;
  settings.setValue("explore/shownNeighbours", shownNeighbours);
  settings.setValue("explore/graphK", graphK);
  settings.setValue("explore/graphMethod",
                    QString::fromUtf8(graphMethodName(graphMethod).data(),
                                      qsizetype(graphMethodName(graphMethod).size())));
  settings.setValue("engine/backend", QString::fromUtf8(backendName(backend).data(),
                                                        qsizetype(backendName(backend).size())));
  settings.setValue("engine/devices", devices);
  settings.setValue("cache/gigabytes", cacheGigabytes);
}

void applyDevices(Context& context, const QString& devices) {
  context.devices.clear();
  context.device = 0;
  if (devices.trimmed().isEmpty() || context.backend == Backend::Cpu)
    return;
  context.devices = parseDevices(devices.trimmed().toStdString());
  if (!context.devices.empty())
    context.device = context.devices.front();
}

} // namespace nearscape::ui
