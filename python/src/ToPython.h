#pragma once
// The results' JSON (app/common/ResultJson.h, what nearscape-cli --json prints) as Python values:
// the module's dicts carry the CLI's fields because they are made from the same description.
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

namespace nearscape::python {

/// `j` as Python values: objects as dicts (in the JSON's key order), arrays as lists, numbers
/// as int or float, null as None. Throws nothing beyond Python's memory errors.
pybind11::object toPython(const nlohmann::ordered_json& j);
pybind11::object toPython(const nlohmann::json& j);

/// Adds every field of the JSON object `fields` to `dict`, in order.
void addFields(pybind11::dict& dict, const nlohmann::ordered_json& fields);

} // namespace nearscape::python
