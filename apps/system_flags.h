#pragma once
// Every system option's `stellatrain train` flag, from the systems' option
// tables (core/train/system_options.h), registered once however many
// systems share it. After parsing, the flags given go to the chosen
// system's options; a flag that system does not take is an error naming
// the systems that do.
#include <memory>
#include <string>
#include <vector>

#include "core/train/config.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace st::apps {

class SystemFlags {
 public:
  // Adds every registered system's flags to `cmd`.
  void add_to(CLI::App& cmd);
  bool any_given() const;
  // Applies the flags given to `c`'s options; throws std::invalid_argument
  // for a flag of another system or a bad value.
  void apply(train::TrainConfig& c) const;

 private:
  struct Flag {
    std::string spelling;
    bool is_switch = false;
    std::string text;
    bool on = false;
    CLI::Option* option = nullptr;
  };
  bool known(const std::string& spelling) const;
  std::vector<std::unique_ptr<Flag>> flags_;  // stable addresses: CLI11 writes into them
};

}  // namespace st::apps
