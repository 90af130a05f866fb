#pragma once
namespace CLI {
class App;
}
namespace st::apps {
// `stellatrain data convert|check`: dataset files of one's own
// (core/data/npz_dataset.h, docs/byo.md).
void add_data_command(CLI::App& app);
}  // namespace st::apps
