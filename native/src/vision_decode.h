// An image file's bytes decoded to RGB (stb_image: PNG, JPEG, GIF, BMP), within what the file's
// own header declares: a small header cannot make the decoder inflate, allocate or loop for much
// more than the pixels it names (decompression bombs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace strata {

// What decoding an image may take, from its declared width x height (vision_decode.cpp):
// memory held by the decoder at once, beyond twice the file's own size and a fixed 1 MiB.
constexpr uint64_t kDecodeBytesPerPixel = 32;
// A progressive JPEG reads every block once per scan: encoders write about 10 scans.
constexpr int kMaxJpegScans = 100;

struct DecodedImage {
  int width = 0;
  int height = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> rgb{nullptr, nullptr};  // width * height * 3 bytes
};

// Any thread (each decode is bounded on its own thread). Throws std::invalid_argument, with a
// message for the client, when the bytes are no image stb_image reads, the image has more than
// max_pixels pixels (0: no limit), or its data holds more than its declared pixels: a PNG whose
// image data inflates past twice what its rows take, a GIF whose first frame decodes to more
// pixels than the frame has, a JPEG of more than kMaxJpegScans scans, or a decode that would
// need more memory than its size allows.
DecodedImage DecodeImage(const uint8_t* data, size_t size, uint64_t max_pixels);

}  // namespace strata
