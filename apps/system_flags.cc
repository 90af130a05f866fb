#include "apps/system_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/train/system_registry.h"

namespace st::apps {

void SystemFlags::add_to(CLI::App& cmd) {
  for (const auto& system : train::registered_systems()) {
    const auto options = system.make_options();
    for (const auto& field : options->fields()) {
      if (field.flag.empty() || known(field.flag)) continue;
      auto flag = std::make_unique<Flag>();
      flag->spelling = field.flag;
      flag->is_switch = field.is_switch;
      const std::string help = fmt::format("{} ({})", field.help, train::join_names(train::systems_with_flag(field.flag)));
      if (field.is_switch) {
        flag->option = cmd.add_flag(field.flag, flag->on, help);
      } else {
        flag->option = cmd.add_option(field.flag, flag->text, help)->type_name(field.value_name);
        // The default a `train` run starts from (the system's command defaults).
        auto defaults = system.make_options();
        defaults->use_command_defaults();
        if (field.show && !field.key.empty()) {
          const auto value = field.show(*defaults);
          if (!value.is_null()) flag->option->default_str(value.is_string() ? value.get<std::string>() : value.dump());
        }
      }
      flags_.push_back(std::move(flag));
    }
  }
}

bool SystemFlags::any_given() const {
  return std::any_of(flags_.begin(), flags_.end(), [](const auto& f) { return f->option->count() > 0; });
}

void SystemFlags::apply(train::TrainConfig& c) const {
  for (const auto& flag : flags_) {
    if (flag->option->count() == 0) continue;
    const auto* field = c.options->field_with_flag(flag->spelling);
    if (field == nullptr)
      throw std::invalid_argument(fmt::format("{}: does not apply to {} (only to {})", flag->option->get_name(),
                                              c.system, train::join_names(train::systems_with_flag(flag->spelling))));
    field->read_text(*c.options, flag->is_switch ? (flag->on ? "true" : "false") : flag->text);
  }
}

bool SystemFlags::known(const std::string& spelling) const {
  return std::any_of(flags_.begin(), flags_.end(), [&](const auto& f) { return f->spelling == spelling; });
}

}  // namespace st::apps
