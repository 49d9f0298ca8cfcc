// OFRecord reading and decoding (ofrecord.h).
#include "oneflow/core/data/ofrecord.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <type_traits>

#include "oneflow/core/common/error.h"
#include "oneflow/core/common/half.h"
#include "oneflow/core/data/ofrecord.pb.h"

namespace oneflow::data {

namespace {

constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 31;

record::OFRecord parse(const std::string& bytes, const char* op, size_t index) {
  record::OFRecord rec;
  if (!rec.ParseFromString(bytes))
    throw_error<RuntimeError>(op, "record ", index, " of the batch is not a valid OFRecord");
  return rec;
}

const record::Feature& feature_of(const record::OFRecord& rec, const std::string& name,
                                  const char* op, size_t index) {
  auto it = rec.feature().find(name);
  if (it == rec.feature().end()) {
    std::vector<std::string> names;
    for (const auto& kv : rec.feature()) names.push_back(kv.first);
    std::sort(names.begin(), names.end());
    std::string has;
    for (const auto& n : names) has += (has.empty() ? "" : ", ") + n;
    throw_error<RuntimeError>(op, "record ", index, " has no feature '", name, "' (it has: ", has,
                              ")");
  }
  return it->second;
}

// A C cast, except that floating values outside an integer type's range saturate and NaN
// gives 0 (a plain cast is undefined there).
template <typename T, typename Src>
T cast_value(Src v) {
  if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<T>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<Src>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<Src>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

template <typename Src>
void convert(const Src* src, int64_t n, DType dtype, void* out, int64_t offset) {
  visit_dtype(dtype, [&]<typename T>() {
    T* dst = static_cast<T*>(out) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = cast_value<T>(src[i]);
  });
}

}  // namespace

OFRecordReader::OFRecordReader(ReaderOptions options)
    : options_(std::move(options)), rng_(options_.seed) {
  constexpr const char* op = "OFRecordReader";
  if (options_.files.empty()) throw_error<ValueError>(op, "expected at least one part file");
  if (options_.batch_size <= 0)
    throw_error<ValueError>(op, "expected a positive batch_size, got ", options_.batch_size);
  if (options_.shuffle && options_.shuffle_buffer <= 0)
    throw_error<ValueError>(op, "expected a positive shuffle_buffer_size, got ",
                            options_.shuffle_buffer);
  for (const std::string& f : options_.files) {
    std::ifstream probe(f, std::ios::binary);
    if (!probe) throw_error<RuntimeError>(op, "cannot open the part file ", f);
  }
  order_.resize(options_.files.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;  // the first epoch in file order
  open_next_file();
}

void OFRecordReader::open_next_file() {
  file_.close();
  if (file_pos_ == order_.size()) {
    if (records_this_epoch_ == 0)
      throw_error<RuntimeError>("OFRecordReader", "the part files hold no records");
    ++epoch_;
    records_this_epoch_ = 0;
    file_pos_ = 0;
    if (options_.shuffle_after_epoch) std::shuffle(order_.begin(), order_.end(), rng_);
  }
  file_name_ = options_.files[order_[file_pos_++]];
  file_.clear();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file_name_, ec))
    throw_error<RuntimeError>("OFRecordReader", "the part file ", file_name_,
                              " is not a regular file");
  file_.open(file_name_, std::ios::binary);
  if (!file_) throw_error<RuntimeError>("OFRecordReader", "cannot open the part file ", file_name_);
  file_size_ = static_cast<std::streamoff>(std::filesystem::file_size(file_name_, ec));
}

bool OFRecordReader::read_from_file(std::string* out) {
  for (;;) {
    unsigned char len[8];
    file_.read(reinterpret_cast<char*>(len), 8);
    const std::streamsize got = file_.gcount();
    if (got == 0 && file_.eof()) {
      open_next_file();
      continue;
    }
    if (got != 8)
      throw_error<RuntimeError>("OFRecordReader", file_name_,
                                " ends inside a record's length (truncated file?)");
    uint64_t size = 0;
    for (int i = 7; i >= 0; --i) size = (size << 8) | len[i];
    const std::streamoff here = file_.tellg();
    if (size > kMaxRecordBytes || (here >= 0 && size > static_cast<uint64_t>(file_size_ - here)))
      throw_error<RuntimeError>("OFRecordReader", file_name_, " has a record of ", size,
                                " bytes where ", here >= 0 ? file_size_ - here : 0,
                                " remain (truncated file, or not an OFRecord file?)");
    out->resize(size);
    file_.read(out->data(), static_cast<std::streamsize>(size));
    if (static_cast<uint64_t>(file_.gcount()) != size)
      throw_error<RuntimeError>("OFRecordReader", file_name_, " ends inside a record of ", size,
                                " bytes (truncated file?)");
    ++records_this_epoch_;
    return true;
  }
}

std::string OFRecordReader::next_record() {
  std::string rec;
  if (!options_.shuffle) {
    read_from_file(&rec);
    return rec;
  }
  while (static_cast<int64_t>(buffer_.size()) < options_.shuffle_buffer) {
    read_from_file(&rec);
    buffer_.push_back(std::move(rec));
  }
  std::uniform_int_distribution<size_t> pick(0, buffer_.size() - 1);
  std::swap(buffer_[pick(rng_)], buffer_.back());
  rec = std::move(buffer_.back());
  buffer_.pop_back();
  return rec;
}

std::vector<std::string> OFRecordReader::next_batch() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> batch;
  batch.reserve(options_.batch_size);
  for (int64_t i = 0; i < options_.batch_size; ++i) batch.push_back(next_record());
  return batch;
}

void decode_raw(const std::vector<std::string>& records, const std::string& name, DType dtype,
                const RawDecodeOptions& o, void* out) {
  constexpr const char* op = "OFRecordRawDecoder";
  switch (dtype) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kFloat32:
    case DType::kFloat64:
      break;
    default:
      throw_error<TypeError>(op,
                             "expected dtype int8, uint8, int32, int64, float32 or float64, "
                             "got ",
                             dtype_name(dtype));
  }
  std::memset(out, 0, records.size() * o.count * itemsize(dtype));
  for (size_t r = 0; r < records.size(); ++r) {
    const record::OFRecord rec = parse(records[r], op, r);
    const record::Feature& f = feature_of(rec, name, op, r);
    int64_t n = 0;
    switch (f.kind_case()) {
      case record::Feature::kBytesList:
        if (f.bytes_list().value_size() != 1)
          throw_error<RuntimeError>(op, "bytes feature '", name, "' of record ", r, " holds ",
                                    f.bytes_list().value_size(), " values; expected one");
        n = f.bytes_list().value(0).size();
        break;
      case record::Feature::kFloatList:
        n = f.float_list().value_size();
        break;
      case record::Feature::kDoubleList:
        n = f.double_list().value_size();
        break;
      case record::Feature::kInt32List:
        n = f.int32_list().value_size();
        break;
      case record::Feature::kInt64List:
        n = f.int64_list().value_size();
        break;
      default:
        throw_error<RuntimeError>(op, "feature '", name, "' of record ", r, " holds no list");
    }
    // A bytes feature gives as many bytes as fit, as OneFlow's decoder does.
    const bool bytes = f.kind_case() == record::Feature::kBytesList;
    if (!bytes && ((n > o.count && !o.truncate) ||
                   (n < o.count && !o.truncate && !o.auto_zero_padding && !o.varying_length)))
      throw_error<RuntimeError>(op, "feature '", name, "' of record ", r, " has ", n,
                                " values; the shape asks for ", o.count,
                                n > o.count ? " (truncate=True keeps the first ones)"
                                            : " (truncate=True pads with zeros)");
    const int64_t take = std::min(n, o.count), at = static_cast<int64_t>(r) * o.count;
    switch (f.kind_case()) {
      case record::Feature::kBytesList: {
        const std::string& b = f.bytes_list().value(0);
        if (dtype == DType::kUInt8)
          convert(reinterpret_cast<const uint8_t*>(b.data()), take, dtype, out, at);
        else
          convert(reinterpret_cast<const int8_t*>(b.data()), take, dtype, out, at);
        break;
      }
      case record::Feature::kFloatList:
        convert(f.float_list().value().data(), take, dtype, out, at);
        break;
      case record::Feature::kDoubleList:
        convert(f.double_list().value().data(), take, dtype, out, at);
        break;
      case record::Feature::kInt32List:
        convert(f.int32_list().value().data(), take, dtype, out, at);
        break;
      case record::Feature::kInt64List:
        convert(f.int64_list().value().data(), take, dtype, out, at);
        break;
      default:
        break;
    }
  }
}

std::vector<std::string> decode_bytes(const std::vector<std::string>& records,
                                      const std::string& name) {
  constexpr const char* op = "OFRecordBytesDecoder";
  std::vector<std::string> out;
  out.reserve(records.size());
  for (size_t r = 0; r < records.size(); ++r) {
    const record::OFRecord rec = parse(records[r], op, r);
    const record::Feature& f = feature_of(rec, name, op, r);
    if (f.kind_case() != record::Feature::kBytesList || f.bytes_list().value_size() == 0)
      throw_error<RuntimeError>(op, "feature '", name, "' of record ", r,
                                " is not a bytes feature with a value");
    out.push_back(f.bytes_list().value(0));
  }
  return out;
}

std::string encode_record(const std::vector<FeatureValue>& features) {
  record::OFRecord rec;
  for (const FeatureValue& fv : features) {
    record::Feature& f = (*rec.mutable_feature())[fv.name];
    if (fv.kind == "bytes") {
      for (const std::string& b : fv.bytes) f.mutable_bytes_list()->add_value(b);
    } else if (fv.kind == "float") {
      auto* l = f.mutable_float_list();
      for (double v : fv.numbers) l->add_value(static_cast<float>(v));
    } else if (fv.kind == "double") {
      auto* l = f.mutable_double_list();
      for (double v : fv.numbers) l->add_value(v);
    } else if (fv.kind == "int32") {
      auto* l = f.mutable_int32_list();
      for (int64_t v : fv.integers) l->add_value(static_cast<int32_t>(v));
    } else if (fv.kind == "int64") {
      auto* l = f.mutable_int64_list();
      for (int64_t v : fv.integers) l->add_value(v);
    } else {
      throw_error<ValueError>("OFRecord", "unknown feature kind '", fv.kind,
                              "' (bytes, float, double, int32, int64)");
    }
  }
  std::string out;
  rec.SerializeToString(&out);
  return out;
}

}  // namespace oneflow::data
