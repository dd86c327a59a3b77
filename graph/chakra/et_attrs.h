// SPDX-License-Identifier: Apache-2.0
// AttributeProto -> EtAttr: every value variant folded into the neutral kinds (any integer
// variant becomes kInt, float and double kFloat, string and bytes kString).
#pragma once

#include "graph/chakra/et_def.pb.h"
#include "graph/chakra/et_trace.h"

namespace tessera::graph::chakra {

EtAttr to_attr(const ChakraProtoMsg::AttributeProto& p);

}  // namespace tessera::graph::chakra
