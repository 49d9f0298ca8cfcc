// OFRecord files and their decoding (the readers and decoders of oneflow.nn, OneFlow's data
// pipeline): a file is a sequence of records, each an 8-byte little-endian length followed by a
// serialized OFRecord (ofrecord.proto). A batch of records is kept as their serialized bytes, the
// decoders parse them.
#pragma once

#include <cstdint>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "oneflow/core/common/dtype.h"

namespace oneflow::data {

struct ReaderOptions {
  std::vector<std::string> files;
  int64_t batch_size = 1;
  bool shuffle = false;  // records pass through a buffer and leave in random order
  int64_t shuffle_buffer = 1024;
  bool shuffle_after_epoch = false;  // each epoch visits the files in a new order
  uint64_t seed = 0;
};

// Reads batches of records, epoch after epoch, without end; next_batch may be called from
// several threads (each batch is read under a lock).
class OFRecordReader {
 public:
  explicit OFRecordReader(ReaderOptions options);
  std::vector<std::string> next_batch();
  int64_t epoch() const { return epoch_; }

 private:
  std::string next_record();
  bool read_from_file(std::string* out);
  void open_next_file();

  std::mutex mu_;
  ReaderOptions options_;
  std::vector<size_t> order_;
  size_t file_pos_ = 0;
  std::ifstream file_;
  std::string file_name_;
  std::streamoff file_size_ = 0;
  int64_t epoch_ = 0;
  int64_t records_this_epoch_ = 0;
  std::mt19937_64 rng_;
  std::vector<std::string> buffer_;
};

// How a raw decoder treats a feature whose value count differs from the expected one.
struct RawDecodeOptions {
  int64_t count = 0;               // values per record
  bool truncate = false;           // more values: keep the first `count`; fewer: zero filled
  bool auto_zero_padding = false;  // fewer values: fill with zeros
  bool varying_length = false;     // fewer values allowed (dim1_varying_length): zero filled
};

// out: records.size() * options.count values of `dtype` (int8, uint8, int32, int64, float32,
// float64), converted from the feature's list (a bytes feature gives its bytes).
void decode_raw(const std::vector<std::string>& records, const std::string& name, DType dtype,
                const RawDecodeOptions& options, void* out);
// The first bytes value of each record's feature.
std::vector<std::string> decode_bytes(const std::vector<std::string>& records,
                                      const std::string& name);
// Serialized OFRecord from (name, kind, values); kind is "bytes", "float", "double", "int32" or
// "int64" (the tests' and tools' writer).
struct FeatureValue {
  std::string name;
  std::string kind;
  std::vector<std::string> bytes;
  std::vector<double> numbers;    // float, double
  std::vector<int64_t> integers;  // int32, int64
};
std::string encode_record(const std::vector<FeatureValue>& features);

// Decoded image: height x width x channels bytes, row-major.
struct Image {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};
// JPEG or PNG bytes to an image in color_space "BGR", "RGB" or "GRAY".
Image decode_image(const std::string& bytes, const std::string& color_space);
// RGB (or gray) pixels to JPEG bytes (the tests' and tools' writer).
std::string encode_jpeg(const Image& image, int quality);
bool image_codecs_available();

}  // namespace oneflow::data
