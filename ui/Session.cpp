#include "Session.h"

#include "Export.h"

#include "nearscape/core/Error.h"
#include "nearscape/core/Metric.h"
#include "nearscape/io/AtomicFile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

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

/// The checks of a session's values, beyond JSON's types: a hand-edited or hostile file names
/// what is wrong instead of reaching the window with a value it cannot show.
class Checker {
public:
  explicit Checker(const std::string& file) : m_file(file) {}

  /// Throws FormatError "FILE: "key" MUST" when `ok` is false.
  void require(bool ok, const char* key, const std::string& must) const {
    if (!ok)
      throw FormatError(m_file + ": \"" + key + "\" " + must);
  }

  /// An integer field (JSON would read 2.5 as 2), or `fallback` when absent.
  std::int64_t integer(const nlohmann::json& j, const char* key, std::int64_t fallback) const {
    if (!j.contains(key))
      return fallback;
    require(j[key].is_number_integer(), key, "must be an integer, not " + shortDump(j[key]));
    return j[key].get<std::int64_t>();
  }

  /// A JSON value as the message quotes it (a long one cut short).
  static std::string shortDump(const nlohmann::json& j) {
    std::string text = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    constexpr std::size_t kMax = 60;
    return text.size() <= kMax ? text : text.substr(0, kMax) + "...";
  }

private:
  std::string m_file;
};

bool finite(const std::array<double, 3>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

MapView::Camera cameraFrom(const nlohmann::json& c, const Checker& check) {
  MapView::Camera camera;
  camera.focal = triple(c.at("focal"));
  camera.position = triple(c.at("position"));
  camera.up = triple(c.at("up"));
  camera.scale = c.at("scale").get<double>();
  check.require(finite(camera.focal) && finite(camera.position) && finite(camera.up) &&
                    std::isfinite(camera.scale),
                "camera", "must hold finite numbers");
  check.require(camera.scale > 0, "camera", "must have a positive scale");
  check.require(camera.position != camera.focal, "camera",
                "must look from a position other than its focal point");
  check.require(camera.up != std::array<double, 3>{0, 0, 0}, "camera",
                "must have a non-zero up direction");
  return camera;
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
  return parse(file.readAll(), path);
}

Session Session::parse(const QByteArray& bytes, const QString& path) {
  const std::string name = path.toStdString();
  const Checker check(name);
  Session s;
  try {
    const nlohmann::json j =
        nlohmann::json::parse(bytes.constData(), bytes.constData() + bytes.size());
    if (!j.is_object() || j.value("format", std::string()) != kFormat)
      throw FormatError(name + ": not a Nearscape session (no \"format\": \"" + kFormat + "\")");
    if (!j.contains("version") || j["version"] != kVersion)
      throw FormatError(name + ": session version " +
                        Checker::shortDump(j.value("version", nlohmann::json())) +
                        " is not supported (this Nearscape reads version 1)");
    const std::string data = j.at("data").get<std::string>();
    check.require(!data.empty(), "data", "must name the data file");
    s.data = resolved(QString::fromStdString(data), path);
    if (j.contains("metadata") && !j["metadata"].is_null())
      s.metadata = resolved(QString::fromStdString(j["metadata"].get<std::string>()), path);
    s.contentHash = j.value("content_hash", std::string());
    check.require(s.contentHash.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos,
                  "content_hash", "must be hexadecimal digits");
    // The metric decides every distance: one this Nearscape does not know is refused, not
    // replaced by the data's own (an empty one, from an older session, means the data's).
    const std::string metric = j.value("metric", std::string());
    if (!metric.empty()) {
      const std::optional<Metric> known = parseMetric(metric);
      check.require(known.has_value(), "metric",
                    "must be \"l2\", \"cos\" or \"ip\", not " + Checker::shortDump(metric));
      s.metric = std::string(metricName(*known));
    }
    s.colourBy = QString::fromStdString(j.value("colour_by", std::string("label")));
    const std::string scale = j.value("colour_scale", std::string("auto"));
    const std::optional<ColourScaleKind> kind = parseColourScale(scale);
    check.require(kind.has_value(), "colour_scale",
                  "must be \"auto\", \"linear\", \"log\" or \"quantile\", not " +
                      Checker::shortDump(scale));
    s.colourScale = *kind;
    if (j.contains("search")) {
      const nlohmann::json& search = j["search"];
      check.require(search.is_object(), "search", "must be {\"text\": TEXT, \"regex\": BOOL}");
      s.searchText = QString::fromStdString(search.value("text", std::string()));
      s.searchRegex = search.value("regex", false);
    }
    if (j.contains("title_column") && !j["title_column"].is_null()) {
      check.require(j["title_column"].is_string(), "title_column",
                    "must be a column's name, \"\" (none) or null (picked on its own)");
      s.titleColumn = QString::fromStdString(j["title_column"].get<std::string>());
    }
    if (j.contains("cluster_labels") && !j["cluster_labels"].is_null()) {
      check.require(j["cluster_labels"].is_string(), "cluster_labels",
                    "must be a column's name, \"\" (the default column) or null");
      s.clusterLabels = QString::fromStdString(j["cluster_labels"].get<std::string>());
    }
    for (const std::string& g : j.value("hidden", std::vector<std::string>()))
      s.hidden << QString::fromStdString(g);
    if (j.contains("shown_range") && !j["shown_range"].is_null()) {
      const auto range = j["shown_range"].get<std::vector<double>>();
      check.require(range.size() == 2 && std::isfinite(range[0]) && std::isfinite(range[1]) &&
                        range[0] <= range[1],
                    "shown_range", "must be [from, to] with from ≤ to");
      s.shownRange = std::pair{range[0], range[1]};
    }
    if (j.contains("facets")) {
      const nlohmann::json& brushes = j["facets"];
      check.require(brushes.is_array(), "facets",
                    "must be a list of \"COLUMN=VALUE\" or \"COLUMN=FROM..TO\"");
      for (const nlohmann::json& brush : brushes) {
        check.require(brush.is_string(), "facets",
                      "must list texts, not " + Checker::shortDump(brush));
        try {
          s.facets.push_back(parseFacetBrush(brush.get<std::string>()));
        } catch (const InvalidArgument& e) {
          check.require(false, "facets", std::string("holds a bad filter: ") + e.what());
        }
      }
    }
    if (j.contains("selection")) {
      const nlohmann::json& ids = j["selection"];
      check.require(ids.is_array(), "selection", "must be a list of item ids");
      for (const nlohmann::json& id : ids) {
        check.require(id.is_number_integer() && id.get<std::int64_t>() >= 0, "selection",
                      "must list item ids (integers ≥ 0), not " + Checker::shortDump(id));
        s.selection.push_back(id.get<std::int64_t>());
      }
    }
    s.selected = check.integer(j, "selected", -1);
    check.require(s.selected >= -1, "selected", "must be an item id or -1");
    s.pathTo = check.integer(j, "path_to", -1);
    check.require(s.pathTo >= -1, "path_to", "must be an item id or -1");
    const std::int64_t dim = check.integer(j, "dim", 2);
    check.require(dim == 2 || dim == 3, "dim", "must be 2 or 3");
    s.dim = int(dim);
    if (j.contains("camera") && !j["camera"].is_null())
      s.camera = cameraFrom(j["camera"], check);
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
  j["colour_scale"] = std::string(colourScaleName(colourScale));
  j["search"] = {{"text", searchText.toStdString()}, {"regex", searchRegex}};
  std::vector<std::string> hiddenGroups;
  for (const QString& g : hidden)
    hiddenGroups.push_back(g.toStdString());
  j["hidden"] = hiddenGroups;
  j["shown_range"] = shownRange ? nlohmann::ordered_json({shownRange->first, shownRange->second})
                                : nlohmann::ordered_json(nullptr);
  std::vector<std::string> brushes;
  for (const FacetBrush& brush : facets)
    brushes.push_back(facetBrushText(brush));
  j["facets"] = brushes;
  j["selection"] = selection;
  j["selected"] = selected;
  j["path_to"] = pathTo;
  j["dim"] = dim;
  j["title_column"] = titleColumn ? nlohmann::ordered_json(titleColumn->toStdString())
                                  : nlohmann::ordered_json(nullptr);
  j["cluster_labels"] = clusterLabels ? nlohmann::ordered_json(clusterLabels->toStdString())
                                      : nlohmann::ordered_json(nullptr);
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
