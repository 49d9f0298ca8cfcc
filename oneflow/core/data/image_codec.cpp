// Image decoding for the OFRecord image decoders (ofrecord.h): JPEG through libjpeg(-turbo),
// PNG through libpng's simplified API. Built without them (ONEFLOW_WITH_IMAGE_CODECS unset), the
// decoders raise NotImplementedError.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "oneflow/core/common/error.h"
#include "oneflow/core/data/ofrecord.h"

#if ONEFLOW_WITH_IMAGE_CODECS
#include <jpeglib.h>
#include <png.h>
#endif

namespace oneflow::data {

namespace {

constexpr const char* kOp = "image decode";

bool is_jpeg(const std::string& b) {
  return b.size() >= 3 && static_cast<uint8_t>(b[0]) == 0xFF &&
         static_cast<uint8_t>(b[1]) == 0xD8 && static_cast<uint8_t>(b[2]) == 0xFF;
}

bool is_png(const std::string& b) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  return b.size() >= 8 && std::memcmp(b.data(), sig, 8) == 0;
}

int channels_of(const std::string& color_space) {
  if (color_space == "BGR" || color_space == "RGB") return 3;
  if (color_space == "GRAY") return 1;
  throw_error<ValueError>(kOp, "expected color_space BGR, RGB or GRAY, got '", color_space, "'");
}

void rgb_to_bgr(Image* img) {
  if (img->channels != 3) return;
  uint8_t* p = img->pixels.data();
  for (int64_t i = 0, n = img->height * img->width; i < n; ++i) std::swap(p[3 * i], p[3 * i + 2]);
}

#if ONEFLOW_WITH_IMAGE_CODECS

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_fail(j_common_ptr info) {
  auto* err = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, err->message);
  std::longjmp(err->jump, 1);
}

// Returns false with `message` set on a decoding error (libjpeg reports through longjmp, so no
// C++ object with a destructor may live between setjmp and the calls that can fail).
bool decode_jpeg(const std::string& bytes, int channels, Image* img, std::string* message) {
  jpeg_decompress_struct info;
  JpegError err;
  info.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.message[0] = '\0';
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&info);
    *message = err.message;
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  info.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&info);
  img->height = info.output_height;
  img->width = info.output_width;
  img->channels = info.output_components;
  img->pixels.resize(img->height * img->width * img->channels);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = img->pixels.data() + info.output_scanline * img->width * img->channels;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

void decode_png(const std::string& bytes, int channels, Image* img) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()))
    throw_error<RuntimeError>(kOp, "not a valid PNG image: ", png.message);
  png.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  img->height = png.height;
  img->width = png.width;
  img->channels = channels;
  img->pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, img->pixels.data(), 0, nullptr)) {
    png_image_free(&png);
    throw_error<RuntimeError>(kOp, "not a valid PNG image: ", png.message);
  }
}

bool encode_jpeg_rgb(const Image& img, int quality, std::string* out, std::string* message) {
  jpeg_compress_struct info;
  JpegError err;
  info.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&info);
    std::free(buf);
    *message = err.message;
    return false;
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &buf, &size);
  info.image_width = static_cast<JDIMENSION>(img.width);
  info.image_height = static_cast<JDIMENSION>(img.height);
  info.input_components = static_cast<int>(img.channels);
  info.in_color_space = img.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row =
        const_cast<uint8_t*>(img.pixels.data()) + info.next_scanline * img.width * img.channels;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  out->assign(reinterpret_cast<const char*>(buf), size);
  std::free(buf);
  return true;
}

#endif

}  // namespace

std::string encode_jpeg(const Image& img, int quality) {
  if ((img.channels != 1 && img.channels != 3) ||
      static_cast<int64_t>(img.pixels.size()) != img.height * img.width * img.channels)
    throw_error<ValueError>("image encode", "expected an HxWx1 or HxWx3 uint8 image");
#if ONEFLOW_WITH_IMAGE_CODECS
  std::string out, message;
  if (!encode_jpeg_rgb(img, quality, &out, &message))
    throw_error<RuntimeError>("image encode", message);
  return out;
#else
  (void)quality;
  throw_error<NotImplementedError>("image encode", "this oneflow was built without libjpeg");
#endif
}

bool image_codecs_available() { return ONEFLOW_WITH_IMAGE_CODECS != 0; }

Image decode_image(const std::string& bytes, const std::string& color_space) {
  const int channels = channels_of(color_space);
  Image img;
#if ONEFLOW_WITH_IMAGE_CODECS
  if (is_jpeg(bytes)) {
    std::string message;
    if (!decode_jpeg(bytes, channels, &img, &message))
      throw_error<RuntimeError>(kOp, "not a valid JPEG image: ", message);
  } else if (is_png(bytes)) {
    decode_png(bytes, channels, &img);
  } else {
    throw_error<RuntimeError>(kOp, "the bytes are neither a JPEG nor a PNG image (", bytes.size(),
                              " bytes)");
  }
  if (color_space == "BGR") rgb_to_bgr(&img);
  return img;
#else
  (void)is_jpeg;
  (void)is_png;
  (void)rgb_to_bgr;
  (void)bytes;
  throw_error<NotImplementedError>(kOp, "this oneflow was built without libjpeg and libpng");
#endif
}

}  // namespace oneflow::data
