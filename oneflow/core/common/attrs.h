// Attrs: the small typed map of an op's attributes (axis lists, flags, scalars, dtypes).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "oneflow/core/common/dtype.h"
#include "oneflow/core/common/error.h"

namespace oneflow {

using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, DType>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> init) : map_(init) {}

  template <typename T>
  const T& get(const std::string& key) const {
    auto it = map_.find(key);
    if (it == map_.end()) throw RuntimeError("Attrs: missing attribute '" + key + "'");
    const T* v = std::get_if<T>(&it->second);
    if (!v) throw RuntimeError("Attrs: attribute '" + key + "' has another type");
    return *v;
  }
  bool has(const std::string& key) const { return map_.count(key) > 0; }
  bool operator==(const Attrs& o) const { return map_ == o.map_; }
  void set(const std::string& key, AttrValue v) { map_[key] = std::move(v); }
  // Every attribute, by name (saving a graph writes them all).
  const std::map<std::string, AttrValue>& items() const { return map_; }

 private:
  std::map<std::string, AttrValue> map_;
};

}  // namespace oneflow
