// request.images: the images of a prompt, prepared by the model's projector and checked against
// the prompt's placeholders; prepareImage's worker (engine_js.h).
#include <string>

#include "engine_error.h"
#include "engine_js.h"
#include "js_args.h"

namespace strata {

using namespace js;

namespace {

// Decodes and prepares on a libuv worker: a large image takes the engine host's JS thread, which
// serves every other request's calls, for no time at all. The bytes are copied (the caller's
// buffer may be reused or detached meanwhile) and the projector is held until the worker ends.
class PrepareImageWorker : public Napi::AsyncWorker {
 public:
  PrepareImageWorker(Napi::Env env, std::shared_ptr<Vision> vision, const Napi::Uint8Array& data, uint64_t max_pixels)
      : Napi::AsyncWorker(env, "strata:PrepareImage"), deferred_(Napi::Promise::Deferred::New(env)),
        vision_(std::move(vision)), bytes_(data.Data(), data.Data() + data.ElementLength()), max_pixels_(max_pixels) {}
  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    try {
      image_ = vision_->Prepare(bytes_.data(), bytes_.size(), max_pixels_);
    } catch (const std::invalid_argument& e) {
      error_ = e.what();
      kind_ = Kind::Input;
    } catch (const VisionClosed& e) {
      error_ = e.what();
      kind_ = Kind::Closed;
    } catch (const std::exception& e) {
      error_ = e.what();
      kind_ = Kind::Other;
    }
    vision_.reset();
    bytes_ = {};
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (kind_ == Kind::Input) return deferred_.Reject(Napi::RangeError::New(env, error_).Value());
    if (kind_ != Kind::None) {
      Napi::Error e = Napi::Error::New(env, error_);
      if (kind_ == Kind::Closed) e.Set("code", Napi::String::New(env, ErrorCodeName(ErrorCode::EngineClosed)));
      return deferred_.Reject(e.Value());
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", image_->id);
    o.Set("tokens", TokensToJs(env, image_->tokens));
    o.Set("at", static_cast<double>(image_->at));
    o.Set("n", static_cast<double>(image_->n));
    o.Set("width", image_->nx);
    o.Set("height", image_->ny);
    deferred_.Resolve(o);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  enum class Kind { None, Input, Closed, Other };
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<Vision> vision_;
  std::vector<uint8_t> bytes_;
  uint64_t max_pixels_;
  std::shared_ptr<const PreparedImage> image_;
  std::string error_;
  Kind kind_ = Kind::None;
};

}  // namespace

Napi::Promise PrepareImageAsync(Napi::Env env, std::shared_ptr<Vision> vision, const Napi::Uint8Array& data, uint64_t max_pixels) {
  auto* worker = new PrepareImageWorker(env, std::move(vision), data, max_pixels);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

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
