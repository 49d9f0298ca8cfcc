// Image decoding for the OFRecord image decoders (ofrecord.h): JPEG through libjpeg(-turbo),
// PNG through libpng's simplified API. Built without them (ONEFLOW_WITH_IMAGE_CODECS unset), the
// decoders raise NotImplementedError.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

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

constexpr uint64_t kMaxPixels = uint64_t{1} << 30;  // OpenCV's limit

// Inverted (Adobe) CMYK to RGB: each channel is k scaled by the ink's complement, in OpenCV's
// integer arithmetic.
void cmyk_to_rgb(Image* img) {
  const int64_t n = img->height * img->width;
  uint8_t* p = img->pixels.data();
  for (int64_t i = 0; i < n; ++i) {
    const int k = p[4 * i + 3];
    for (int c = 0; c < 3; ++c)
      p[3 * i + c] = static_cast<uint8_t>(k - (((255 - p[4 * i + c]) * k) >> 8));
  }
  img->channels = 3;
  img->pixels.resize(n * 3);
}

// RGB to gray with OpenCV's fixed-point weights (0.299, 0.587, 0.114 in 14 bits).
void rgb_to_gray(Image* img) {
  const int64_t n = img->height * img->width;
  uint8_t* p = img->pixels.data();
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<uint8_t>(
        (p[3 * i] * 4899 + p[3 * i + 1] * 9617 + p[3 * i + 2] * 1868 + 8192) >> 14);
  img->channels = 1;
  img->pixels.resize(n);
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
  if (static_cast<uint64_t>(info.image_width) * info.image_height > kMaxPixels) {
    jpeg_destroy_decompress(&info);
    *message = "the image has more than 2^30 pixels";
    return false;
  }
  // CMYK (and YCCK) images decode to CMYK, converted to RGB below.
  const bool cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
  info.out_color_space = cmyk ? JCS_CMYK : channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
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

struct PngSource {
  const std::string* bytes;
  size_t pos;
};

void png_read_memory(png_structp png, png_bytep out, png_size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (src->pos + n > src->bytes->size()) png_error(png, "the PNG data ends early");
  std::memcpy(out, src->bytes->data() + src->pos, n);
  src->pos += n;
}

void png_fail(png_structp png, png_const_charp msg) {
  *static_cast<std::string*>(png_get_error_ptr(png)) = msg;
  std::longjmp(png_jmpbuf(png), 1);
}

void png_ignore_warning(png_structp, png_const_charp) {}

// 8-bit RGB or gray, as OpenCV's decoder gives them: 16-bit samples keep their high byte,
// palettes and low bit depths expand, alpha is dropped (not blended), no gamma conversion.
bool decode_png(const std::string& bytes, int channels, Image* img, std::string* message) {
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, message, png_fail, png_ignore_warning);
  if (png == nullptr) {
    *message = "out of memory";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  PngSource src{&bytes, 0};
  std::vector<png_bytep> rows;
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    if (message->empty()) *message = "out of memory";
    return false;
  }
  png_set_read_fn(png, &src, png_read_memory);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info),
                    height = png_get_image_height(png, info);
  if (static_cast<uint64_t>(width) * height > kMaxPixels)
    png_error(png, "the image has more than 2^30 pixels");
  const int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  if (depth == 16) png_set_strip_16(png);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_alpha(png);
  const bool gray = !(color & PNG_COLOR_MASK_COLOR);
  if (gray && channels == 3) png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  img->height = height;
  img->width = width;
  img->channels = png_get_channels(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  img->pixels.resize(row_bytes * height);
  rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y) rows[y] = img->pixels.data() + y * row_bytes;
  png_read_image(png, rows.data());
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
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
    std::string message;
    if (!decode_png(bytes, channels, &img, &message))
      throw_error<RuntimeError>(kOp, "not a valid PNG image: ", message);
  } else {
    throw_error<RuntimeError>(kOp, "the bytes are neither a JPEG nor a PNG image (", bytes.size(),
                              " bytes)");
  }
  if (img.channels == 4) cmyk_to_rgb(&img);
  if (channels == 1 && img.channels == 3) rgb_to_gray(&img);
  if (color_space == "BGR") rgb_to_bgr(&img);
  return img;
#else
  (void)is_jpeg;
  (void)is_png;
  (void)rgb_to_bgr;
  (void)rgb_to_gray;
  (void)cmyk_to_rgb;
  (void)bytes;
  throw_error<NotImplementedError>(kOp, "this oneflow was built without libjpeg and libpng");
#endif
}

}  // namespace oneflow::data
