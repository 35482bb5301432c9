#include "ToPython.h"

namespace nearscape::python {
namespace {

namespace py = pybind11;

template <typename Json> py::object convert(const Json& j) {
  switch (j.type()) {
  case nlohmann::json::value_t::null:
  case nlohmann::json::value_t::discarded:
    return py::none();
  case nlohmann::json::value_t::boolean:
    return py::bool_(j.template get<bool>());
  case nlohmann::json::value_t::number_integer:
    return py::int_(j.template get<std::int64_t>());
  case nlohmann::json::value_t::number_unsigned:
    return py::int_(j.template get<std::uint64_t>());
  case nlohmann::json::value_t::number_float:
    return py::float_(j.template get<double>());
  case nlohmann::json::value_t::string:
    return py::str(j.template get_ref<const std::string&>());
  case nlohmann::json::value_t::array: {
    py::list list;
    for (const auto& item : j)
      list.append(convert(item));
    return std::move(list);
  }
  case nlohmann::json::value_t::object: {
    py::dict dict;
    for (const auto& [key, value] : j.items())
      dict[py::str(key)] = convert(value);
    return std::move(dict);
  }
  case nlohmann::json::value_t::binary:
    break;
  }
  return py::none();
}

} // namespace

py::object toPython(const nlohmann::ordered_json& j) {
  return convert(j);
}
py::object toPython(const nlohmann::json& j) {
  return convert(j);
}

void addFields(py::dict& dict, const nlohmann::ordered_json& fields) {
  for (const auto& [key, value] : fields.items())
    dict[py::str(key)] = convert(value);
}

} // namespace nearscape::python
