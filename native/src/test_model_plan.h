#pragma once
// One tensor of a test model's plan: what the generator makes and writes (test_model.cpp).
#include <cstdint>
#include <string>

#include "ggml.h"

namespace strata {

struct TensorPlan {
  std::string name;
  int64_t ne0, ne1;  // ne1 = 1 for vectors
  ggml_type type;
  float std;         // 0: a norm weight (ones; a ".bias": zeros)
  int64_t ne2 = 1;   // experts of a 3-D expert tensor
  // Hand-set instead of random: 0 random, 1 zeros, 2 [I | 0] (the first ne1 columns; the MTP
  // block's), 3 minus one everywhere (a recurrent layer's decay).
  int fill = 0;
};

}  // namespace strata
