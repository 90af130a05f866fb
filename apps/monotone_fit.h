#pragma once
// Time to accuracy read from the monotone fit of a run's evaluations, beside
// the first evaluation at or above the target (docs/runner.md, "Two
// readings of TTA"). Near a plateau one evaluation's sampling noise moves
// the first crossing by tens of iterations, and any upward excursion counts,
// so that reading errs early; the least-squares non-decreasing fit
// (isotonic regression) pools a high evaluation with the lower ones after
// it, so one lucky evaluation no longer decides. analysis/monotone_tta.py
// reads the same from results folders (and checks it against this one in
// tests/run_e2e_test.sh).
#include <cstddef>
#include <optional>
#include <vector>

namespace st::apps {

// The least-squares non-decreasing fit of `values`, by pooling adjacent
// violators. Written out: it is a dozen lines, and neither Eigen nor any
// other library the project uses has it.
std::vector<double> isotonic_fit(const std::vector<double>& values);

// The index of the first value at or above `target`, or nothing.
std::optional<std::size_t> first_reaching(const std::vector<double>& values, double target);

// The index at which the isotonic fit of `values` first reaches `target`, or
// nothing. Never before first_reaching(values, target): the fit's first
// block that reaches the target starts at or after the first value that does.
std::optional<std::size_t> fit_reaching(const std::vector<double>& values, double target);

}  // namespace st::apps
