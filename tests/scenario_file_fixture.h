#pragma once
// The fixture of the scenario-file suites (scenario_test.cc,
// scenario_system_options_test.cc): a valid scenario whose sections a test
// replaces, written to a folder of the test process's own, and the errors
// that loading a changed one must give.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "apps/backends.h"
#include "apps/scenario.h"

namespace st::apps {
namespace fs = std::filesystem;

// A valid scenario, section by section (in this order, so line numbers are
// fixed): clusters 1-3, links 4-6, model 7, dataset 8, systems 9-11,
// target_accuracy 12, budget 13; extra text starts at line 14.
inline const std::vector<std::pair<std::string, std::string>> kSections = {
    {"clusters", "clusters:\n  - {name: a, nodes: 1, gpus_per_node: 2}\n  - {name: b, nodes: 1, gpus_per_node: 2}\n"},
    {"links", "links:\n  wan:\n    default: {mbps: 100, delay_ms: 20}\n"},
    {"model", "model: mlp\n"},
    {"dataset", "dataset: synthetic\n"},
    {"systems", "systems:\n  - stellatrain\n  - ddp\n"},
    {"target_accuracy", "target_accuracy: 0.5\n"},
    {"budget", "budget: {iterations: 10}\n"},
};

class ScenarioFile : public ::testing::Test {
 protected:
  // One folder per test process: ctest runs the cases of this suite in
  // parallel processes, which must not write each other's files.
  static fs::path temp(const std::string& name) {
    const auto dir = fs::path(::testing::TempDir()) / ("scenario_test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir / name;
  }

  // The base scenario with sections replaced ("" removes one) and `extra` appended.
  static std::string text(const std::map<std::string, std::string>& replaced = {}, const std::string& extra = "") {
    std::string out;
    for (const auto& [key, section] : kSections) out += replaced.count(key) ? replaced.at(key) : section;
    return out + extra;
  }

  static std::string write(const std::string& content, const std::string& name = "scenario_test.yaml") {
    const auto path = temp(name);
    std::ofstream(path) << content;
    return path.string();
  }

  // The error message of loading `content`, or "" when it loads.
  static std::string error_of(const std::string& content) {
    try {
      load_scenario(write(content));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }

  static std::string backend_error(const Scenario& s, const std::string& backend) {
    try {
      check_backend(s, backend);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

struct Case {
  std::string content;
  std::string expected;  // a part of the message
};

inline void expect_errors(const std::vector<Case>& cases, const std::function<std::string(const std::string&)>& error_of) {
  for (const auto& c : cases) {
    const auto message = error_of(c.content);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in '" << message << "' for:\n" << c.content;
    EXPECT_NE(message.find("scenario_test.yaml"), std::string::npos) << message;
  }
}

}  // namespace st::apps
