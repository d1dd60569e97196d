// The plan behind tessera::Plan: a copy plan (copy_plan.hpp; the copying operations) or a reduce
// plan (reduce.hpp; their gradients), made once by its planner and run by its executor
// (executor.hpp, reduce_executor.cpp). Internal; no Highway, no TBB here.
#ifndef TESSERA_LIB_PLAN_HPP
#define TESSERA_LIB_PLAN_HPP

#include <utility>
#include <variant>

#include "copy_plan.hpp"
#include "reduce.hpp"

namespace tessera::detail {

/// A visitor made of lambdas, one per kind of plan: std::visit(Overloaded{...}, data.plan) calls the
/// one that takes the plan's kind.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

/// What a tessera::Plan holds: one plan of either kind, as its planner made it.
struct PlanData {
  PlanData(CopyPlan p) : plan(std::move(p)) {}    // NOLINT: implicit, as the variant's
  PlanData(ReducePlan p) : plan(std::move(p)) {}  // NOLINT: implicit

  std::variant<CopyPlan, ReducePlan> plan;

  /// What both kinds have (Plan's accessors).
  const PlanBase& base() const noexcept {
    return std::visit([](const auto& p) -> const PlanBase& { return p; }, plan);
  }
};

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PLAN_HPP
