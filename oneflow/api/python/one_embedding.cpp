// oneflow._oneflow_internal._one_embedding: the key-value stores behind oneflow.one_embedding
// (python/oneflow/one_embedding.py parses the options) and the ops that use them. Host-side
// reads and writes of a store first wait for the queued kernels, which are its only other users.
#include "oneflow/api/python/common.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/embedding/embedding_store.h"
#include "oneflow/core/ops/one_embedding_primitives.h"

namespace oneflow::python {

namespace {

using embedding::Initializer;

Initializer initializer_from_py(const py::dict& d) {
  const std::string type = py::str(d["type"]);
  Initializer init;
  auto num = [&](const char* k) { return d[k].cast<double>(); };
  if (type == "uniform") {
    init.kind = Initializer::Kind::kUniform;
    init.a = num("low");
    init.b = num("high");
  } else if (type == "normal") {
    init.kind = Initializer::Kind::kNormal;
    init.a = num("mean");
    init.b = num("std");
  } else if (type == "constant") {
    init.kind = Initializer::Kind::kConstant;
    init.a = num("value");
  } else if (type == "trunc_normal") {
    init.kind = Initializer::Kind::kTruncNormal;
    init.a = num("mean");
    init.b = num("std");
    init.low = num("a");
    init.high = num("b");
  } else {
    throw_error<ValueError>("one_embedding", "unknown initializer type '", type, "'");
  }
  return init;
}

std::shared_ptr<embedding::Store> synced(int64_t handle) {
  auto store = embedding::find_store(handle);
  ReleaseGil nogil;
  eager::synchronize();
  return store;
}

}  // namespace

void init_one_embedding(py::module_& m) {
  py::module_ e = m.def_submodule("_one_embedding", "key-value stores of oneflow.one_embedding");
  // tables: per table, per column, an initializer dict.
  e.def(
      "create_store",
      [](int64_t embedding_dim, int64_t storage_dim, std::vector<int64_t> column_dims,
         const py::list& tables, uint64_t seed, int64_t capacity) {
        embedding::StoreOptions o;
        o.embedding_dim = embedding_dim;
        o.line_size = storage_dim;
        o.column_dims = std::move(column_dims);
        for (py::handle t : tables) {
          std::vector<Initializer> columns;
          for (py::handle c : t) columns.push_back(initializer_from_py(c.cast<py::dict>()));
          o.tables.push_back(std::move(columns));
        }
        o.seed = seed;
        o.capacity = capacity;
        return embedding::register_store(std::make_shared<embedding::Store>(std::move(o)));
      },
      py::arg("embedding_dim"), py::arg("storage_dim"), py::arg("column_dims"), py::arg("tables"),
      py::arg("seed"), py::arg("capacity"));
  // Waits for the queued kernels (which find the store by its handle) without raising their
  // errors: those stay pending for the next synchronisation point.
  e.def("release_store", [](int64_t h) {
    {
      ReleaseGil nogil;
      eager::drain();
    }
    embedding::release_store(h);
  });
  e.def("clone", [](int64_t h) { return embedding::register_store(synced(h)->clone()); });
  // Host-side unscaling of the pending gradients (GradScaler); returns whether all were finite.
  e.def("scale_grad", [](int64_t h, double factor) { return synced(h)->scale_grad(factor); });
  e.def("size", [](int64_t h) { return synced(h)->size(); });
  e.def("pending", [](int64_t h) { return synced(h)->pending(); });
  e.def("save", [](int64_t h, const std::string& dir) {
    auto s = synced(h);
    ReleaseGil nogil;
    s->save(dir);
  });
  e.def("load", [](int64_t h, const std::string& dir) {
    auto s = synced(h);
    ReleaseGil nogil;
    s->load(dir);
  });
  e.def("clear", [](int64_t h) { synced(h)->clear(); });
  e.def("keys", [](int64_t h) {
    std::vector<int64_t> k = synced(h)->keys();
    py::array_t<int64_t> out(static_cast<py::ssize_t>(k.size()));
    std::copy(k.begin(), k.end(), out.mutable_data());
    return out;
  });
  e.def("read_rows",
        [](int64_t h, py::array_t<int64_t, py::array::c_style | py::array::forcecast> keys) {
          auto s = synced(h);
          const int64_t n = keys.size(), line = s->options().line_size;
          py::array_t<float> rows({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(line)});
          s->read_rows(keys.data(), n, rows.mutable_data());
          return rows;
        });
  e.def("write_rows",
        [](int64_t h, py::array_t<int64_t, py::array::c_style | py::array::forcecast> keys,
           py::array_t<float, py::array::c_style | py::array::forcecast> rows) {
          auto s = synced(h);
          const int64_t n = keys.size(), line = s->options().line_size;
          if (keys.ndim() != 1 || rows.ndim() != 2 || rows.shape(0) != n || rows.shape(1) != line)
            throw_error<ValueError>("one_embedding",
                                    "expected keys of shape (n,) and values of "
                                    "shape (n, ",
                                    line, ")");
          s->write_rows(keys.data(), n, rows.data());
        });
  e.def(
      "lookup",
      [](const Tensor& shadow, const Tensor& ids, std::optional<Tensor> table_ids, int64_t h,
         std::optional<int64_t> padding_idx) {
        ReleaseGil nogil;
        return functional::one_embedding_lookup(shadow, ids, table_ids.value_or(nullptr), h,
                                                padding_idx);
      },
      py::arg("shadow"), py::arg("ids"), py::arg("table_ids"), py::arg("store"),
      py::arg("padding_idx"));
  // hyper: the rule's constants by name (floats and bools), as the kernel's attrs.
  e.def("update", [](const Tensor& shadow, const Tensor& scalars, int64_t h,
                     const std::string& kind, const py::dict& hyper) {
    Attrs attrs{{"store", h}, {"kind", kind}};
    for (auto item : hyper) {
      const std::string k = py::str(item.first);
      if (py::isinstance<py::bool_>(item.second))
        attrs.set(k, item.second.cast<bool>());
      else
        attrs.set(k, item.second.cast<double>());
    }
    ReleaseGil nogil;
    functional::one_embedding_update(shadow, scalars, attrs);
  });
}

}  // namespace oneflow::python
