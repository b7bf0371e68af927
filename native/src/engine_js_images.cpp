// request.images: the images of a prompt, prepared by the model's projector and checked against
// the prompt's placeholders (engine_js.h).
#include <string>

#include "engine_js.h"
#include "js_args.h"

namespace strata {

using namespace js;

void ParseImages(const Napi::Value& v, Vision* vision, GenerateRequest& req) {
  Napi::Env env = v.Env();
  std::vector<ImageSpan> spans;
  if (!v.IsUndefined()) {
    if (!v.IsArray()) TypeErr(env, "images must be an array of {at, data}");
    const Napi::Array a = v.As<Napi::Array>();
    if (a.Length() > 0 && !vision) RangeErr(env, "images: this model was loaded without a projector (mmproj): it reads text only");
    size_t next = 0;  // the first prompt index a following image may start at
    for (uint32_t i = 0; i < a.Length(); ++i) {
      const std::string f = "images[" + std::to_string(i) + "]";
      if (!a.Get(i).IsObject()) TypeErr(env, f + " must be an object {at, data}");
      Fields o(a.Get(i).As<Napi::Object>(), f);
      const auto at = static_cast<size_t>(IntIn(o.Get("at"), (f + ".at").c_str(), 0, 2147483647.0));
      const Napi::Value d = o.Get("data");
      if (!d.IsTypedArray() || d.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
        TypeErr(env, f + ".data must be a Uint8Array of the image file's bytes");
      }
      o.RejectUnread();
      const Napi::Uint8Array bytes = d.As<Napi::Uint8Array>();
      std::shared_ptr<const PreparedImage> img;
      try {
        img = vision->Prepare(bytes.Data(), bytes.ElementLength(), 0);
      } catch (const std::exception& e) {
        RangeErr(env, f + ": " + e.what());
      }
      if (at < next || at + img->n >= req.prompt.size()) {
        RangeErr(env, f + ".at: the image's " + std::to_string(img->n) + " positions must follow the previous image's and end before the prompt does");
      }
      for (size_t k = 0; k < img->n; ++k) {
        if (req.prompt[at + k] != img->tokens[img->at + k]) {
          RangeErr(env, f + ": prompt[" + std::to_string(at + k) + "] is not this image's placeholder (use prepareImage's tokens)");
        }
      }
      spans.push_back({at, img->n, img});
      next = at + img->n;
    }
  }
  size_t s = 0;
  for (size_t i = 0; i < req.prompt.size(); ++i) {
    while (s < spans.size() && i >= spans[s].at + spans[s].n) ++s;
    const bool inside = s < spans.size() && i >= spans[s].at;
    if (req.prompt[i] < 0 && !inside) {
      RangeErr(env, "prompt[" + std::to_string(i) + "]: token " + std::to_string(req.prompt[i]) + " is an image placeholder without its image in images");
    }
  }
  req.images = std::move(spans);
}

}  // namespace strata
