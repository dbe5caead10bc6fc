#pragma once
// "What would change the answer": the inputs a plan is most sensitive to, computed by re-estimating
// the plan with each input moved one step (doubled, halved, the next option), not canned.

#include "plan.h"
#include "scenario.h"

#include <string>
#include <vector>

namespace napkin::core {

struct Sensitivity {
    std::string input;   // "training.micro_batch"
    std::string change;  // "1 → 2"
    double memoryBefore = 0, memoryAfter = 0; // per-GPU total, bytes
    double daysBefore = 0, daysAfter = 0;
    bool fitsBefore = false, fitsAfter = false;
    double score = 0;    // max relative change of memory and days; +1 when it flips fits
};

// The top `count` single-input changes, largest effect first.
std::vector<Sensitivity> sensitivities(const Scenario& scenario, std::size_t count = 3);

} // namespace napkin::core
