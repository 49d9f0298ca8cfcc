// oneflow._oneflow_internal._data: OFRecord reading and decoding (core/data/ofrecord.h) for
// the data-pipeline modules of oneflow.nn (python/oneflow/nn/modules/dataset.py). A batch of
// records travels as a list of bytes objects; decoded values come back as CPU tensors.
#include <cstring>

#include "oneflow/api/python/common.h"
#include "oneflow/core/data/ofrecord.h"

namespace oneflow::python {

namespace {

std::vector<std::string> strings_of(const py::list& records) {
  std::vector<std::string> out;
  out.reserve(records.size());
  for (py::handle r : records) out.push_back(r.cast<std::string>());
  return out;
}

py::list bytes_list(const std::vector<std::string>& v) {
  py::list out;
  for (const std::string& s : v) out.append(py::bytes(s));
  return out;
}

}  // namespace

void init_data(py::module_& m) {
  py::module_ d = m.def_submodule("_data", "OFRecord files and their decoders");
  py::class_<data::OFRecordReader>(d, "OFRecordReader")
      .def(py::init([](std::vector<std::string> files, int64_t batch_size, bool shuffle,
                       int64_t shuffle_buffer, bool shuffle_after_epoch, uint64_t seed) {
             data::ReaderOptions o;
             o.files = std::move(files);
             o.batch_size = batch_size;
             o.shuffle = shuffle;
             o.shuffle_buffer = shuffle_buffer;
             o.shuffle_after_epoch = shuffle_after_epoch;
             o.seed = seed;
             ReleaseGil nogil;
             return std::make_unique<data::OFRecordReader>(std::move(o));
           }),
           py::arg("files"), py::arg("batch_size"), py::arg("shuffle"), py::arg("shuffle_buffer"),
           py::arg("shuffle_after_epoch"), py::arg("seed"))
      .def("next_batch",
           [](data::OFRecordReader& r) {
             std::vector<std::string> batch;
             {
               ReleaseGil nogil;
               batch = r.next_batch();
             }
             return bytes_list(batch);
           })
      .def_property_readonly("epoch", &data::OFRecordReader::epoch);

  d.def("decode_raw",
        [](const py::list& records, const std::string& name, py::handle dtype,
           std::vector<int64_t> shape, bool truncate, bool auto_zero_padding, bool varying_length) {
          const DType dt = dtype_from_py(dtype, "OFRecordRawDecoder");
          std::vector<std::string> recs = strings_of(records);
          data::RawDecodeOptions o;
          o.count = numel(shape);
          o.truncate = truncate;
          o.auto_zero_padding = auto_zero_padding;
          o.varying_length = varying_length;
          Shape out_shape = {static_cast<int64_t>(recs.size())};
          out_shape.insert(out_shape.end(), shape.begin(), shape.end());
          Tensor out = empty_tensor(out_shape, dt, Device{});
          ReleaseGil nogil;
          data::decode_raw(recs, name, dt, o, out->data());
          return out;
        });
  d.def("decode_bytes", [](const py::list& records, const std::string& name) {
    std::vector<std::string> recs = strings_of(records), out;
    {
      ReleaseGil nogil;
      out = data::decode_bytes(recs, name);
    }
    return bytes_list(out);
  });
  d.def("decode_image", [](const std::string& bytes, const std::string& color_space) {
    data::Image img;
    {
      ReleaseGil nogil;
      img = data::decode_image(bytes, color_space);
    }
    Tensor out = empty_tensor({img.height, img.width, img.channels}, DType::kUInt8, Device{});
    if (!img.pixels.empty()) std::memcpy(out->data(), img.pixels.data(), img.pixels.size());
    return out;
  });
  d.def("encode_jpeg",
        [](py::array_t<uint8_t, py::array::c_style | py::array::forcecast> pixels, int quality) {
          if (pixels.ndim() != 3)
            throw_error<ValueError>("image encode", "expected an HxWxC uint8 array");
          data::Image img;
          img.height = pixels.shape(0);
          img.width = pixels.shape(1);
          img.channels = pixels.shape(2);
          img.pixels.assign(pixels.data(), pixels.data() + pixels.size());
          return py::bytes(data::encode_jpeg(img, quality));
        });
  d.def("encode_record", [](const py::list& features) {
    std::vector<data::FeatureValue> fvs;
    for (py::handle f : features) {
      auto t = f.cast<py::tuple>();
      data::FeatureValue fv;
      fv.name = t[0].cast<std::string>();
      fv.kind = t[1].cast<std::string>();
      for (py::handle v : t[2]) {
        if (fv.kind == "bytes")
          fv.bytes.push_back(v.cast<std::string>());
        else if (fv.kind == "int32" || fv.kind == "int64")
          fv.integers.push_back(v.cast<int64_t>());
        else
          fv.numbers.push_back(v.cast<double>());
      }
      fvs.push_back(std::move(fv));
    }
    return py::bytes(data::encode_record(fvs));
  });
  d.def("image_codecs_available", &data::image_codecs_available);
}

}  // namespace oneflow::python
