#include "Session.h"

#include "Export.h"

#include "nearscape/core/Error.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <nlohmann/json.hpp>

namespace nearscape::ui {
namespace {

constexpr const char* kFormat = "nearscape-session";
constexpr int kVersion = 1;

QString resolved(const QString& path, const QString& sessionFile) {
  if (path.isEmpty() || QFileInfo(path).isAbsolute())
    return path;
  return QFileInfo(sessionFile).dir().filePath(path);
}

std::array<double, 3> triple(const nlohmann::json& j) {
  const std::vector<double> v = j.get<std::vector<double>>();
  if (v.size() != 3)
    throw std::invalid_argument("expected three numbers");
  return {v[0], v[1], v[2]};
}

} // namespace

Session Session::read(const QString& path) {
  const std::string name = path.toStdString();
  QFile file(path);
  if (!QFileInfo(path).isFile())
    throw IoError(name + ": not a regular file");
  if (!file.open(QIODevice::ReadOnly))
    throw IoError(name + ": " + file.errorString().toStdString());
  constexpr qint64 kMaxBytes = 64 << 20; // a selection of millions of ids still fits
  if (file.size() > kMaxBytes)
    throw FormatError(name + ": larger than 64 MB: not a session file");
  const QByteArray bytes = file.readAll();
  Session s;
  try {
    const nlohmann::json j =
        nlohmann::json::parse(bytes.constData(), bytes.constData() + bytes.size());
    if (!j.is_object() || j.value("format", std::string()) != kFormat)
      throw FormatError(name + ": not a Nearscape session (no \"format\": \"" + kFormat + "\")");
    if (j.value("version", 0) != kVersion)
      throw FormatError(name + ": session version " + j.value("version", nlohmann::json()).dump() +
                        " is not supported (this Nearscape reads version 1)");
    s.data = resolved(QString::fromStdString(j.at("data").get<std::string>()), path);
    if (j.contains("metadata") && !j["metadata"].is_null())
      s.metadata = resolved(QString::fromStdString(j["metadata"].get<std::string>()), path);
    s.contentHash = j.value("content_hash", std::string());
    s.metric = j.value("metric", std::string());
    s.colourBy = QString::fromStdString(j.value("colour_by", std::string("label")));
    if (j.contains("search")) {
      s.searchText = QString::fromStdString(j["search"].value("text", std::string()));
      s.searchRegex = j["search"].value("regex", false);
    }
    for (const std::string& g : j.value("hidden", std::vector<std::string>()))
      s.hidden << QString::fromStdString(g);
    if (j.contains("shown_range") && !j["shown_range"].is_null()) {
      const auto range = j["shown_range"].get<std::vector<double>>();
      if (range.size() != 2 || !(range[0] <= range[1]))
        throw FormatError(name + ": \"shown_range\" must be [from, to] with from ≤ to");
      s.shownRange = std::pair{range[0], range[1]};
    }
    s.selection = j.value("selection", std::vector<std::int64_t>());
    s.selected = j.value("selected", std::int64_t(-1));
    s.pathTo = j.value("path_to", std::int64_t(-1));
    s.dim = j.value("dim", 2);
    if (s.dim != 2 && s.dim != 3)
      throw FormatError(name + ": \"dim\" must be 2 or 3");
    if (j.contains("camera") && !j["camera"].is_null()) {
      const nlohmann::json& c = j["camera"];
      MapView::Camera camera;
      camera.focal = triple(c.at("focal"));
      camera.position = triple(c.at("position"));
      camera.up = triple(c.at("up"));
      camera.scale = c.at("scale").get<double>();
      s.camera = camera;
    }
    s.windowState =
        QByteArray::fromBase64(QByteArray::fromStdString(j.value("window", std::string())));
  } catch (const FormatError&) {
    throw;
  } catch (const std::exception& e) { // JSON syntax and type errors, named
    throw FormatError(name + ": not a valid session: " + e.what());
  }
  return s;
}

void Session::write(const QString& path, const QStringList& alsoInputs) const {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["data"] = data.toStdString();
  j["metadata"] = metadata.isEmpty() ? nlohmann::ordered_json(nullptr)
                                     : nlohmann::ordered_json(metadata.toStdString());
  j["content_hash"] = contentHash;
  j["metric"] = metric;
  j["colour_by"] = colourBy.toStdString();
  j["search"] = {{"text", searchText.toStdString()}, {"regex", searchRegex}};
  std::vector<std::string> hiddenGroups;
  for (const QString& g : hidden)
    hiddenGroups.push_back(g.toStdString());
  j["hidden"] = hiddenGroups;
  j["shown_range"] = shownRange ? nlohmann::ordered_json({shownRange->first, shownRange->second})
                                : nlohmann::ordered_json(nullptr);
  j["selection"] = selection;
  j["selected"] = selected;
  j["path_to"] = pathTo;
  j["dim"] = dim;
  if (camera)
    j["camera"] = {{"focal", camera->focal},
                   {"position", camera->position},
                   {"up", camera->up},
                   {"scale", camera->scale}};
  else
    j["camera"] = nullptr;
  j["window"] = windowState.toBase64().toStdString();
  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  QStringList inputs = inputsOf(data) + alsoInputs;
  if (!metadata.isEmpty())
    inputs << metadata;
  writeOutput(path, inputs, QByteArray::fromStdString(text));
}

} // namespace nearscape::ui
