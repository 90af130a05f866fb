#pragma once
// StellaTrain (paper section 3; stellatrain_system.cc), with its options in
// stellatrain_options.h.
#include "core/train/system_registry.h"

namespace st::train {

SystemDescriptor stellatrain_system();

}  // namespace st::train
