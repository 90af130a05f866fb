#pragma once
// A system's own settings. Each system declares them once, as a table of
// fields (scenario key, `stellatrain train` flag, range or choices, help),
// and every place that reads or shows a system's settings loops over that
// table: scenario files (errors name the key path and line), `train`
// flags, sweeps, manifest.json and summary.json. What applies to every
// system (model, data, optimizer, budget, evaluation) stays in TrainConfig.
// docs/architecture.md, "How to add a system", walks through one.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace st::util {
class YamlField;
}
namespace st::control {
struct ControllerOptions;
}

namespace st::train {

struct TrainConfig;
class SystemOptions;

// One option of a system.
struct OptionField {
  OptionField(std::string key_, std::string flag_, std::string help_, bool is_switch_ = false)
      : key(std::move(key_)), flag(std::move(flag_)), help(std::move(help_)), is_switch(is_switch_) {}

  std::string key;   // in a scenario's system entry and in the JSON ("": a flag only)
  // The `train` flag in CLI11's spelling: "--density", a switch "--fp16",
  // a negative switch "!--no-warm-start", both "--controller,!--no-controller"
  // ("": scenario only). Systems that share a flag must spell it the same.
  std::string flag;
  std::string help;
  bool is_switch = false;  // a flag without a value
  std::string value_name;  // what `train --help` shows for the value: FLOAT, INT, {a,b}
  // Reads the scenario's value (YamlField::fail names the key path and line).
  std::function<void(SystemOptions&, const util::YamlField&)> read;
  // Reads a flag's value ("true"/"false" for a switch); throws
  // std::invalid_argument naming the flag.
  std::function<void(SystemOptions&, const std::string&)> read_text;
  // The value for manifest and summary (null: shown as part of another field).
  std::function<nlohmann::json(const SystemOptions&)> show;
};

// What a system with the controller (docs/control.md) gives the run driver.
struct ControlledSystem {
  const control::ControllerOptions* options = nullptr;
  double initial_density = 0;
  int staleness = 0;
  bool block_compressor = false;  // the compressor sends whole 16-float blocks (thresholdv16)
  bool fp16_values = false;
  // Iterations before this one may run above the plan's density (a density
  // warm-up): the controller does not read their wait as an overrun.
  int raised_density_iterations = 0;
  std::size_t dense_up_to = 0;  // tensors of at most this many elements are sent whole
};

class SystemOptions {
 public:
  virtual ~SystemOptions() = default;
  virtual std::unique_ptr<SystemOptions> clone() const = 0;
  virtual const std::vector<OptionField>& fields() const = 0;

  // What scenarios and `train` start from where it differs from the
  // engine's neutral default (stellatrain: the controller on, while a
  // TrainConfig built in code runs at a fixed density).
  virtual void use_command_defaults() {}
  // Checks the values against each other and the run (values read from a
  // scenario or a flag are range-checked as they are read; this also covers
  // a TrainConfig filled in code). Throws std::invalid_argument
  // "train config: FIELD ...".
  virtual void validate(const TrainConfig&) const {}
  // Checks that need the whole scenario entry once every field is read
  // (e.g. dc_lambda only with compensation: dc); fails at the entry's key.
  virtual void check_entry(const util::YamlField&) const {}
  // A sweep's fixed-density point: from now on the system sends this
  // fraction every iteration. False: the system has no density to fix.
  virtual bool fix_density(double) { return false; }
  // The controller's inputs when this run has one (none otherwise).
  virtual std::optional<ControlledSystem> controlled() const { return std::nullopt; }
  // The compressor this system runs on the node CPU (its compress tasks),
  // for compute-time models that price each compressor by its own measured
  // curve (docs/sim-compute.md); "": the system compresses nothing there.
  virtual std::string cpu_compressor() const { return ""; }

  // Every shown field, in table order (manifest and summary).
  nlohmann::json to_json() const;
  const OptionField* field(const std::string& key) const;
  const OptionField* field_with_flag(const std::string& flag) const;
};

// The CRTP base that gives an options struct its clone and its table
// (`static std::vector<OptionField> make_fields()` in the struct).
template <typename Derived>
class OptionsOf : public SystemOptions {
 public:
  std::unique_ptr<SystemOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  const std::vector<OptionField>& fields() const override {
    static const std::vector<OptionField> table = Derived::make_fields();
    return table;
  }
};

// A system without options of its own.
struct NoOptions final : OptionsOf<NoOptions> {
  static std::vector<OptionField> make_fields() { return {}; }
};

namespace detail {
double parse_number_text(const std::string& flag, const std::string& text, double min, double max);
long long parse_integer_text(const std::string& flag, const std::string& text, long long min, long long max);
bool parse_switch_text(const std::string& flag, const std::string& text);
std::string parse_choice_text(const std::string& flag, const std::string& text, const std::vector<std::string>& choices);
double read_number(const util::YamlField& f, double min, double max);
long long read_integer(const util::YamlField& f, long long min, long long max);
bool read_boolean(const util::YamlField& f);
std::string read_choice(const util::YamlField& f, const std::vector<std::string>& choices);
// Throws std::invalid_argument "train config: FIELD WHY" unless `ok`: the
// one form of a configuration error that a validate() reports.
void require(bool ok, const char* field, const std::string& why);
}  // namespace detail

// Builds a table for options struct O from its members:
//   Fields<O>().number("density", &O::density, 1e-6, 1, "--density", "Fraction ...")
template <typename O>
class Fields {
 public:
  Fields& number(std::string key, double O::*member, double min, double max, std::string flag, std::string help) {
    OptionField f{std::move(key), std::move(flag), std::move(help)};
    f.value_name = "FLOAT";
    f.read = [member, min, max](SystemOptions& o, const util::YamlField& y) {
      self(o).*member = detail::read_number(y, min, max);
    };
    f.read_text = [member, min, max, name = f.flag](SystemOptions& o, const std::string& text) {
      self(o).*member = detail::parse_number_text(name, text, min, max);
    };
    f.show = [member](const SystemOptions& o) { return nlohmann::json(self(o).*member); };
    return add(std::move(f));
  }
  Fields& integer(std::string key, int O::*member, long long min, long long max, std::string flag, std::string help) {
    OptionField f{std::move(key), std::move(flag), std::move(help)};
    f.value_name = "INT";
    f.read = [member, min, max](SystemOptions& o, const util::YamlField& y) {
      self(o).*member = static_cast<int>(detail::read_integer(y, min, max));
    };
    f.read_text = [member, min, max, name = f.flag](SystemOptions& o, const std::string& text) {
      self(o).*member = static_cast<int>(detail::parse_integer_text(name, text, min, max));
    };
    f.show = [member](const SystemOptions& o) { return nlohmann::json(self(o).*member); };
    return add(std::move(f));
  }
  // A yes/no option; its flag is a switch ("--fp16", "!--no-warm-start").
  Fields& boolean(std::string key, bool O::*member, std::string flag, std::string help) {
    OptionField f{std::move(key), std::move(flag), std::move(help), true};
    f.read = [member](SystemOptions& o, const util::YamlField& y) { self(o).*member = detail::read_boolean(y); };
    f.read_text = [member, name = f.flag](SystemOptions& o, const std::string& text) {
      self(o).*member = detail::parse_switch_text(name, text);
    };
    f.show = [member](const SystemOptions& o) { return nlohmann::json(self(o).*member); };
    return add(std::move(f));
  }
  Fields& choice(std::string key, std::string O::*member, std::vector<std::string> choices, std::string flag,
                 std::string help) {
    OptionField f{std::move(key), std::move(flag), std::move(help)};
    for (const auto& c : choices) f.value_name += (f.value_name.empty() ? "{" : ",") + c;
    f.value_name += "}";
    f.read = [member, choices](SystemOptions& o, const util::YamlField& y) {
      self(o).*member = detail::read_choice(y, choices);
    };
    f.read_text = [member, choices, name = f.flag](SystemOptions& o, const std::string& text) {
      self(o).*member = detail::parse_choice_text(name, text, choices);
    };
    f.show = [member](const SystemOptions& o) { return nlohmann::json(self(o).*member); };
    return add(std::move(f));
  }
  // Anything the typed builders do not cover (a nested map, a flag that
  // sets part of another field).
  Fields& custom(OptionField f) { return add(std::move(f)); }

  operator std::vector<OptionField>() const { return fields_; }  // NOLINT: the table, once built

  static O& self(SystemOptions& o) { return static_cast<O&>(o); }
  static const O& self(const SystemOptions& o) { return static_cast<const O&>(o); }

 private:
  Fields& add(OptionField f) {
    fields_.push_back(std::move(f));
    return *this;
  }
  std::vector<OptionField> fields_;
};

}  // namespace st::train
