#include "core/train/systems/stellatrain/density_warmup.h"

#include <algorithm>
#include <cmath>

namespace st::train {

double DensityWarmup::density_at(int t, double base) const {
  if (t >= iterations || start <= base) return base;
  const double progress = static_cast<double>(t) / static_cast<double>(iterations);
  return std::max(base, start * std::pow(base / start, progress));
}

}  // namespace st::train
