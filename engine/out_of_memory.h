#pragma once
// An allocation the engine could not make, with the message a user acts on ("the activations
// of this plan need N MiB ..."). An ir::Error for the CLI; bindings that distinguish memory
// failures (Python's MemoryError) catch it by this type.
#include "core/ir.h"

namespace octet {

struct OutOfMemoryError : ir::Error {
  using ir::Error::Error;
};

}  // namespace octet
