// SPDX-License-Identifier: Apache-2.0
#include "sim/models/network/flow_network_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "base/error.h"

namespace tessera::models {
namespace {

// Records when each token's transfer finished.
class Finishes : public TransferListener {
 public:
  explicit Finishes(kernel::Scheduler& s) : s_(s) {}
  void on_transfer_done(std::uint64_t token) override { at[token] = s_.now(); }
  std::map<std::uint64_t, base::SimTime> at;

 private:
  kernel::Scheduler& s_;
};

// Starts planned transfers at planned times; the token is the plan index.
class Launcher : public kernel::EventHandler {
 public:
  struct Plan {
    base::SimTime at;
    PathId path;
    double bytes;
  };
  Launcher(kernel::Scheduler& s, FlowNetworkModel& net, TransferListener& l,
           std::vector<Plan> plans)
      : net_(net), l_(l), plans_(std::move(plans)) {
    std::uint32_t id = s.add_handler(*this);
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      s.schedule(plans_[i].at, id, 0, i);
    }
  }
  void handle(const kernel::Event& e) override {
    const Plan& p = plans_[e.payload];
    net_.start(p.path, p.bytes, l_, e.payload);
  }

 private:
  FlowNetworkModel& net_;
  TransferListener& l_;
  std::vector<Plan> plans_;
};

TEST(PathTable, FoldsPrivateLinksAndSharedLinksExactly) {
  // Links: 0 (cap 4), 1 (cap 2), 2 (cap 8), 3 (cap 1).
  PathTable t({4.0, 2.0, 8.0, 1.0});
  PathId a = t.add({{0, 1}, {1, 2}, {2, 1}});  // private 0 (4/1) and 1 (2/2): min 1
  PathId b = t.add({{2, 3}, {3, 1}, {3, 1}});  // link 3 listed twice: multiplicity 2
  t.finalize();
  EXPECT_EQ(t.physical_uses(b).size(), 2U);
  EXPECT_EQ(t.physical_uses(b)[1].mult, 2);
  ASSERT_EQ(t.virtual_uses(a).size(), 2U);  // private + shared link 2
  ASSERT_EQ(t.virtual_uses(b).size(), 2U);  // shared link 2 + private (1/2)
  EXPECT_DOUBLE_EQ(t.vlink_capacity(t.virtual_uses(a)[0].link), 1.0);
  EXPECT_DOUBLE_EQ(t.vlink_capacity(t.virtual_uses(a)[1].link), 8.0);
  EXPECT_EQ(t.virtual_uses(b)[0].mult, 3);
  EXPECT_DOUBLE_EQ(t.vlink_capacity(t.virtual_uses(b)[1].link), 0.5);
}

TEST(MaxMinSolver, SharesBottlenecksAndGivesLeftoversToOthers) {
  // Link 0 cap 1.0 shared by A and B; link 1 cap 10 shared by B and C.
  PathTable t({1.0, 10.0, 100.0});
  PathId a = t.add({{0, 1}});
  PathId b = t.add({{0, 1}, {1, 1}});
  PathId c = t.add({{1, 1}, {2, 1}});
  t.finalize();
  MaxMinSolver solver(t);
  std::vector<double> rates;
  solver.solve({a, b, c}, rates);
  EXPECT_DOUBLE_EQ(rates[0], 0.5);
  EXPECT_DOUBLE_EQ(rates[1], 0.5);
  EXPECT_DOUBLE_EQ(rates[2], 9.5);
}

// Max-min fairness on the physical links: every link is within capacity, and every transfer
// crosses a saturated link on which no transfer moves faster than it does.
TEST(MaxMinSolver, RandomInstancesAreFeasibleAndEveryTransferHasABottleneck) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int links = 2 + static_cast<int>(rng() % 12);
    std::vector<double> cap;
    for (int l = 0; l < links; ++l) {
      cap.push_back(0.5 + static_cast<double>(rng() % 8));
    }
    PathTable t(cap);
    const int paths = 1 + static_cast<int>(rng() % 10);
    for (int p = 0; p < paths; ++p) {
      std::vector<LinkUse> uses;
      const int hops = 1 + static_cast<int>(rng() % 4);
      for (int h = 0; h < hops; ++h) {
        uses.push_back({static_cast<std::int32_t>(rng() % links), 1 + static_cast<int>(rng() % 3)});
      }
      t.add(uses);
    }
    t.finalize();
    std::vector<PathId> active;
    for (int i = 0; i < 12; ++i) {
      active.push_back(static_cast<PathId>(rng() % static_cast<unsigned>(paths)));
    }
    std::vector<double> rates;
    MaxMinSolver(t).solve(active, rates);
    std::vector<double> load(cap.size(), 0.0);
    std::vector<double> fastest(cap.size(), 0.0);
    for (std::size_t i = 0; i < active.size(); ++i) {
      ASSERT_GT(rates[i], 0.0);
      for (const LinkUse& u : t.physical_uses(active[i])) {
        load[static_cast<std::size_t>(u.link)] += rates[i] * u.mult;
        fastest[static_cast<std::size_t>(u.link)] =
            std::max(fastest[static_cast<std::size_t>(u.link)], rates[i]);
      }
    }
    for (std::size_t l = 0; l < cap.size(); ++l) {
      EXPECT_LE(load[l], cap[l] * (1 + 1e-9)) << "trial " << trial << " link " << l;
    }
    for (std::size_t i = 0; i < active.size(); ++i) {
      bool has_bottleneck = false;
      for (const LinkUse& u : t.physical_uses(active[i])) {
        auto l = static_cast<std::size_t>(u.link);
        has_bottleneck |= load[l] >= cap[l] * (1 - 1e-9) && fastest[l] <= rates[i] * (1 + 1e-9);
      }
      EXPECT_TRUE(has_bottleneck) << "trial " << trial << " transfer " << i;
    }
  }
}

TEST(FlowNetworkModel, TwoTransfersOnOneLinkGetHalfAThirdElsewhereIsUnaffected) {
  PathTable t({0.1, 0.1});  // 0.1 bytes/ps = 100 GB/s per link
  PathId shared = t.add({{0, 1}});
  PathId other = t.add({{1, 1}});
  t.finalize();
  kernel::Scheduler s;
  FlowNetworkModel net(s, t);
  Finishes done(s);
  Launcher go(s, net, done, {{0, shared, 1e6}, {0, shared, 1e6}, {0, other, 1e6}});
  s.run();
  EXPECT_EQ(done.at[0], 20'000'000);  // 1 MB at 50 GB/s
  EXPECT_EQ(done.at[1], 20'000'000);
  EXPECT_EQ(done.at[2], 10'000'000);  // 1 MB at 100 GB/s
  EXPECT_EQ(net.recomputes(), 3U);    // the three starts together, then once per end time
}

TEST(FlowNetworkModel, RatesFollowTheSetOfTransfers) {
  PathTable t({0.1, 0.1});
  PathId shared = t.add({{0, 1}});
  PathId other = t.add({{1, 1}});
  t.finalize();
  kernel::Scheduler s;
  FlowNetworkModel net(s, t);
  Finishes done(s);
  Launcher go(s, net, done,
              {{0, shared, 1e6}, {0, shared, 2e6}, {0, other, 1e6}, {5'000'000, other, 1e6}});
  s.run();
  // 0 and 1 share link 0 at 0.05 B/ps: 0 (1 MB) ends at 20 us; 1 then has 1 MB left alone
  // at 0.1 B/ps: ends at 30 us.
  EXPECT_EQ(done.at[0], 20'000'000);
  EXPECT_EQ(done.at[1], 30'000'000);
  // 2 runs alone for 5 us (0.5 MB), then shares with 3: 0.5 MB at 0.05 B/ps -> 15 us.
  EXPECT_EQ(done.at[2], 15'000'000);
  // 3: 0.5 MB by 15 us, then 0.5 MB alone -> 20 us.
  EXPECT_EQ(done.at[3], 20'000'000);
  EXPECT_EQ(net.active(), 0U);
}

TEST(PathTable, LinkWithoutBandwidthIsAnInputError) {
  PathTable t({0.0});
  t.add({{0, 1}});
  EXPECT_THROW(t.finalize(), base::InputError);
}

}  // namespace
}  // namespace tessera::models
