// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/op_queues.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tessera::exec {
namespace {

TEST(OpQueues, EachKeyIsFirstInFirstOut) {
  OpQueues q;
  const P2PKey a{0, 1, 7};
  const P2PKey b{1, 0, 7};  // the other direction, same tag: a queue of its own
  EXPECT_EQ(q.front(a), OpQueues::kNone);
  q.push(a, 4);
  q.push(b, 2);
  q.push(a, 9);
  q.push(a, 1);
  EXPECT_EQ(q.front(a), 4U);
  EXPECT_EQ(q.front(b), 2U);
  q.remove(a, 4);
  EXPECT_EQ(q.front(a), 9U);
  q.remove(b, 2);
  EXPECT_EQ(q.front(b), OpQueues::kNone);
  q.push(a, 2);  // an id used under another key before
  q.remove(a, 9);
  q.remove(a, 1);
  EXPECT_EQ(q.front(a), 2U);
}

TEST(OpQueues, RemovesFromTheMiddleAndTheBack) {
  OpQueues q;
  const P2PKey k{3, 5, -1};
  for (std::uint32_t id : {10U, 11U, 12U}) {
    q.push(k, id);
  }
  q.remove(k, 11);  // middle
  q.remove(k, 12);  // back: the next push goes behind 10
  q.push(k, 13);
  EXPECT_EQ(q.front(k), 10U);
  q.remove(k, 10);
  EXPECT_EQ(q.front(k), 13U);
  q.remove(k, 13);
  EXPECT_EQ(q.front(k), OpQueues::kNone);
  EXPECT_THROW(q.remove(k, 13), base::InternalError);
  q.push(k, 1);
  EXPECT_THROW(q.remove(k, 2), base::InternalError);
}

}  // namespace
}  // namespace tessera::exec
