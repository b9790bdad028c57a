#include "engine/op_registry.h"

namespace octet {

void register_qconv_ops(OpTable&) {}

}  // namespace octet
