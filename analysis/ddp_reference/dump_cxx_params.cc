// Prints the C++ resnet18's parameters (name and shape, registration order)
// and their total for 1x28x28 inputs and 10 classes: the list resnet18.py
// --check compares the PyTorch model with (cxx_resnet18_params.txt). Built
// by hand against a build tree's model library, e.g. from the repository root:
//
//   g++ -std=c++17 -I. analysis/ddp_reference/dump_cxx_params.cc \
//       build/core/model/libst_model.a -ltorch -ltorch_cpu -lc10 -lfmt -o dump_cxx_params
#include <iostream>

#include "core/model/model.h"

int main() {
  const auto model = st::model::make_model("resnet18", st::model::ModelShape{1, 28, 28, 10}, 1);
  for (const auto& p : model.named_parameters()) {
    std::cout << p.name;
    for (const auto size : p.tensor.sizes()) std::cout << " " << size;
    std::cout << "\n";
  }
  std::cout << "total " << model.parameter_count() << "\n";
}
