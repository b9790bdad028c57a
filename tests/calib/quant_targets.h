#pragma once
// The quantization targets the calib tests share: uint8 asymmetric, int8 asymmetric and int8
// symmetric narrow range ([-127, 127], ORT's weights).
#include "calib/qparams.h"

namespace octet::calib::test_targets {

inline const QuantTarget kU8{QType::u8, false, false};
inline const QuantTarget kS8{QType::s8, false, false};
inline const QuantTarget kS8SymNarrow{QType::s8, true, true};

}  // namespace octet::calib::test_targets
