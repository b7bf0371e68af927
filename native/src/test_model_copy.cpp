#include "test_model_copy.h"

#include <algorithm>
#include <cmath>

namespace strata {

namespace {

// Residual layout: A token vector | U constant | B previous token | B2 the one before | C copied.
constexpr int64_t kTok = 40, kConst = 40, kPrev = 48, kPrev2 = 88, kCopied = 128;
constexpr int64_t kHeadDim = kCopyHeadDim;  // 64 RoPE pairs
// RoPE pairs 0..3 rotate fast (1 .. 0.27 rad per position at base 1e12); pairs from 24 on turn
// by under 0.13 rad over 4096 positions, so content matching there ignores position.
constexpr int kFastPairs = 4;
constexpr int64_t kSlowDim = 48;
// Scales: token vectors, the constant, the positional heads' sharpness, residual writes, the
// content match's sharpness, the output's. Tuned so attention is one-hot and argmax copies.
constexpr float kAlpha = 10, kU = 3, kPos = 40, kBeta = 3, kGamma = 20, kOmega = 30;
// Layer 1 prefers the most recent of equal matches: RoPE pair 20 (1.8e-4 rad per position) with a
// quarter-turn phase scores -sin(distance * theta), falling over the whole context. Without it the
// head averages every earlier occurrence and the output is the token nearest their mean.
constexpr int64_t kRecencyDim = 40;
constexpr float kLambda = 150;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A token's unit vector (kTok values), the same wherever it is needed.
void TokenVector(uint64_t seed, int64_t token, float * v) {
  uint64_t s = Mix(seed ^ Mix(static_cast<uint64_t>(token) + 0x5eedULL));
  double norm = 0;
  for (int64_t i = 0; i < kTok; i++) {
    s = Mix(s);
    v[i] = static_cast<float>(static_cast<double>(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    norm += static_cast<double>(v[i]) * v[i];
  }
  const float inv = static_cast<float>(1.0 / std::sqrt(std::max(norm, 1e-12)));
  for (int64_t i = 0; i < kTok; i++) v[i] *= inv;
}

double Theta(int pair) { return std::pow(static_cast<double>(kCopyRopeBase), -2.0 * pair / kHeadDim); }

// RoPE gives q.k = cos(theta * distance + a) per pair for a query (cos a, sin a) and a key (1, 0).
// Keys are that constant (one key head serves every query head, as with GQA); the query's phase
// says which distance scores highest.
float PhasedQK(bool key, int64_t pair_dim, double a, float scale) {
  if (key) return pair_dim % 2 == 0 ? scale : 0.0f;
  return static_cast<float>(scale * (pair_dim % 2 == 0 ? std::cos(a) : std::sin(a)));
}

// The q/k weight of a head that attends `offset` positions back, from the constant dimension.
float PositionalQK(bool key, int64_t out_dim, int64_t in_dim, int offset) {
  const int64_t pair = out_dim / 2;
  if (in_dim != kConst || pair >= kFastPairs) return 0.0f;
  return PhasedQK(key, out_dim, -offset * Theta(static_cast<int>(pair)), kPos);
}

// Residual scales as the layers leave them: the embedding (A and U), each copy layer 0 writes (B,
// B2: kBeta times a normalised token vector), layer 1's input and output (C), over n_embd values.
struct Scales {
  double embd_rms, prev, in_rms, copied, out_rms;
  explicit Scales(int64_t n_embd) {
    const double n = static_cast<double>(n_embd);
    embd_rms = std::sqrt((kAlpha * kAlpha + kU * kU) / n);
    prev = kBeta * kAlpha / embd_rms;
    in_rms = std::sqrt((kAlpha * kAlpha + kU * kU + 2 * prev * prev) / n);
    copied = kBeta * kAlpha / in_rms;
    out_rms = std::sqrt((kAlpha * kAlpha + kU * kU + 2 * prev * prev + copied * copied) / n);
  }
};

// The NextN block's projection of [normalised embedding; normalised hidden state] (row: residual
// dim, col < n_embd: the embedding's, else the hidden state's). It rebuilds the residual layer 1
// reads: A and U from the token read, B from the hidden state's current token, B2 from its previous
// one. The hidden state is the output-normed residual of the trunk or of the block itself, which
// have the same layout, so each draft reads the last like the first.
float EhProj(int64_t n_embd, int64_t row, int64_t col) {
  const Scales s(n_embd);
  if (col < n_embd) return (row == col && (row < kTok || row == kConst)) ? static_cast<float>(s.embd_rms) : 0.0f;
  const int64_t h = col - n_embd;
  if (row >= kPrev && row < kPrev + kTok && h == row - kPrev) return static_cast<float>(s.prev * s.out_rms / kAlpha);
  if (row >= kPrev2 && row < kPrev2 + kTok && h == row - kPrev2 + kPrev) return static_cast<float>(s.out_rms);
  return 0.0f;
}

float Weight(const std::string & t, int layer, int64_t row, int64_t col, bool neox) {
  const int64_t head = row / kHeadDim;
  int64_t hd = row % kHeadDim;
  if (layer > 1) return 0.0f;
  if (t == "attn_q" || t == "attn_k") {
    // The weights below are laid out for adjacent RoPE pairs; NeoX pairs dim i with i + half.
    if (neox) hd = (hd % (kHeadDim / 2)) * 2 + hd / (kHeadDim / 2);
    const bool key = t == "attn_k";
    if (key ? head != 0 : head > (layer == 0 ? 1 : 0)) return 0.0f;
    if (layer == 0) return PositionalQK(key, hd, col, key ? 0 : static_cast<int>(head) + 1);
    if (hd / 2 == kRecencyDim / 2) return col == kConst ? PhasedQK(key, hd, M_PI / 2, kLambda) : 0.0f;  // -sin(theta d)
    if (hd < kSlowDim) return 0.0f;
    // Layer 1 head 0: query (current, previous) token against key (previous, previous but one).
    const int64_t i = (hd - kSlowDim) % kTok;
    const int64_t part = (hd - kSlowDim) / kTok;  // 0: first token of the pair, 1: second
    const int64_t from = !key ? (part == 0 ? 0 : kPrev) : (part == 0 ? kPrev : kPrev2);
    // The token vector is kBeta times smaller in the residual than the copies layer 0 wrote:
    // scaled up so the current and the previous token weigh the same in the match.
    const float gain = !key && part == 0 ? kGamma * kBeta : kGamma;
    return col == from + i ? gain : 0.0f;
  }
  if (t == "attn_v") {
    // The (one) value head carries the token vector of the position attended to.
    return head == 0 && hd < kTok && col == hd ? 1.0f : 0.0f;
  }
  if (t == "attn_output") {
    // row: residual dim, col: head output dim.
    const int64_t h = col / kHeadDim, c = col % kHeadDim;
    if (c >= kTok) return 0.0f;
    int64_t target;
    if (layer == 0) target = h == 0 ? kPrev : kPrev2;
    else if (h == 0) target = kCopied;
    else return 0.0f;
    return row == target + c ? kBeta : 0.0f;
  }
  return 0.0f;  // FFN: none
}

}  // namespace

void CopyModelRow(const CopyModel & model, const std::string & name, int64_t row, int64_t ne0, float * out) {
  const uint64_t seed = model.seed;
  std::fill(out, out + ne0, 0.0f);
  if (name.find("norm") != std::string::npos) {
    std::fill(out, out + ne0, 1.0f);
    return;
  }
  if (name == "token_embd.weight" || name == "output.weight") {
    float v[kTok];
    TokenVector(seed, row, v);
    const bool input = name == "token_embd.weight";
    for (int64_t i = 0; i < kTok; i++) out[(input ? 0 : kCopied) + i] = v[i] * (input ? kAlpha : kOmega);
    if (input) out[kConst] = kU;
    return;
  }
  // blk.<layer>.<tensor>.weight
  const size_t dot1 = name.find('.'), dot2 = name.find('.', dot1 + 1), dot3 = name.rfind('.');
  int layer = std::stoi(name.substr(dot1 + 1, dot2 - dot1 - 1));
  const std::string tensor = name.substr(dot2 + 1, dot3 - dot2 - 1);
  if (layer == model.mtp_layer) {
    if (tensor == "nextn.eh_proj") {
      for (int64_t col = 0; col < ne0; col++) out[col] = EhProj(model.n_embd, row, col);
      return;
    }
    layer = 1;  // its attention is layer 1's; its experts are zero like every FFN here
  }
  for (int64_t col = 0; col < ne0; col++) out[col] = Weight(tensor, layer, row, col, model.neox);
}

}  // namespace strata
