#pragma once
// Where the training samples live when they do not all live everywhere:
// label skew across nodes, the usual stand-in for geo-distributed data
// (each site sees mostly its own kinds of images).
//
// Class c's home is node c mod N. With skew s, a fraction s of class c's
// samples lives at its home and the rest is spread over all N nodes in
// proportion to their workers (so s = 0 puts an even share of every class
// at every node, and s = 1 gives each node only its own classes). The
// placement is fixed: the same for every seed and every system of a
// scenario, as the data of real sites would be, and drawn from a seeded
// permutation (core/data/random.h) so it is identical on every platform.
// Torch-free except for Dataset's label lookup.
#include <cstddef>
#include <vector>

namespace st::data {

class Dataset;

// The sorted training-set indices that node `node` holds. `node_workers`
// has one entry per node (its workers, each >= 1). Throws
// std::invalid_argument naming label_skew when skew is outside [0, 1], or
// when a node would hold fewer samples than it has workers (e.g. skew 1
// with more nodes than classes).
std::vector<std::size_t> label_skewed_samples(const Dataset& train, const std::vector<int>& node_workers, int node,
                                              double skew);

// The same from the samples' labels alone (label[i] in 0..classes-1), for
// callers and tests that have no Dataset.
std::vector<std::size_t> label_skewed_samples(const std::vector<long long>& labels, long long classes,
                                              const std::vector<int>& node_workers, int node, double skew);

}  // namespace st::data
