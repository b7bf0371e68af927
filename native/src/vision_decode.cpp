// Decoding within the header's bounds (vision_decode.h). stb_image trusts a file's data more than
// its header: a PNG declaring 1x1 pixels inflated 2 GiB of zeros, a GIF frame's LZW codes or a
// JPEG's scans can run for seconds past the pixels they fill. So, before and while stb decodes:
// - every block stb allocates is counted against a budget for this decode, from the declared
//   width x height (kDecodeBytesPerPixel), on the decoding thread;
// - a PNG's inflate buffer may not grow past twice what its rows take (some encoders leave
//   zeros after the image data, which stb reads);
// - a GIF's first frame (the one stb reads) is counted code by code, without decoding it: more
//   pixels than the frame has is refused;
// - a JPEG's scans are counted: each one reads every block again.
// Only PNG, JPEG, GIF and BMP are compiled in: libmtmd's own helper also takes audio and hands
// WebP to an ffmpeg process, neither of which a request's bytes should reach.
#include "vision_decode.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::stb_budget {

// This thread's decode: `limit` 0 when none runs (stbi_info, frees after a decode).
struct Budget {
  size_t limit = 0;
  size_t live = 0;
  size_t inflate_limit = 0;        // a PNG's inflate buffer, bytes; 0: not a PNG
  const char* refused = nullptr;   // "memory" or "inflate": which bound refused an allocation
};
thread_local Budget t;

// Each block carries its size in front (16 bytes keep malloc's alignment), so frees are counted.
constexpr size_t kHead = 16;

size_t SizeOf(void* p) {
  size_t n = 0;
  std::memcpy(&n, static_cast<unsigned char*>(p) - kHead, sizeof n);
  return n;
}

bool Allows(size_t more) {
  if (t.limit == 0 || (more <= t.limit && t.live <= t.limit - more)) return true;
  t.refused = "memory";
  return false;
}

void* Malloc(size_t n) {
  if (!Allows(n)) return nullptr;
  auto* b = static_cast<unsigned char*>(std::malloc(n + kHead));
  if (!b) return nullptr;
  std::memcpy(b, &n, sizeof n);
  t.live += n;
  return b + kHead;
}

void Free(void* p) {
  if (!p) return;
  t.live -= std::min(t.live, SizeOf(p));
  std::free(static_cast<unsigned char*>(p) - kHead);
}

void* Realloc(void* p, size_t n, bool inflate_output) {
  if (!p) return Malloc(n);
  const size_t old = SizeOf(p);
  if (inflate_output && t.limit && t.inflate_limit && n > t.inflate_limit) {
    t.refused = "inflate";
    return nullptr;
  }
  if (n > old && !Allows(n - old)) return nullptr;
  auto* b = static_cast<unsigned char*>(std::realloc(static_cast<unsigned char*>(p) - kHead, n + kHead));
  if (!b) return nullptr;
  std::memcpy(b, &n, sizeof n);
  t.live = t.live - std::min(t.live, old) + n;
  return b + kHead;
}

// stb grows its inflate output through `z->zout_start` (stbi__zexpand) and a PNG's compressed
// data through `z->idata`: the macro below passes the expression's text to tell them apart.
constexpr bool IsInflateOutput(const char* expr) {
  const char* want = "z->zout_start";
  while (*expr && *expr == *want) ++expr, ++want;
  return *expr == *want;
}

}  // namespace strata::stb_budget

#define STBI_MALLOC(sz) strata::stb_budget::Malloc(sz)
#define STBI_FREE(p) strata::stb_budget::Free(p)
#define STBI_REALLOC_SIZED(p, oldsz, newsz) \
  strata::stb_budget::Realloc(p, newsz, strata::stb_budget::IsInflateOutput(#p))

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_GIF
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#include "stb/stb_image.h"

namespace strata {

namespace {

uint32_t Be32(const uint8_t* p) { return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]; }
uint32_t Le16(const uint8_t* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }

// Bytes a PNG's image data inflates to, from IHDR: each row's filter byte and packed pixels, per
// Adam7 pass when interlaced. 0 when the header cannot be read (stb then says why).
uint64_t PngRawBytes(const uint8_t* d, size_t n) {
  for (size_t i = 8; i + 8 <= n;) {
    const uint32_t len = Be32(d + i);
    if (std::memcmp(d + i + 4, "IHDR", 4) == 0) {
      if (len != 13 || i + 8 + 13 > n) return 0;
      const uint8_t* h = d + i + 8;
      const uint64_t w = Be32(h), ht = Be32(h + 4), depth = h[8];
      static const uint64_t kChannels[7] = {1, 0, 3, 1, 2, 0, 4};  // by color type
      if (h[9] > 6 || kChannels[h[9]] == 0) return 0;
      const uint64_t bits = depth * kChannels[h[9]];
      const auto rows = [&](uint64_t pw, uint64_t ph) { return pw && ph ? ph * (1 + (pw * bits + 7) / 8) : 0; };
      if (h[12] == 0) return rows(w, ht);
      static const uint64_t xo[7] = {0, 4, 0, 2, 0, 1, 0}, yo[7] = {0, 0, 4, 0, 2, 0, 1};
      static const uint64_t xs[7] = {8, 8, 4, 4, 2, 2, 1}, ys[7] = {8, 8, 8, 4, 4, 2, 2};
      uint64_t total = 0;
      for (int p = 0; p < 7; ++p) total += rows((w + xs[p] - 1 - xo[p]) / xs[p], (ht + ys[p] - 1 - yo[p]) / ys[p]);
      return total;
    }
    if (len > n) return 0;
    i += 12 + static_cast<size_t>(len);
  }
  return 0;
}

// Pixels a GIF frame's LZW data decodes to, counted the way stb's decoder walks the codes (each
// code outputs its string, one step per pixel, also past the frame's end), stopping once past
// `limit` or where stb would stop with an error of its own. `i` is at the LZW code size byte.
uint64_t GifFramePixels(const uint8_t* d, size_t n, size_t i, uint64_t limit) {
  if (i >= n) return 0;
  const int lzw_cs = d[i++];
  if (lzw_cs > 12) return 0;
  std::vector<uint32_t> len(8192, 1);  // string length per code
  const int clear = 1 << lzw_cs;
  int codesize = lzw_cs + 1, codemask = (1 << codesize) - 1, avail = clear + 2, oldcode = -1;
  bool first = true;
  uint32_t bits = 0;
  int valid = 0, block = 0;
  uint64_t out = 0;
  for (;;) {
    if (valid < codesize) {
      if (block == 0) {
        if (i >= n || (block = d[i++]) == 0) return out;
      }
      if (i >= n) return out;
      --block;
      bits |= uint32_t{d[i++]} << valid;
      valid += 8;
      continue;
    }
    const int code = static_cast<int>(bits & static_cast<uint32_t>(codemask));
    bits >>= codesize;
    valid -= codesize;
    if (code == clear) {
      codesize = lzw_cs + 1;
      codemask = (1 << codesize) - 1;
      avail = clear + 2;
      oldcode = -1;
      first = false;
      continue;
    }
    if (code == clear + 1 || code > avail || first) return out;
    if (oldcode >= 0) {
      if (avail >= 8192) return out;
      len[static_cast<size_t>(avail++)] = len[static_cast<size_t>(oldcode)] + 1;
    } else if (code == avail) {
      return out;
    }
    out += len[static_cast<size_t>(code)];
    if (out > limit) return out;
    if ((avail & codemask) == 0 && avail <= 0x0FFF) codemask = (1 << ++codesize) - 1;
    oldcode = code;
  }
}

// Empty, or why a GIF's first frame (the one stb reads) is refused.
std::string GifOverrun(const uint8_t* d, size_t n) {
  if (n < 13) return {};
  size_t i = 13;
  if (d[10] & 0x80) i += 3 * (size_t{2} << (d[10] & 7));
  while (i < n) {
    const uint8_t b = d[i++];
    if (b == 0x21) {  // an extension: its label, then sub-blocks
      for (++i; i < n && d[i] != 0; i += 1 + size_t{d[i]}) {}
      ++i;
      continue;
    }
    if (b != 0x2C || i + 9 > n) return {};  // the trailer, or what stb refuses itself
    const uint64_t fw = Le16(d + i + 4), fh = Le16(d + i + 6);
    const uint8_t flags = d[i + 8];
    i += 9;
    if (flags & 0x80) i += 3 * (size_t{2} << (flags & 7));
    if (GifFramePixels(d, n, i, fw * fh) <= fw * fh) return {};
    return "its first frame (" + std::to_string(fw) + "x" + std::to_string(fh) + ") holds data for more than its " +
           std::to_string(fw * fh) + " pixels";
  }
  return {};
}

// How many scans (SOS markers) a JPEG has, counting up to `limit` + 1.
int JpegScans(const uint8_t* d, size_t n, int limit) {
  int scans = 0;
  size_t i = 2;
  while (i + 1 < n && scans <= limit) {
    if (d[i] != 0xFF || d[i + 1] == 0xFF) {
      ++i;
      continue;
    }
    const uint8_t m = d[i + 1];
    i += 2;
    if (m == 0xD9) break;
    if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7) || i + 2 > n) continue;
    i += (size_t{d[i]} << 8) | d[i + 1];
    if (m != 0xDA) continue;
    ++scans;
    // The entropy-coded data runs to the next marker that is not a stuffed byte or a restart.
    while (i + 1 < n && !(d[i] == 0xFF && d[i + 1] != 0x00 && !(d[i + 1] >= 0xD0 && d[i + 1] <= 0xD7))) ++i;
  }
  return scans;
}

const char* FormatName(const uint8_t* d, size_t n) {
  if (n >= 8 && std::memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) return "PNG";
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return "JPEG";
  if (n >= 4 && std::memcmp(d, "GIF8", 4) == 0) return "GIF";
  return "BMP";
}

// The budget for one decode on this thread, cleared whatever happens.
struct BudgetScope {
  BudgetScope(size_t limit, size_t inflate_limit) { stb_budget::t = {limit, 0, inflate_limit, nullptr}; }
  ~BudgetScope() { stb_budget::t = {}; }
};

}  // namespace

DecodedImage DecodeImage(const uint8_t* data, size_t size, uint64_t max_pixels) {
  if (size > static_cast<size_t>(INT32_MAX)) throw std::invalid_argument("the image is too large");
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), &w, &h, &comp)) {
    throw std::invalid_argument("the image could not be read (PNG, JPEG, GIF or BMP are supported)");
  }
  const uint64_t pixels = static_cast<uint64_t>(w) * static_cast<uint64_t>(h);
  if (max_pixels > 0 && pixels > max_pixels) {
    throw std::invalid_argument("the image is " + std::to_string(w) + "x" + std::to_string(h) + " = " +
                                std::to_string(pixels) + " pixels, more than the limit of " + std::to_string(max_pixels));
  }
  const std::string format = FormatName(data, size);
  const std::string what = "the " + format + " image (" + std::to_string(w) + "x" + std::to_string(h) + ")";
  uint64_t inflate_limit = 0;
  if (format == "PNG") {
    inflate_limit = 2 * PngRawBytes(data, size);
  } else if (format == "GIF") {
    const std::string overrun = GifOverrun(data, size);
    if (!overrun.empty()) throw std::invalid_argument(what + " holds more data than its pixels: " + overrun);
  } else if (format == "JPEG" && JpegScans(data, size, kMaxJpegScans) > kMaxJpegScans) {
    throw std::invalid_argument(what + " has more than " + std::to_string(kMaxJpegScans) + " scans");
  }
  // JPEG pads to whole blocks of up to 32 pixels; a PNG's compressed data is gathered in a buffer
  // that doubles.
  const uint64_t limit = (uint64_t{1} << 20) + 2 * static_cast<uint64_t>(size) +
                         kDecodeBytesPerPixel * (static_cast<uint64_t>(w) + 32) * (static_cast<uint64_t>(h) + 32);
  unsigned char* rgb = nullptr;
  const char* refused = nullptr;
  {
    BudgetScope scope(static_cast<size_t>(std::min<uint64_t>(limit, SIZE_MAX)), static_cast<size_t>(inflate_limit));
    rgb = stbi_load_from_memory(data, static_cast<int>(size), &w, &h, &comp, 3);
    refused = stb_budget::t.refused;
  }
  if (!rgb) {
    if (refused && std::strcmp(refused, "inflate") == 0) {
      throw std::invalid_argument(what + " holds more data than its pixels: its image data inflates past " +
                                  std::to_string(inflate_limit) + " bytes, twice what its rows take");
    }
    if (refused) {
      throw std::invalid_argument(what + " needs more memory to decode than its pixels allow (" + std::to_string(limit) + " bytes)");
    }
    throw std::invalid_argument(std::string("the image could not be decoded: ") + stbi_failure_reason());
  }
  DecodedImage out;
  out.width = w;
  out.height = h;
  out.rgb = {rgb, stbi_image_free};
  return out;
}

}  // namespace strata
